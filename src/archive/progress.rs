//! What a file's import says while it runs: how many of its bytes are read
//! (counted under the line reader, so any form the replay reader reads is
//! measured the same way), where it resumed, and a pacer so that the
//! person hears it a few times a second at most.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What an import tells its caller as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The archive already held the first `records` records (about
    /// `bytes` of `total` bytes): reading resumes after them.
    Resumed {
        records: u64,
        bytes: u64,
        total: u64,
    },
    /// `bytes` of `total` read (`total` is 0 when unknown: standard input).
    Read { bytes: u64, total: u64 },
}

impl Step {
    /// Whole percent read, when the size is known.
    pub fn percent(&self) -> Option<u64> {
        let (bytes, total) = match *self {
            Step::Resumed { bytes, total, .. } | Step::Read { bytes, total } => (bytes, total),
        };
        (total > 0).then(|| (bytes.min(total) * 100 / total).min(100))
    }
}

/// The status line's words for an import of `name` at `step`:
/// "archive: indexing big.jsonl 45 %".
pub fn status_line(name: &str, step: &Step) -> String {
    let name = crate::model::wire::sanitize::line(name);
    match step.percent() {
        Some(p) => format!("archive: indexing {name} {p} %"),
        None => format!("archive: indexing {name}"),
    }
}

/// `bytes` in MB with one decimal, for people.
pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Lets a progress line through when its percent changed and `every` has
/// passed since the last one (and not before `after` from the start: a
/// short import says nothing while it runs).
pub struct Pacer {
    start: Instant,
    after: Duration,
    every: Duration,
    last: Option<(Instant, Option<u64>)>,
}

impl Pacer {
    pub fn new(after: Duration, every: Duration) -> Self {
        Pacer {
            start: Instant::now(),
            after,
            every,
            last: None,
        }
    }

    /// Whether `step` should be said now.
    pub fn due(&mut self, step: &Step) -> bool {
        let now = Instant::now();
        if now.duration_since(self.start) < self.after {
            return false;
        }
        let percent = step.percent();
        let due = match self.last {
            None => true,
            Some((at, said)) => said != percent && now.duration_since(at) >= self.every,
        };
        if due {
            self.last = Some((now, percent));
        }
        due
    }

    /// Whether anything was said.
    pub fn spoke(&self) -> bool {
        self.last.is_some()
    }
}

/// A reader that counts the bytes read through it.
pub struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R> Counted<R> {
    pub fn new(inner: R) -> (Self, Arc<AtomicU64>) {
        let read = Arc::new(AtomicU64::new(0));
        (
            Counted {
                inner,
                read: read.clone(),
            },
            read,
        )
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_the_file_and_its_percent() {
        let step = Step::Read {
            bytes: 45,
            total: 100,
        };
        assert_eq!(
            status_line("big.jsonl", &step),
            "archive: indexing big.jsonl 45 %"
        );
        let unknown = Step::Read {
            bytes: 45,
            total: 0,
        };
        assert_eq!(status_line("-", &unknown), "archive: indexing -");
    }

    #[test]
    fn the_pacer_says_each_percent_once() {
        let mut pacer = Pacer::new(Duration::ZERO, Duration::ZERO);
        let at = |bytes| Step::Read { bytes, total: 100 };
        assert!(pacer.due(&at(1)));
        assert!(!pacer.due(&at(1)));
        assert!(pacer.due(&at(2)));
        let mut quiet = Pacer::new(Duration::from_secs(3600), Duration::ZERO);
        assert!(!quiet.due(&at(50)));
        assert!(!quiet.spoke());
    }

    #[test]
    fn a_counted_reader_counts() {
        let (mut r, read) = Counted::new(std::io::Cursor::new(vec![7u8; 1000]));
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(read.load(Ordering::Relaxed), 1000);
    }
}
