//! `ocview archive import FILE…` and every file the viewer replays: read
//! with the replay reader (every form ocview reads), written a batch at a
//! time. Importing a file twice adds nothing.

use std::path::Path;

use super::collect::Collector;
use super::engine::Engine;
use super::keeper::Keeper;
use super::rows::{Origin, Written};
use crate::source::replay::ReplayReader;

/// Records read before a batch is written.
const BATCH: usize = 4000;

/// What one file added.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// Records read.
    pub records: u64,
    /// Sessions the file holds.
    pub sessions: usize,
    pub written: Written,
    /// The form it was read as.
    pub form: Option<&'static str>,
}

/// Import `path` (`-` is standard input). An error is one line naming the
/// file or the archive.
pub fn import_file(engine: &mut dyn Engine, path: &Path) -> Result<Imported, String> {
    import_with(path, &mut |batch| {
        engine.write(batch).map_err(|e| e.to_string())
    })
}

/// As `import_file`, through a keeper: while PostgreSQL is away the
/// batches are spooled, and written when it is back (`written` then counts
/// what was written directly).
pub fn import_kept(
    keeper: &mut Keeper,
    path: &Path,
    say: &dyn Fn(String),
) -> Result<Imported, String> {
    import_with(path, &mut |batch| {
        keeper.retry(say);
        keeper.write(batch, say).map_err(|e| e.to_string())?;
        Ok(Written::default())
    })
}

fn import_with(
    path: &Path,
    write_batch: &mut dyn FnMut(&super::rows::Batch) -> Result<Written, String>,
) -> Result<Imported, String> {
    let shown = crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    let input = crate::source::open_input(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file = if path.as_os_str() == "-" {
        None
    } else {
        Some(
            std::fs::canonicalize(path)
                .unwrap_or_else(|_| path.to_path_buf())
                .display()
                .to_string(),
        )
    };
    let origin = Origin {
        server: None,
        host: super::place::hostname(),
        file,
    };
    let mut collector = Collector::new(origin);
    let mut reader = ReplayReader::new(input);
    let mut out = Imported::default();
    let mut write = |collector: &mut Collector, out: &mut Imported| -> Result<(), String> {
        let batch = collector.take();
        if batch.is_empty() {
            return Ok(());
        }
        let w = write_batch(&batch)?;
        out.written.events += w.events;
        out.written.parts += w.parts;
        Ok(())
    };
    loop {
        let record = reader
            .next_record()
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        let Some(record) = record else { break };
        out.records += 1;
        collector.record(record);
        if collector.pending() >= BATCH {
            write(&mut collector, &mut out)?;
        }
    }
    write(&mut collector, &mut out)?;
    out.sessions = collector.store.sessions().len();
    out.form = reader.format().map(|f| f.label());
    Ok(out)
}
