//! Seeking in a recording without reading it again from the start: one pass
//! indexes every record (its byte range in the file) and keeps a checkpoint
//! of the store every so often; a seek restores the nearest checkpoint at or
//! before the target and applies only the records after it. The file is
//! read again by byte range, never whole.
//!
//! JSON-lines recordings only (ocview recordings, bus-event lines, the
//! `/global/event` form, `opencode run --format json`); SSE text and whole
//! documents stream through the plain replay path instead.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::replay::{apply_record, decode_record};
use super::stats::IngestStats;
use crate::model::{NoObserver, Store};

/// Checkpoints are kept this many times over a recording (at least every
/// `MIN_SPACING` records).
const CHECKPOINTS: usize = 16;
const MIN_SPACING: usize = 1_000;

struct Entry {
    offset: u64,
    len: u32,
    line: u64,
}

pub struct Timeline {
    file: File,
    entries: Vec<Entry>,
    spacing: usize,
    /// (records applied, the store then, its counters).
    checkpoints: Vec<(usize, Store, IngestStats)>,
    /// Records applied to `store`.
    position: usize,
    pub store: Store,
    pub stats: IngestStats,
}

impl Timeline {
    /// Index a recording, ending positioned at its end.
    pub fn open(path: &Path) -> io::Result<Timeline> {
        Timeline::open_with_spacing(path, None)
    }

    /// The same, with checkpoints every `spacing` records (tests use small ones).
    pub fn open_with_spacing(path: &Path, spacing: Option<usize>) -> io::Result<Timeline> {
        let file = File::open(path)?;
        let mut reader = BufReader::with_capacity(256 * 1024, file.try_clone()?);
        let mut entries = Vec::new();
        let mut offset = 0u64;
        let mut buf = Vec::new();
        let mut line = 0u64;
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf)?;
            if n == 0 {
                break;
            }
            line += 1;
            let content = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if !content.trim_ascii().is_empty() && content.len() <= super::lines::MAX_LINE_BYTES {
                entries.push(Entry {
                    offset,
                    len: content.len() as u32,
                    line,
                });
            }
            offset += n as u64;
        }
        let spacing = spacing
            .unwrap_or((entries.len() / CHECKPOINTS).max(MIN_SPACING))
            .max(1);
        let mut t = Timeline {
            file,
            entries,
            spacing,
            checkpoints: vec![(0, Store::new(), IngestStats::default())],
            position: 0,
            store: Store::new(),
            stats: IngestStats::default(),
        };
        t.advance_to(t.entries.len(), true)?;
        Ok(t)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records applied so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Put the store where it is after the first `target` records.
    pub fn seek(&mut self, target: usize) -> io::Result<()> {
        let target = target.min(self.entries.len());
        if target < self.position || target - self.position > self.spacing {
            let (at, store, stats) = self
                .checkpoints
                .iter()
                .rev()
                .find(|(at, _, _)| *at <= target)
                .map(|(a, s, st)| (*a, s.clone(), st.clone()))
                .expect("the empty checkpoint is always there");
            self.store = store;
            self.stats = stats;
            self.position = at;
        }
        self.advance_to(target, false)
    }

    /// Move by `n` records (negative: back).
    pub fn step(&mut self, n: i64) -> io::Result<()> {
        let target = (self.position as i64 + n).clamp(0, self.entries.len() as i64) as usize;
        self.seek(target)
    }

    fn advance_to(&mut self, target: usize, record_checkpoints: bool) -> io::Result<()> {
        let mut buf = Vec::new();
        while self.position < target {
            let e = &self.entries[self.position];
            buf.resize(e.len as usize, 0);
            self.file.read_exact_at(&mut buf, e.offset)?;
            let record = decode_record(&buf, e.line, true);
            apply_record(record, &mut self.store, &mut NoObserver, &mut self.stats);
            self.position += 1;
            if record_checkpoints
                && self.position.is_multiple_of(self.spacing)
                && self.position < self.entries.len()
            {
                self.checkpoints
                    .push((self.position, self.store.clone(), self.stats.clone()));
            }
        }
        Ok(())
    }
}

impl Timeline {
    /// How many checkpoints were kept (besides the empty one).
    pub fn checkpoints(&self) -> usize {
        self.checkpoints.len() - 1
    }
}
