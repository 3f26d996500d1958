//! The form a recording is in, told from its first line: JSON lines, SSE
//! text, an array of events or of messages, an export document, or
//! pretty-printed objects.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON record per line (bus events, `opencode run --format json`,
    /// ocview recordings, Durable Stream events).
    JsonLines,
    Sse,
    /// A JSON array of records, as editor plugins save recordings.
    EventArray,
    /// `GET /session/:id/message`: an array of `{info, parts}`.
    MessageList,
    /// `opencode export` (`{info, messages}`), alone or in an array.
    Document,
    /// JSON objects one after another, each over several lines (`jq .`).
    PrettyObjects,
}

impl Format {
    /// What the form is called in the dump's summary and in diagnoses.
    pub fn label(self) -> &'static str {
        match self {
            Format::JsonLines => "JSON lines",
            Format::Sse => "SSE text",
            Format::EventArray => "JSON array of events",
            Format::MessageList => "message list (GET /session/:id/message)",
            Format::Document => "opencode export document",
            Format::PrettyObjects => "pretty-printed JSON objects",
        }
    }

    /// Read by cutting JSON values out of the text, not line by line.
    pub(crate) fn is_values(self) -> bool {
        matches!(
            self,
            Format::EventArray | Format::MessageList | Format::Document | Format::PrettyObjects
        )
    }
}

/// The form of a recording, from its first non-blank line.
pub fn detect(first: &[u8]) -> Format {
    const SSE_FIELDS: [&[u8]; 5] = [b"data:", b":", b"event:", b"id:", b"retry:"];
    let compact: Vec<u8> = first
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if SSE_FIELDS.iter().any(|f| first.starts_with(f)) {
        Format::Sse
    } else if compact.starts_with(b"[") {
        Format::EventArray
    } else if [&b"{\"info\":"[..], b"{\"messages\":"]
        .iter()
        .any(|start| compact.starts_with(start))
    {
        Format::Document
    } else if compact.starts_with(b"{") && matches!(compact.last(), Some(b'{' | b'[' | b',')) {
        // `{` alone, or an object whose first line goes on: `jq .` output.
        Format::PrettyObjects
    } else {
        Format::JsonLines
    }
}
