//! The replay source: a recorded stream, read record by record in constant
//! memory and fed through the same reducer as live data.
//!
//! The format is detected from the content: SSE text (`data:` lines) or JSON
//! lines of any shape `record::decode` accepts.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use super::lines::{LineReader, decode_utf8};
use super::record::{self, Decoded, RecordError};
use super::sse::SseDecoder;
use super::stats::{IngestStats, ProblemKind};
use crate::model::{Outcome, ReplyObserver, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    JsonLines,
    Sse,
    /// One JSON document: `opencode export` (`{info, messages}`).
    Document,
}

/// One record of a recording, decoded.
#[derive(Debug)]
pub struct Record {
    /// Line number (1-based) of the record, or of an SSE frame's first line.
    pub line: u64,
    /// Set when the record had to be cured before use.
    pub repaired: Option<&'static str>,
    pub item: Result<Decoded, RecordError>,
}

impl Record {
    /// When the record happened (ms since the epoch), if it says.
    pub fn time(&self) -> Option<i64> {
        match &self.item {
            Ok(Decoded::Event(env)) => env.received_ms,
            Ok(Decoded::Run(run)) => run.timestamp,
            Ok(Decoded::Durable(event)) => event.timestamp,
            _ => None,
        }
    }
}

pub struct ReplayReader<R> {
    lines: LineReader<R>,
    format: Option<Format>,
    buf: Vec<u8>,
    sse: SseDecoder,
    frames: Vec<super::sse::SseFrame>,
    /// A whole document being collected (`Format::Document`).
    doc: Vec<u8>,
    queue: VecDeque<Record>,
    done: bool,
}

impl<R: BufRead> ReplayReader<R> {
    pub fn new(inner: R) -> Self {
        ReplayReader {
            lines: LineReader::new(inner),
            format: None,
            buf: Vec::new(),
            sse: SseDecoder::new(),
            frames: Vec::new(),
            doc: Vec::new(),
            queue: VecDeque::new(),
            done: false,
        }
    }

    /// The detected format, once the first non-blank line was read.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// The next record; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let format = &mut self.format;
            let sse = &mut self.sse;
            let frames = &mut self.frames;
            let queue = &mut self.queue;
            let doc = &mut self.doc;
            let step = self.lines.read_with(&mut self.buf, |line, info| {
                // Editors on some systems start a UTF-8 file with a BOM.
                let line = match info.number {
                    1 => line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line),
                    _ => line,
                };
                let format = match *format {
                    Some(f) => f,
                    None => {
                        let trimmed = line.trim_ascii_start();
                        if trimmed.is_empty() {
                            return None;
                        }
                        *format.insert(detect(trimmed))
                    }
                };
                if info.too_long {
                    return Some(Record {
                        line: info.number,
                        repaired: None,
                        item: Err(RecordError(format!(
                            "line longer than {} bytes, skipped",
                            super::lines::MAX_LINE_BYTES
                        ))),
                    });
                }
                match format {
                    Format::Document => {
                        doc.extend_from_slice(line);
                        doc.push(b'\n');
                        None
                    }
                    Format::JsonLines => (!line.trim_ascii().is_empty())
                        .then(|| decode_record(line, info.number, info.terminated)),
                    Format::Sse => {
                        // Give the decoder the line's real ending: CR, LF
                        // and CRLF all end a line in SSE, and a CR the line
                        // reader dropped may be the blank line of a frame.
                        sse.push(line, frames);
                        let ending: &[u8] = match (info.cr, info.terminated) {
                            (true, true) => b"\r\n",
                            (true, false) => b"\r",
                            (false, true) => b"\n",
                            (false, false) => b"",
                        };
                        sse.push(ending, frames);
                        for frame in frames.drain(..) {
                            queue.push_back(frame.record());
                        }
                        None
                    }
                }
            })?;
            match step {
                None => {
                    self.done = true;
                    if self.format == Some(Format::Document) {
                        let doc = std::mem::take(&mut self.doc);
                        self.queue.extend(super::export_format::records(&doc));
                    }
                    if self.format == Some(Format::Sse) && self.sse.has_incomplete_frame() {
                        self.queue.push_back(Record {
                            line: self.lines_read(),
                            repaired: None,
                            item: Err(RecordError(
                                "truncated last SSE frame (no blank line)".into(),
                            )),
                        });
                    }
                }
                Some(Some(record)) => return Ok(Some(record)),
                Some(None) => {}
            }
        }
    }

    fn lines_read(&self) -> u64 {
        self.lines.lines_read()
    }
}

impl<R: BufRead> Iterator for ReplayReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

pub(crate) fn detect(first: &[u8]) -> Format {
    const SSE_FIELDS: [&[u8]; 5] = [b"data:", b":", b"event:", b"id:", b"retry:"];
    let compact: Vec<u8> = first
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if SSE_FIELDS.iter().any(|f| first.starts_with(f)) {
        Format::Sse
    } else if compact == b"{"
        || compact == b"["
        || [&b"{\"info\":"[..], b"{\"messages\":", b"[{\"info\":"]
            .iter()
            .any(|start| compact.starts_with(start))
    {
        Format::Document
    } else {
        Format::JsonLines
    }
}

/// Decode one JSON record, curing invalid UTF-8 and lone surrogates.
pub fn decode_record(bytes: &[u8], line: u64, terminated: bool) -> Record {
    let (text, lossy) = decode_utf8(bytes);
    let mut repaired = lossy.then_some("invalid UTF-8 replaced");
    let mut item = record::decode(&text);
    if let Err(e) = &item
        && record::is_surrogate_error(e)
        && let Some(fixed) = record::repair_surrogates(&text)
    {
        item = record::decode(&fixed);
        if item.is_ok() {
            repaired = Some("lone UTF-16 surrogate replaced");
        }
    }
    if let Err(e) = &mut item
        && !terminated
    {
        e.0 = format!("truncated last line ({})", e.0);
    }
    Record {
        line,
        repaired,
        item,
    }
}

/// Feed every record of a recording to the store, counting as it goes.
pub fn ingest<R: BufRead>(
    reader: &mut ReplayReader<R>,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
) -> io::Result<IngestStats> {
    let mut stats = IngestStats::default();
    while let Some(record) = reader.next_record()? {
        apply_record(record, store, obs, &mut stats);
    }
    Ok(stats)
}

/// Apply one record and count the result; the unit every source shares.
pub fn apply_record(
    record: Record,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
    stats: &mut IngestStats,
) -> Option<Outcome> {
    if let Some(why) = record.repaired
        && record.item.is_ok()
    {
        stats.problem(record.line, ProblemKind::Repaired, why);
    }
    match record.item {
        Ok(Decoded::Event(env)) => {
            let outcome = store.apply(env, obs);
            stats.count(record.line, &outcome);
            return Some(outcome);
        }
        Ok(Decoded::Skip(_)) => stats.skipped += 1,
        Ok(Decoded::Run(run)) => {
            let mut last = None;
            for env in run_events(*run, store) {
                let outcome = store.apply(env, obs);
                stats.count(record.line, &outcome);
                last = Some(outcome);
            }
            return last;
        }
        Ok(Decoded::Durable(event)) => {
            let mut last = None;
            for env in super::durable::durable_events(*event, store) {
                let outcome = store.apply(env, obs);
                stats.count(record.line, &outcome);
                last = Some(outcome);
            }
            return last;
        }
        Err(e) => stats.problem(record.line, ProblemKind::Malformed, e.0),
    }
    None
}

/// The events a line of `opencode run --format json` stands for. It names
/// only the session and the part: the session and the assistant message
/// are announced the first time they are seen, so the part has a home.
pub(super) fn run_events(
    run: super::record::RunLine,
    store: &Store,
) -> Vec<crate::model::Envelope> {
    use crate::model::{Envelope, Event, MessageInfo, SessionInfo};
    let mut out = Vec::new();
    let at = run.timestamp.unwrap_or(0);
    let envelope = |event| Envelope {
        received_ms: run.timestamp,
        ..Envelope::new(event)
    };
    if store.session(&run.session_id).is_none() {
        let info = serde_json::json!({"id": run.session_id, "title": "opencode run", "time": {"created": at, "updated": at}});
        if let Ok(raw) = serde_json::value::to_raw_value(&info)
            && let Ok(info) = SessionInfo::from_raw(&raw)
        {
            out.push(envelope(Event::SessionCreated(Box::new(info))));
        }
    }
    if let Some(part) = run.part {
        let known = store
            .session(&run.session_id)
            .is_some_and(|s| s.message(&part.message_id).is_some());
        if !known {
            let info = serde_json::json!({"id": part.message_id, "sessionID": run.session_id, "role": "assistant", "time": {"created": at}});
            if let Ok(raw) = serde_json::value::to_raw_value(&info)
                && let Ok(info) = MessageInfo::from_raw(&raw)
            {
                out.push(envelope(Event::MessageUpdated(Box::new(info))));
            }
        }
        out.push(envelope(Event::PartUpdated(Box::new(part))));
    }
    if let Some(error) = run.error {
        out.push(envelope(Event::SessionError {
            session_id: Some(run.session_id),
            error,
        }));
    }
    out
}
