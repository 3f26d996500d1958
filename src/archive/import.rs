//! `ocview archive import FILE…` and every file the viewer replays: read
//! with the replay reader (every form ocview reads), written a batch at a
//! time. Importing a file twice adds nothing; each batch records how far
//! the file is in (`super::resume`), so an import killed half-way resumes
//! after its last committed batch and a finished one is skipped.

use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::archive::collect::Collector;
use crate::archive::engine::Engine;
use crate::archive::keeper::Keeper;
use crate::archive::progress::{Counted, Step};
use crate::archive::recording_clock::RecordingClock;
use crate::archive::resume::{self, Checkpoint, FileMark, Start};
use crate::archive::rows::{Batch, Origin, PartRow, Written};
use crate::source::recording::replay::ReplayReader;

/// Records read before a batch is written.
const BATCH: usize = 4000;
/// Batches written between two looks at the archive's limits (a bounded
/// import keeps the archive within them as it goes, not only at its end).
const PRUNE_EVERY: u32 = 50;
/// The longest between two progress reports while a file is read.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// What one file added.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// Records read (those the archive already held included).
    pub records: u64,
    /// Sessions the file holds.
    pub sessions: usize,
    pub written: Written,
    /// What it gave the archive, new or not: after a resume, only the rows
    /// of the records past the checkpoint (what shows it skipped the rest
    /// rather than writing it again).
    pub sent: Written,
    /// The form it was read as.
    pub form: Option<&'static str>,
    /// The archive already held the first this many records (a resumed
    /// import): they were read again but not written.
    pub resumed_at: Option<u64>,
    /// The archive already held all of it: nothing was read.
    pub already: bool,
}

/// Import `path` (`-` is standard input). An error is one line naming the
/// file or the archive.
pub fn import_file(engine: &mut dyn Engine, path: &Path) -> Result<Imported, String> {
    import_file_with(engine, path, &mut |_| {})
}

/// As `import_file`, telling `on` where it resumed and how far it has read.
pub fn import_file_with(
    engine: &mut dyn Engine,
    path: &Path,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    import_into(
        &mut Direct {
            engine,
            bound: None,
        },
        path,
        on,
    )
}

/// The limits an import keeps the archive within as it goes, and where it
/// says what it pruned.
#[derive(Clone, Copy)]
pub struct Bound<'a> {
    pub limits: crate::archive::Limits,
    pub say: &'a dyn Fn(String),
}

/// As `import_file_with`, pruning the archive to `bound`'s limits every
/// so many batches and at the end (`ocview archive import`).
pub fn import_file_within(
    engine: &mut dyn Engine,
    path: &Path,
    bound: Bound<'_>,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    import_into(
        &mut Direct {
            engine,
            bound: Some(bound),
        },
        path,
        on,
    )
}

/// As `import_file_with`, through a keeper: while PostgreSQL is away the
/// batches are spooled, and written when it is back (`written` counts only
/// what was written at once).
pub fn import_kept(
    keeper: &mut Keeper,
    path: &Path,
    bound: Bound<'_>,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    import_into(&mut Kept { keeper, bound }, path, on)
}

/// Where an import's batches go.
trait Sink {
    /// How far the archive holds `file` (`None` when it cannot tell: the
    /// import then starts over, and its upserts add nothing twice).
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String>;
    fn write(&mut self, batch: &Batch) -> Result<Written, String>;
    /// Prune the archive to its limits, when the import has any.
    fn keep_within(&mut self) {}
    /// Whether what it writes is redacted (its policy, for its kind).
    fn redacts(&self) -> bool {
        false
    }
    /// How its parts' rows are prepared ahead (`Engine::rows_ahead`).
    fn rows_ahead(&self) -> Option<fn(&mut PartRow)> {
        None
    }
}

/// Straight into an archive.
struct Direct<'a, 'b> {
    engine: &'a mut dyn Engine,
    bound: Option<Bound<'b>>,
}

impl Sink for Direct<'_, '_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        self.engine.checkpoint(file).map_err(|e| e.to_string())
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.engine.write(batch).map_err(|e| e.to_string())
    }

    fn keep_within(&mut self) {
        if let Some(b) = self.bound {
            crate::archive::bounded::keep_within(self.engine, &b.limits, b.say, false);
        }
    }

    fn redacts(&self) -> bool {
        crate::redact::policy().redacts(self.engine.shared())
    }

    fn rows_ahead(&self) -> Option<fn(&mut PartRow)> {
        self.engine.rows_ahead()
    }
}

/// Through a keeper that spools while PostgreSQL is away.
struct Kept<'a, 'b> {
    keeper: &'a mut Keeper,
    bound: Bound<'b>,
}

impl Sink for Kept<'_, '_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        match self.keeper.engine() {
            Some(engine) => engine.checkpoint(file).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.keeper.retry(self.bound.say);
        let written = self
            .keeper
            .write(batch, self.bound.say)
            .map_err(|e| e.to_string())?;
        Ok(written.unwrap_or_default())
    }

    fn redacts(&self) -> bool {
        // A keeper stands for PostgreSQL.
        crate::redact::policy().redacts(true)
    }

    fn keep_within(&mut self) {
        // While PostgreSQL is away there is nothing to prune.
        if let Some(engine) = self.keeper.engine() {
            let b = self.bound;
            crate::archive::bounded::keep_within(engine, &b.limits, b.say, false);
        }
    }
}

fn import_into(
    engine: &mut dyn Sink,
    path: &Path,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    let shown = crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    let cannot_read = |e: std::io::Error| format!("cannot read {shown}: {e}");
    let stdin = path.as_os_str() == "-";
    // Standard input has no identity to resume by.
    let mark = if stdin {
        None
    } else {
        Some(FileMark::of(path).map_err(cannot_read)?)
    };
    let start = match &mark {
        Some(m) => {
            let recorded = engine.checkpoint(&m.file)?;
            resume::start(m, recorded.as_ref())
        }
        None => Start::Fresh,
    };
    if start == Start::Done {
        return Ok(Imported {
            already: true,
            ..Imported::default()
        });
    }
    let (mut input, read) = open_counted(path, stdin).map_err(cannot_read)?;
    let started = recording_start(&mut input);
    let total = mark.as_ref().map_or(0, |m| m.size.max(0) as u64);
    let origin = Origin {
        server: None,
        host: crate::archive::origin::hostname(),
        file: mark.as_ref().map(|m| m.file.clone()),
    };
    let mut out = Imported::default();
    let skip = match start {
        Start::Resume { records, bytes } => {
            let records = records.max(0) as u64;
            on(Step::Resumed {
                records,
                bytes: bytes.max(0) as u64,
                total,
            });
            out.resumed_at = Some(records);
            records
        }
        _ => 0,
    };
    // Two stages on two threads: reading, decoding and collecting the next
    // batch goes on while the last one is written (each takes about half
    // of an import's time). At most one batch waits between them.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1);
    let reading = Reading {
        reader: ReplayReader::new(input),
        collector: Collector::new(origin),
        mark,
        read: read.clone(),
        skip,
        redacts: engine.redacts(),
        prepare: engine.rows_ahead(),
        clock: RecordingClock::new(started),
    };
    std::thread::scope(|scope| {
        let producer = std::thread::Builder::new()
            .name("archive-import-read".into())
            .spawn_scoped(scope, move || reading.run(&tx))
            .map_err(|e| format!("cannot start reading {shown}: {e}"))?;
        let wrote = write_batches(engine, &rx, &read, total, on, &mut out);
        drop(rx);
        let finished = producer
            .join()
            .map_err(|_| format!("reading {shown} failed"))?;
        wrote?;
        let read_all = finished.map_err(|e| format!("cannot read {shown}: {e}"))?;
        on(Step::Read {
            bytes: read.load(Ordering::Relaxed),
            total,
        });
        out.records = read_all.records;
        out.sessions = read_all.sessions;
        out.form = read_all.form;
        Ok(out)
    })
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

/// Write each batch the reading stage sends, saying how far the file is
/// read at least every `REPORT_EVERY`, until the reader is done (or a
/// write fails: then the reader stops at its next batch, `rx` gone).
fn write_batches(
    engine: &mut dyn Sink,
    rx: &std::sync::mpsc::Receiver<Batch>,
    read: &std::sync::atomic::AtomicU64,
    total: u64,
    on: &mut dyn FnMut(Step),
    out: &mut Imported,
) -> Result<(), String> {
    let mut said = None;
    let mut since_pruned = 0;
    loop {
        let batch = match rx.recv_timeout(REPORT_EVERY) {
            Ok(batch) => Some(batch),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if since_pruned >= PRUNE_EVERY {
            since_pruned = 0;
            engine.keep_within();
        }
        let bytes = read.load(Ordering::Relaxed);
        if said != Some(bytes) {
            said = Some(bytes);
            on(Step::Read { bytes, total });
        }
        let Some(batch) = batch else { continue };
        out.sent.events += batch.events.len() as u64;
        out.sent.parts += batch.parts.len() as u64;
        since_pruned += 1;
        match engine.write(&batch) {
            Ok(w) => {
                out.written.events += w.events;
                out.written.parts += w.parts;
            }
            Err(e) => {
                // The reader stops at its next batch (`rx` goes).
                return Err(e);
            }
        }
    }
    // The whole file in: within the limits at its end too.
    engine.keep_within();
    Ok(())
}

/// The reading stage of an import: records read, collected, and handed
/// on a batch at a time with their checkpoint.
struct Reading {
    reader: ReplayReader<Box<dyn BufRead + Send>>,
    collector: Collector,
    mark: Option<FileMark>,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Records the archive already holds (a resumed import).
    skip: u64,
    /// Batches are redacted here, beside the writing (`redacted::ahead`).
    redacts: bool,
    /// The parts' rows prepared here rather than on the writing stage
    /// (it is the slower one).
    prepare: Option<fn(&mut PartRow)>,
    /// When the recording's lines happened (`recording_clock`).
    clock: RecordingClock,
}

/// The start an ocview recording's header gives (its first line), read
/// without taking it from `input`.
fn recording_start(input: &mut dyn BufRead) -> Option<i64> {
    let head = input.fill_buf().ok()?;
    if !head.starts_with(b"{\"ocview_recording\"") {
        return None;
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let header: serde_json::Value = serde_json::from_slice(line).ok()?;
    header.get("started_ms")?.as_i64()
}

/// What the reading stage found in the whole file.
struct ReadAll {
    records: u64,
    sessions: usize,
    form: Option<&'static str>,
}

impl Reading {
    /// Read to the end, sending each batch; stops early, without error,
    /// when the writing stage has gone (it failed).
    fn run(mut self, tx: &std::sync::mpsc::SyncSender<Batch>) -> Result<ReadAll, std::io::Error> {
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
        tx: &std::sync::mpsc::SyncSender<Batch>,
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
    fn send(&mut self, records: u64, done: bool, tx: &std::sync::mpsc::SyncSender<Batch>) -> bool {
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
        let mut batch = crate::archive::redacted::ahead(batch, self.redacts);
        if let Some(prepare) = self.prepare {
            batch.parts.iter_mut().for_each(prepare);
        }
        tx.send(batch).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that keeps what each batch said, and fails at write `fail_at`.
    struct Seen {
        batches: Vec<(usize, Option<(i64, bool)>)>,
        fail_at: Option<usize>,
    }

    impl Sink for Seen {
        fn checkpoint(&mut self, _file: &str) -> Result<Option<Checkpoint>, String> {
            Ok(None)
        }

        fn write(&mut self, batch: &Batch) -> Result<Written, String> {
            if self.fail_at == Some(self.batches.len()) {
                return Err("the disk is full".into());
            }
            let mark = batch.checkpoint.as_ref().map(|c| (c.records, c.done));
            self.batches.push((batch.parts.len(), mark));
            Ok(Written::default())
        }
    }

    /// A file of `parts` part updates in one session.
    fn parts_file(parts: usize) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for i in 0..parts {
            let line = serde_json::json!({"type": "message.part.updated", "properties": {"part": {
                "id": format!("prt_{i:06}"), "messageID": "msg_1", "sessionID": "ses_1",
                "type": "text", "text": format!("word {i}")}}});
            writeln!(f, "{line}").unwrap();
        }
        f.flush().unwrap();
        f
    }

    #[test]
    fn batches_reach_the_writer_in_order_each_with_its_checkpoint() {
        let file = parts_file(3 * BATCH + 7);
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: None,
        };
        let out = import_into(&mut sink, file.path(), &mut |_| {}).unwrap();
        assert_eq!(out.records, (3 * BATCH + 7) as u64);
        let parts: usize = sink.batches.iter().map(|b| b.0).sum();
        assert_eq!(parts, 3 * BATCH + 7);
        let marks: Vec<(i64, bool)> = sink.batches.iter().filter_map(|b| b.1).collect();
        assert_eq!(marks.len(), sink.batches.len(), "{marks:?}");
        assert!(marks.windows(2).all(|w| w[0].0 < w[1].0), "{marks:?}");
        assert_eq!(marks.last(), Some(&((3 * BATCH + 7) as i64, true)));
        assert!(marks[..marks.len() - 1].iter().all(|m| !m.1), "{marks:?}");
    }

    #[test]
    fn a_failed_write_stops_the_reading_and_says_why() {
        let file = parts_file(20 * BATCH);
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: Some(1),
        };
        let err = import_into(&mut sink, file.path(), &mut |_| {}).unwrap_err();
        assert!(err.contains("the disk is full"), "{err}");
        assert_eq!(sink.batches.len(), 1);
    }
}
