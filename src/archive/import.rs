//! `ocview archive import FILE…` and every file the viewer replays: read
//! with the replay reader (every form ocview reads), written a batch at a
//! time. Importing a file twice adds nothing; each batch records how far
//! the file is in (`super::resume`), so an import killed half-way resumes
//! after its last committed batch and a finished one is skipped.

use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::collect::Collector;
use super::engine::Engine;
use super::keeper::Keeper;
use super::progress::{Counted, Step};
use super::resume::{self, Checkpoint, FileMark, Start};
use super::rows::{Batch, Origin, Written};
use crate::source::replay::ReplayReader;

/// Records read before a batch is written.
const BATCH: usize = 4000;
/// Records read between two progress reports.
const REPORT_EVERY: u64 = 256;

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
    import_into(&mut Direct(engine), path, on)
}

/// As `import_file_with`, through a keeper: while PostgreSQL is away the
/// batches are spooled, and written when it is back (`written` counts only
/// what was written at once).
pub fn import_kept(
    keeper: &mut Keeper,
    path: &Path,
    say: &dyn Fn(String),
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    import_into(&mut Kept { keeper, say }, path, on)
}

/// Where an import's batches go.
trait Sink {
    /// How far the archive holds `file` (`None` when it cannot tell: the
    /// import then starts over, and its upserts add nothing twice).
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String>;
    fn write(&mut self, batch: &Batch) -> Result<Written, String>;
}

/// Straight into an archive.
struct Direct<'a>(&'a mut dyn Engine);

impl Sink for Direct<'_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        self.0.checkpoint(file).map_err(|e| e.to_string())
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.0.write(batch).map_err(|e| e.to_string())
    }
}

/// Through a keeper that spools while PostgreSQL is away.
struct Kept<'a, 'b> {
    keeper: &'a mut Keeper,
    say: &'b dyn Fn(String),
}

impl Sink for Kept<'_, '_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        match self.keeper.engine() {
            Some(engine) => engine.checkpoint(file).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.keeper.retry(self.say);
        let written = self
            .keeper
            .write(batch, self.say)
            .map_err(|e| e.to_string())?;
        Ok(written.unwrap_or_default())
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
    let (input, read): (Box<dyn BufRead + Send>, _) = if stdin {
        let input = crate::source::open_input(path).map_err(cannot_read)?;
        (input, Counted::new(std::io::empty()).1)
    } else {
        let (counted, read) = Counted::new(std::fs::File::open(path).map_err(cannot_read)?);
        (
            Box::new(std::io::BufReader::with_capacity(256 * 1024, counted)),
            read,
        )
    };
    let total = mark.as_ref().map_or(0, |m| m.size.max(0) as u64);
    let origin = Origin {
        server: None,
        host: super::place::hostname(),
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
    let mut collector = Collector::new(origin);
    let mut reader = ReplayReader::new(input);
    let mut write = |collector: &mut Collector, out: &mut Imported, done: bool| {
        let mut batch = collector.take();
        batch.checkpoint = mark.as_ref().map(|m| Checkpoint {
            mark: m.clone(),
            records: out.records as i64,
            bytes: read.load(Ordering::Relaxed) as i64,
            done,
        });
        if batch.is_empty() {
            return Ok(());
        }
        out.sent.events += batch.events.len() as u64;
        out.sent.parts += batch.parts.len() as u64;
        let w = engine.write(&batch)?;
        out.written.events += w.events;
        out.written.parts += w.parts;
        Ok::<(), String>(())
    };
    loop {
        let record = reader
            .next_record()
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        let Some(record) = record else { break };
        out.records += 1;
        collector.record(record);
        if out.records % REPORT_EVERY == 0 {
            on(Step::Read {
                bytes: read.load(Ordering::Relaxed),
                total,
            });
        }
        if out.records <= skip {
            // Already in the archive: it still teaches the collector's
            // store (later events build on it) and the keys of repeated
            // deltas, but makes no rows.
            if out.records == skip || collector.pending() >= BATCH {
                collector.forget();
            }
            continue;
        }
        if collector.pending() >= BATCH {
            write(&mut collector, &mut out, false)?;
        }
    }
    write(&mut collector, &mut out, true)?;
    on(Step::Read {
        bytes: read.load(Ordering::Relaxed),
        total,
    });
    out.sessions = collector.store.sessions().len();
    out.form = reader.format().map(|f| f.label());
    Ok(out)
}
