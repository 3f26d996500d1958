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
    /// The frame's data passed the decoder's limit: it was dropped, not
    /// buffered, and `data` is empty.
    pub oversized: bool,
}

/// The most a frame's data (or one line) may hold by default: one bad
/// frame must not grow the buffer without bound.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// A line past this many bytes is given its limit's room at once.
const LONG_LINE: usize = 1 << 20;

/// Room in `buf` for `more` bytes, `max` at most in all. Doubling a long
/// line's buffer copies it into one twice as large, which held both at
/// once (mimalloc grows no large block in place: a line dropped at the
/// 64 MB limit peaked 35 MB higher than with the system's allocator). Room
/// reserved is not memory used until it is written.
fn room_for(buf: &mut Vec<u8>, more: usize, max: usize) {
    let need = buf.len() + more;
    if need > buf.capacity() && need > LONG_LINE {
        buf.reserve_exact(max.max(need) - buf.len());
    }
}

impl SseFrame {
    /// The frame as a record: decoded, or why it could not be.
    pub fn record(&self) -> crate::source::decode::apply::Record {
        if self.oversized {
            return crate::source::decode::apply::Record {
                line: self.line,
                repaired: None,
                item: Err(crate::source::decode::record::RecordError::too_long(
                    "SSE frame larger than the limit, skipped",
                )),
            };
        }
        let mut record =
            crate::source::decode::apply::decode_record(self.data.as_bytes(), self.line, true);
        if self.repaired && record.repaired.is_none() {
            record.repaired = Some("invalid UTF-8 replaced");
        }
        record
    }
}

#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of an unfinished line (chunk API only).
    partial: Vec<u8>,
    /// The unfinished line passed the limit: its bytes are being dropped.
    skipping_line: bool,
    /// The current frame passed the limit: it is dropped at its end.
    oversized: bool,
    max: usize,
    /// The previous chunk ended with CR: a leading LF belongs to that line end.
    after_cr: bool,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    line: u64,
    first_line: u64,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limit(MAX_FRAME_BYTES)
    }
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that drops any frame whose data, or any line, is longer
    /// than `max` bytes (reported as an oversized frame).
    pub fn with_limit(max: usize) -> Self {
        SseDecoder {
            partial: Vec::new(),
            skipping_line: false,
            oversized: false,
            max,
            after_cr: false,
            data: Vec::new(),
            has_data: false,
            event: None,
            id: None,
            line: 0,
            first_line: 0,
        }
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
            if self.skipping_line || line.len() + i > self.max {
                // Too long: counted as an oversized data line, not kept.
                line.clear();
                line.extend_from_slice(b"data");
                self.oversized = true;
                self.skipping_line = false;
            } else {
                line.extend_from_slice(&rest[..i]);
            }
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
        if self.skipping_line || self.partial.len() + rest.len() > self.max {
            self.partial = Vec::new();
            self.skipping_line = true;
        } else {
            room_for(&mut self.partial, rest.len(), self.max);
            self.partial.extend_from_slice(rest);
        }
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
            b"data" if self.oversized || self.data.len() + value.len() + 1 > self.max => {
                self.oversized = true;
                self.data = Vec::new();
                self.has_data = true;
            }
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
        self.has_data || !self.partial.is_empty() || self.skipping_line
    }

    /// End of a saved stream: the frame left without its blank line, as if
    /// the blank line had come. A live stream drops such a frame (the
    /// spec's rule); a file whose capture stopped there is read to its end.
    pub fn finish(&mut self) -> Option<SseFrame> {
        if std::mem::take(&mut self.skipping_line) {
            self.oversized = true;
            self.has_data = true;
            self.partial.clear();
        }
        let partial = std::mem::take(&mut self.partial);
        if !partial.is_empty() {
            self.push_line(&partial);
        }
        self.dispatch()
    }

    fn dispatch(&mut self) -> Option<SseFrame> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        if std::mem::take(&mut self.oversized) {
            self.data = Vec::new();
            return Some(SseFrame {
                event,
                id: self.id.clone(),
                data: String::new(),
                repaired: false,
                line: self.first_line,
                oversized: true,
            });
        }
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
            oversized: false,
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
    fn a_long_line_is_given_its_room_once_not_copied_as_it_doubles() {
        let max = 8 << 20;
        let mut d = SseDecoder::with_limit(max);
        let mut out = Vec::new();
        d.push(b"data: ", &mut out);
        let chunk = vec![b'x'; 64 << 10];
        let mut rooms = std::collections::BTreeSet::new();
        while d.partial.len() < 6 << 20 {
            d.push(&chunk, &mut out);
            if d.partial.len() > LONG_LINE {
                rooms.insert(d.partial.capacity());
            }
        }
        // Past a megabyte, the buffer grows once more: to its limit.
        let rooms: Vec<usize> = rooms.into_iter().collect();
        assert_eq!(rooms.last(), Some(&max), "{rooms:?}");
        assert!(rooms.len() <= 2 && rooms[0] <= 2 * LONG_LINE, "{rooms:?}");
        d.push(b"\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 6 << 20);
    }

    #[test]
    fn an_oversized_frame_is_dropped_and_the_next_decodes() {
        // Over the limit within one line, across data lines, and a line
        // fed in pieces that never ends within the limit.
        for input in [
            &b"data: 0123456789abcdef\n\ndata: ok\n\n"[..],
            b"data: 01234567\ndata: 89abcdef\n\ndata: ok\n\n",
        ] {
            for step in [1, 3, input.len()] {
                let mut d = SseDecoder::with_limit(12);
                let mut out = Vec::new();
                for piece in input.chunks(step) {
                    d.push(piece, &mut out);
                }
                assert_eq!(out.len(), 2, "{step}");
                assert!(out[0].oversized && out[0].data.is_empty());
                assert!(out[0].record().item.is_err());
                assert_eq!((out[1].data.as_str(), out[1].oversized), ("ok", false));
            }
        }
        // An endless line holds at most the limit.
        let mut d = SseDecoder::with_limit(1024);
        let mut out = Vec::new();
        for _ in 0..10_000 {
            d.push(&[b'x'; 100], &mut out);
        }
        assert!(d.partial.capacity() <= 4096, "{}", d.partial.capacity());
        d.push(b"\n\ndata: {}\n\n", &mut out);
        assert_eq!(out.len(), 2);
        assert!(out[0].oversized);
        assert_eq!(out[1].data, "{}");
    }

    #[test]
    fn unterminated_frame_is_reported_and_finished() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.push(b"data: partial", &mut out);
        assert!(out.is_empty());
        assert!(d.has_incomplete_frame());
        assert_eq!(d.finish().unwrap().data, "partial");
        // A last line that ended, without the blank line after it.
        let mut d = SseDecoder::new();
        d.push(b"data: {}\ndata: x\n", &mut out);
        assert!(out.is_empty());
        assert_eq!(d.finish().unwrap().data, "{}\nx");
        assert_eq!(d.finish(), None);
    }
}
