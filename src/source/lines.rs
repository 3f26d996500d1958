//! Reading a recording line by line in constant memory, tolerant of what a
//! crash or a careless tool leaves behind: invalid UTF-8, CRLF, a last line
//! without its newline, and absurdly long lines.

use std::borrow::Cow;
use std::io::{self, BufRead};

/// Lines longer than this are reported and skipped instead of buffered whole.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// What the reader knows about the line it just read into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineInfo {
    /// 1-based.
    pub number: u64,
    /// False for a last line that ended without a newline (often cut short).
    pub terminated: bool,
    /// The line was longer than the limit; the buffer holds only its start.
    pub too_long: bool,
}

pub struct LineReader<R> {
    inner: R,
    number: u64,
    max: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    pub fn with_limit(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            number: 0,
            max,
        }
    }

    /// How many lines were read so far.
    pub fn lines_read(&self) -> u64 {
        self.number
    }

    /// Read the next line into `buf` (cleared first), without its line ending.
    pub fn read(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<LineInfo>> {
        buf.clear();
        let mut too_long = false;
        let mut terminated = false;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match memchr(chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let content = if done {
                &chunk[..take - 1]
            } else {
                &chunk[..take]
            };
            let room = self.max.saturating_sub(buf.len());
            if content.len() > room {
                too_long = true;
            }
            buf.extend_from_slice(&content[..content.len().min(room)]);
            self.inner.consume(take);
            if done {
                terminated = true;
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        self.number += 1;
        Ok(Some(LineInfo {
            number: self.number,
            terminated,
            too_long,
        }))
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// The line as text; invalid UTF-8 becomes U+FFFD and the flag says so.
pub fn decode_utf8(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<(Vec<u8>, LineInfo)> {
        let mut r = LineReader::with_limit(io::BufReader::with_capacity(3, input), max);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while let Some(info) = r.read(&mut buf).unwrap() {
            out.push((buf.clone(), info));
        }
        out
    }

    #[test]
    fn splits_lines_across_small_buffers() {
        let got = lines(b"ab\r\ncdef\n\nlast", 100);
        let texts: Vec<&[u8]> = got.iter().map(|(b, _)| b.as_slice()).collect();
        assert_eq!(texts, vec![&b"ab"[..], b"cdef", b"", b"last"]);
        assert!(got[2].1.terminated);
        assert!(!got[3].1.terminated);
        assert_eq!(got[3].1.number, 4);
    }

    #[test]
    fn caps_long_lines_and_goes_on() {
        let got = lines(b"0123456789\nok\n", 4);
        assert_eq!(got[0].0, b"0123");
        assert!(got[0].1.too_long);
        assert_eq!(got[1].0, b"ok");
        assert!(!got[1].1.too_long);
    }

    #[test]
    fn lossy_utf8_is_flagged() {
        let (text, repaired) = decode_utf8(b"a\xffb");
        assert_eq!(text, "a\u{fffd}b");
        assert!(repaired);
    }
}
