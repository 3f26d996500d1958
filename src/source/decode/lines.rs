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
    /// A CR before the line's end was dropped (CRLF, or a last line ending in
    /// CR). SSE counts a lone CR as a line end of its own, so its reader
    /// needs to know.
    pub cr: bool,
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

    /// Hand the next line, without its line ending, to `f`. A line that lies
    /// whole in the reader's buffer is lent in place (no copy, the common
    /// case); otherwise it is assembled in `buf` first.
    pub fn read_with<T>(
        &mut self,
        buf: &mut Vec<u8>,
        f: impl FnOnce(&[u8], LineInfo) -> T,
    ) -> io::Result<Option<T>> {
        let chunk = loop {
            match self.inner.fill_buf() {
                Ok(c) => break c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if let Some(end) = memchr(chunk).filter(|&end| end <= self.max) {
            let (line, cr) = match chunk[..end].strip_suffix(b"\r") {
                Some(line) => (line, true),
                None => (&chunk[..end], false),
            };
            self.number += 1;
            let info = LineInfo {
                number: self.number,
                terminated: true,
                too_long: false,
                cr,
            };
            let out = f(line, info);
            self.inner.consume(end + 1);
            return Ok(Some(out));
        }
        Ok(self.read(buf)?.map(|info| f(buf, info)))
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
        let cr = buf.last() == Some(&b'\r');
        if cr {
            buf.pop();
        }
        self.number += 1;
        Ok(Some(LineInfo {
            number: self.number,
            terminated,
            too_long,
            cr,
        }))
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// The line as text; invalid UTF-8 becomes U+FFFD and the flag says so.
pub fn decode_utf8(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    // simdutf8's check is several times faster than std's on long lines, and
    // every record passes through here.
    match simdutf8::basic::from_utf8(bytes) {
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
        // Lending in place must see exactly the same lines, whatever the buffer.
        for capacity in [3, 5, 64] {
            let mut r = LineReader::with_limit(io::BufReader::with_capacity(capacity, input), max);
            let mut lent = Vec::new();
            while let Some(line) = r.read_with(&mut buf, |l, info| (l.to_vec(), info)).unwrap() {
                lent.push(line);
            }
            assert_eq!(lent, out, "capacity {capacity}");
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
