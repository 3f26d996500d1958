//! A Server-Sent Events decoder that works on bytes.
//!
//! Hand-written on purpose: the `eventsource-stream` crate keeps bytes after
//! an invalid UTF-8 sequence buffered forever, so one bad byte stalls the
//! whole stream. This decoder follows the WHATWG parsing rules (lines end in
//! LF, CRLF or CR; `:` starts a comment; one space after the colon is
//! dropped; `data` lines join with LF; a blank line dispatches) and decodes
//! each frame's data on its own, lossily.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
    /// Some bytes of the frame were not UTF-8 and became U+FFFD.
    pub repaired: bool,
    /// Line number (1-based) of the frame's first field line.
    pub line: u64,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of an unfinished line (chunk API only).
    partial: Vec<u8>,
    /// The previous chunk ended with CR: a leading LF belongs to that line end.
    after_cr: bool,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    line: u64,
    first_line: u64,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed an arbitrary chunk of the stream; complete frames go to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseFrame>) {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(b'\n') = rest.first() {
                rest = &rest[1..];
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..i]);
            let ended_with_cr = rest[i] == b'\r';
            rest = &rest[i + 1..];
            if ended_with_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    _ => {}
                }
            }
            if let Some(frame) = self.push_line(&line) {
                out.push(frame);
            }
        }
        self.partial.extend_from_slice(rest);
    }

    /// Feed one complete line (without its ending).
    pub fn push_line(&mut self, line: &[u8]) -> Option<SseFrame> {
        self.line += 1;
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        if !self.has_data && self.event.is_none() && self.id.is_none() {
            self.first_line = self.line;
        }
        match name {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // An id containing NUL is ignored, per the spec.
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned())
            }
            _ => {}
        }
        None
    }

    /// End of stream: a frame without its blank line is incomplete and dropped,
    /// as the spec says; the caller can tell from this flag.
    pub fn has_incomplete_frame(&self) -> bool {
        self.has_data || !self.partial.is_empty()
    }

    fn dispatch(&mut self) -> Option<SseFrame> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        let bytes = std::mem::take(&mut self.data);
        let (data, repaired) = match String::from_utf8(bytes) {
            Ok(s) => (s, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        };
        Some(SseFrame {
            event,
            // The last event id persists across frames, per the spec.
            id: self.id.clone(),
            data,
            repaired,
            line: self.first_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Vec<SseFrame> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.push(input, &mut out);
        out
    }

    fn strip_lines(frames: Vec<SseFrame>) -> Vec<SseFrame> {
        frames
            .into_iter()
            .map(|f| SseFrame { line: 0, ..f })
            .collect()
    }

    const SAMPLE: &[u8] = b": comment\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: line1\ndata:line2\nid: 7\n\ndata: \xe2\x82\xac\r\rdata\n\n";

    #[test]
    fn decodes_fields_comments_crlf_and_multiline() {
        let frames = decode_all(SAMPLE);
        assert_eq!(frames.len(), 4);
        assert_eq!(frames[0].data, "{\"a\":1}");
        assert_eq!(frames[0].line, 2);
        assert_eq!(frames[1].event.as_deref(), Some("x"));
        assert_eq!(frames[1].data, "line1\nline2");
        assert_eq!(frames[1].id.as_deref(), Some("7"));
        assert_eq!(frames[2].data, "€");
        assert_eq!(frames[3].data, "");
    }

    #[test]
    fn same_frames_for_every_split_point() {
        let whole = strip_lines(decode_all(SAMPLE));
        for cut in 0..=SAMPLE.len() {
            let mut d = SseDecoder::new();
            let mut out = Vec::new();
            d.push(&SAMPLE[..cut], &mut out);
            d.push(&SAMPLE[cut..], &mut out);
            assert_eq!(strip_lines(out), whole, "split at {cut}");
        }
        // And one byte at a time.
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for b in SAMPLE {
            d.push(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(strip_lines(out), whole);
    }

    #[test]
    fn invalid_utf8_is_repaired_and_does_not_stall() {
        let frames = decode_all(b"data: a\xffb\n\ndata: next\n\n");
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].data, "a\u{fffd}b");
        assert!(frames[0].repaired);
        assert_eq!(frames[1].data, "next");
    }

    #[test]
    fn unterminated_frame_is_reported() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.push(b"data: partial", &mut out);
        assert!(out.is_empty());
        assert!(d.has_incomplete_frame());
    }
}
