//! A writer that redacts what passes through it, a run of whole lines at a
//! time: what a stream writes (a transcript page by page) is never all in
//! memory, and no secret is cut in two (a private key's block, which spans
//! lines, is held until its end).

use std::io::Write;

use crate::redact::{Redactor, Tally};

pub struct RedactingWriter<W: Write> {
    out: W,
    pending: Vec<u8>,
    /// The text is JSON: its strings are redacted (`redact_json`).
    json: bool,
    pub tally: Tally,
}

/// Held at most this much before it is redacted whatever it holds.
const HELD_MAX: usize = 8 << 20;

impl<W: Write> RedactingWriter<W> {
    pub fn new(out: W, json: bool) -> Self {
        RedactingWriter {
            out,
            pending: Vec::new(),
            json,
            tally: Tally::new(),
        }
    }

    /// Redact and write the pending text up to `end`.
    fn pass(&mut self, end: usize) -> std::io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..end).collect();
        let text = String::from_utf8_lossy(&chunk);
        let r = Redactor::shared();
        let redacted = match self.json {
            true => r.redact_json(&text, &mut self.tally),
            false => r.redact(&text, &mut self.tally),
        };
        self.out.write_all(redacted.as_bytes())
    }

    /// Where the text that can go now ends: after the last whole line, and
    /// not inside an open private key block.
    fn ready(&self) -> Option<usize> {
        let last_line = self.pending.iter().rposition(|b| *b == b'\n')? + 1;
        let head = &self.pending[..last_line];
        let opens = memchr::memmem::find_iter(head, b"-----BEGIN").count();
        let closes = memchr::memmem::find_iter(head, b"-----END").count();
        if opens > closes && self.pending.len() < HELD_MAX {
            return None;
        }
        Some(last_line)
    }

    /// Write what is left, and give the inner writer back.
    pub fn finish(mut self) -> std::io::Result<(W, Tally)> {
        let all = self.pending.len();
        self.pass(all)?;
        self.out.flush()?;
        Ok((self.out, self.tally))
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(end) = self.ready() {
            self.pass(end)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(end) = self.ready() {
            self.pass(end)?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_block_written_in_pieces_is_redacted_whole() {
        let mut w = RedactingWriter::new(Vec::new(), false);
        for piece in [
            "before\n-----BEGIN OPENSSH PRIVATE KEY-----\n",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
            "QyNTUxOQAAACB8tU2QhV7Rb0sK\n-----END OPENSSH PRIVATE KEY-----\nafter\n",
        ] {
            w.write_all(piece.as_bytes()).unwrap();
        }
        let (out, tally) = w.finish().unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains("b3BlbnNzaC1rZXktdjEAAAAA"), "{out}");
        assert!(
            out.starts_with("before\n") && out.ends_with("after\n"),
            "{out}"
        );
        assert_eq!(tally.values().sum::<u64>(), 1, "{tally:?}");
    }
}
