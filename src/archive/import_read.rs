//! An import's reading stage: a file's records read, collected and handed
//! on a batch at a time, each with how far the file is in, while the
//! writing stage writes the batch before (`super::import`).

use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::archive::collect::Collector;
use crate::archive::progress::Counted;
use crate::archive::recording_clock::RecordingClock;
use crate::archive::resume::{Checkpoint, FileMark};
use crate::archive::rows::{Batch, Origin, PartRow};
use crate::source::recording::replay::ReplayReader;

/// Records read before a batch is written.
pub(super) const BATCH: usize = 4000;

/// The reading stage of an import: records read, collected, and handed
/// on a batch at a time with their checkpoint.
pub(super) struct Reading {
    pub(super) reader: ReplayReader<Box<dyn BufRead + Send>>,
    pub(super) collector: Collector,
    pub(super) mark: Option<FileMark>,
    pub(super) read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Records the archive already holds (a resumed import).
    pub(super) skip: u64,
    /// When the recording's lines happened (`recording_clock`).
    pub(super) clock: RecordingClock,
}

/// The start an ocview recording's header gives (its first line), read
/// without taking it from `input`.
pub(super) fn recording_start(input: &mut dyn BufRead) -> Option<i64> {
    let head = input.fill_buf().ok()?;
    if !head.starts_with(b"{\"ocview_recording\"") {
        return None;
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let header: serde_json::Value = serde_json::from_slice(line).ok()?;
    header.get("started_ms")?.as_i64()
}

/// What the reading stage found in the whole file.
pub(super) struct ReadAll {
    pub(super) records: u64,
    pub(super) sessions: usize,
    pub(super) form: Option<&'static str>,
}

impl Reading {
    /// Read to the end, sending each batch; stops early, without error,
    /// when the writing stage has gone (it failed).
    pub(super) fn run(
        mut self,
        tx: &mut dyn FnMut(Batch) -> bool,
    ) -> Result<ReadAll, std::io::Error> {
        let mut records = 0u64;
        let mut stopped = false;
        let mut ready = Vec::new();
        while let Some(record) = self.reader.next_record()? {
            records += 1;
            self.clock.pass(records, record, &mut ready);
            for (n, record) in ready.drain(..) {
                stopped = stopped || !self.take(n, record, tx);
            }
            if stopped {
                break;
            }
        }
        if !stopped {
            self.clock.finish(&mut ready);
            for (n, record) in ready.drain(..) {
                if !self.take(n, record, tx) {
                    break;
                }
            }
        }
        self.send(records, true, tx);
        Ok(ReadAll {
            records,
            sessions: self.collector.store.sessions().len(),
            form: self.reader.format().map(|f| f.label()),
        })
    }

    /// Record number `n` into the collector, a batch sent when one is
    /// full; false when the writing stage has gone.
    fn take(
        &mut self,
        n: u64,
        record: crate::source::decode::apply::Record,
        tx: &mut dyn FnMut(Batch) -> bool,
    ) -> bool {
        self.collector.record(record);
        if n <= self.skip {
            // Already in the archive: it still teaches the collector's
            // store (later events build on it) and the keys of repeated
            // deltas, but makes no rows.
            if n == self.skip || self.collector.pending() >= BATCH {
                self.collector.forget();
            }
            return true;
        }
        self.collector.pending() < BATCH || self.send(n, false, tx)
    }

    /// The collected batch to the writing stage, checkpointed at record
    /// `records`; false when that stage has gone.
    fn send(&mut self, records: u64, done: bool, tx: &mut dyn FnMut(Batch) -> bool) -> bool {
        let mut batch = self.collector.take();
        batch.checkpoint = self.mark.as_ref().map(|m| Checkpoint {
            mark: m.clone(),
            records: records as i64,
            bytes: self.read.load(Ordering::Relaxed) as i64,
            done,
        });
        if batch.is_empty() {
            return true;
        }
        tx(batch)
    }
}

/// The preparing stage, between reading and writing: each batch redacted
/// (when `redacts`), its parts' rows made (`prepare`) and its log's blocks
/// packed, so the writing stage, the slowest, only writes. Batches the
/// writer is done with come back (`written`) to be let go of here, off its
/// thread. Stops when either side has gone.
pub(super) fn prepare_all(
    rx: &std::sync::mpsc::Receiver<Said>,
    redacts: bool,
    prepare: Option<fn(&mut PartRow)>,
    written: &std::sync::mpsc::Receiver<Box<Batch>>,
    tx: &std::sync::mpsc::SyncSender<Said>,
) {
    for said in rx {
        written.try_iter().for_each(drop);
        let said = match said {
            Said::Batch { file, batch } => Said::Batch {
                file,
                batch: Box::new(ready(*batch, redacts, prepare)),
            },
            other => other,
        };
        if tx.send(said).is_err() {
            return;
        }
    }
}

/// `batch` as the writing stage takes it: from `prepare_all`, and from
/// the reading stage of opencode's database (`import_db`).
pub(super) fn ready(batch: Batch, redacts: bool, prepare: Option<fn(&mut PartRow)>) -> Batch {
    let mut batch = crate::archive::redacted::ahead(batch, redacts);
    if let Some(prepare) = prepare {
        batch.parts.iter_mut().for_each(prepare);
    }
    batch.packed = crate::archive::rows::Packed::ahead(&batch.events);
    batch
}

/// One file's import, as the writing stage plans it before the reading
/// stage opens it.
pub(super) struct Planned {
    pub(super) file: usize,
    pub(super) path: std::path::PathBuf,
    pub(super) shown: String,
    /// `None` for standard input, which has no identity to resume by.
    pub(super) mark: Option<FileMark>,
    /// Records the archive holds already, and their bytes (a resume).
    pub(super) resume: Option<(u64, u64)>,
}

/// What the reading stage tells the writing one, file by file.
pub(super) enum Said {
    /// File `file` is open: its bytes read so far, of `total`, and the
    /// records and bytes the archive holds already (`Planned::resume`).
    Opened {
        file: usize,
        read: std::sync::Arc<std::sync::atomic::AtomicU64>,
        total: u64,
        resume: Option<(u64, u64)>,
    },
    Batch {
        file: usize,
        batch: Box<Batch>,
    },
    /// File `file` read to its end, or why not.
    Ended {
        file: usize,
        result: Result<ReadAll, String>,
    },
}

/// The reading stage: each planned file in turn, until the writing stage
/// has gone.
pub(super) fn read_all(planned: Vec<Planned>, tx: &std::sync::mpsc::SyncSender<Said>) {
    for p in planned {
        let file = p.file;
        let (mut input, read) = match open_counted(&p.path, p.mark.is_none()) {
            Ok(opened) => opened,
            Err(e) => {
                let result = Err(format!("cannot read {}: {e}", p.shown));
                if tx.send(Said::Ended { file, result }).is_err() {
                    return;
                }
                continue;
            }
        };
        let started = recording_start(&mut input);
        let total = p.mark.as_ref().map_or(0, |m| m.size.max(0) as u64);
        let origin = Origin {
            server: None,
            host: crate::archive::origin::hostname(),
            file: p.mark.as_ref().map(|m| m.file.clone()),
        };
        let opened = Said::Opened {
            file,
            read: read.clone(),
            total,
            resume: p.resume,
        };
        if tx.send(opened).is_err() {
            return;
        }
        let reading = Reading {
            reader: ReplayReader::new(input),
            collector: Collector::new(origin),
            mark: p.mark,
            read,
            skip: p.resume.map_or(0, |r| r.0),
            clock: RecordingClock::new(started),
        };
        let result = reading
            .run(&mut |batch| {
                tx.send(Said::Batch {
                    file,
                    batch: Box::new(batch),
                })
                .is_ok()
            })
            .map_err(|e| format!("cannot read {}: {e}", p.shown));
        if tx.send(Said::Ended { file, result }).is_err() {
            return;
        }
    }
}

/// The file to import, its bytes counted as they are read (standard input
/// is not counted: it has no size to compare with).
fn open_counted(
    path: &Path,
    stdin: bool,
) -> std::io::Result<(
    Box<dyn BufRead + Send>,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
)> {
    if stdin {
        let input = crate::source::open_input(path)?;
        return Ok((input, Counted::new(std::io::empty()).1));
    }
    let (counted, read) = Counted::new(std::fs::File::open(path)?);
    Ok((
        Box::new(std::io::BufReader::with_capacity(256 * 1024, counted)),
        read,
    ))
}
