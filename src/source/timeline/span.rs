//! Reading an indexed recording: lines for the index without holding an
//! overlong one, and records by byte range, a megabyte at a time.

use std::io::{self, BufRead};

use super::{Backing, Entry};
use crate::source::decode::apply::{Record, decode_record};
use crate::source::decode::lines::MAX_LINE_BYTES;
use crate::source::decode::record::RecordError;

/// The length of an entry whose line was too long to keep.
pub(super) const TOO_LONG: u32 = u32::MAX;

/// How much of the file one read brings in while walking records.
const SPAN_BYTES: u64 = 1 << 20;

/// Read one line (with its newline) into `buf`, unless it grows past
/// [`MAX_LINE_BYTES`]: then the rest is read past without being kept.
/// Returns the bytes consumed, and whether the line was too long.
pub(super) fn read_line_capped(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
) -> io::Result<(usize, bool)> {
    let (mut consumed, mut too_long) = (0, false);
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok((consumed, too_long));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long && buf.len() + take > MAX_LINE_BYTES + 2 {
            too_long = true;
            buf.clear();
        }
        if !too_long {
            buf.extend_from_slice(&chunk[..take]);
        }
        reader.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, too_long));
        }
    }
}

/// Consecutive records read with one read per megabyte rather than one per
/// record: a walk over thousands of small lines is mostly system calls
/// otherwise.
#[derive(Default)]
pub(super) struct Span {
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: u64,
}

impl Span {
    /// Record `i`; `terminated` is false when it is the last line and had no
    /// newline (a recording cut by a crash).
    pub(super) fn record(
        &mut self,
        backing: &Backing,
        entries: &[Entry],
        i: usize,
        terminated: bool,
    ) -> io::Result<Record> {
        let e = &entries[i];
        if e.len == TOO_LONG {
            return Ok(Record {
                line: e.line,
                repaired: None,
                item: Err(RecordError::too_long(format!(
                    "line longer than {MAX_LINE_BYTES} bytes, skipped"
                ))),
            });
        }
        let end = e.offset + u64::from(e.len);
        if e.offset < self.start || end > self.start + self.buf.len() as u64 {
            // Extend to whole records only, up to a megabyte (or one record).
            let limit = e.offset + SPAN_BYTES.max(u64::from(e.len));
            let last = entries[i..]
                .iter()
                .take_while(|r| r.len != TOO_LONG && r.offset + u64::from(r.len) <= limit)
                .last()
                .map_or(end, |r| r.offset + u64::from(r.len));
            backing.read_at(&mut self.buf, e.offset, (last - e.offset) as usize)?;
            self.start = e.offset;
        }
        let from = (e.offset - self.start) as usize;
        Ok(decode_record(
            &self.buf[from..from + e.len as usize],
            e.line,
            terminated,
        ))
    }
}
