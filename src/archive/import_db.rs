//! This machine's opencode database into the archive, incrementally: every
//! session (its event log where present, the message and part rows it
//! lacks, its todos and its row) read through the read-only readers of
//! `source::opencode_db` and collected like any other events.
//!
//! Per database the archive remembers how far it got (`ImportMark`): the
//! newest `time_updated` and the largest session rowid imported. The next
//! run reads sessions updated at or after that time (`>=`: one updated in
//! the same millisecond as the mark is not missed; reading one again adds
//! nothing, every row is an idempotent upsert) and sessions added since
//! (an `opencode import` keeps old times). Newest sessions first, written
//! in batches, so a first import of a large database shows results at
//! once; the mark is written only when a run finished, so a run that was
//! stopped starts again where the mark says and rewrites nothing twice.

use std::collections::HashSet;
use std::path::Path;

use crate::archive::collect::Collector;
use crate::archive::engine::{Engine, ImportMark};
use crate::archive::rows::{Batch, Origin, Written};
use crate::source::decode::record::{Decoded, decode};
use crate::source::opencode_db::sessions::{SessionCursor, SessionRow};
use crate::source::opencode_db::{Db, event_log};

/// Sessions read per statement.
const PAGE: usize = 200;
/// Events and parts gathered before a batch is written.
const BATCH: usize = 4000;
/// Sessions gathered before a batch is written (results show early).
const BATCH_SESSIONS: usize = 50;

/// What one run added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbImported {
    /// Sessions read (changed since the last run, or all the first time).
    pub sessions: u64,
    pub written: Written,
    /// Sessions whose content could not be read (named in `problems`).
    pub failed: u64,
    pub problems: Vec<String>,
    /// The archive reached its size cap: sessions older than every one it
    /// keeps were left out (a prune would take them first).
    pub at_cap: bool,
    /// A first import gave back the pages its writing left free
    /// (`Engine::reclaim`).
    pub reclaimed: bool,
}

/// The database's file name, as the status line says it.
pub fn short_name(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    crate::model::wire::sanitize::line(&name).into_owned()
}

/// `1,234/10,000 sessions`.
pub fn progress_line(done: u64, total: u64) -> String {
    format!("{}/{} sessions", thousands(done), thousands(total))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The name a database's mark is kept under: its canonical path.
pub fn source_key(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// Import what changed in the opencode database at `path` since the last
/// run. `progress(done, total)` is called after each batch written. An
/// error is one line naming the database or the archive.
pub fn import_db(
    engine: &mut dyn Engine,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<DbImported, String> {
    import_db_within(engine, path, Within::default(), progress)
}

/// What a database import leaves out: sessions last updated before
/// `floor` (the age limit's, `Limits::age_floor`), and, once the archive
/// holds `cap` bytes (the size cap), the older sessions still to come
/// (sessions come newest first: a prune would take them next).
#[derive(Debug, Clone, Copy, Default)]
pub struct Within {
    pub floor: Option<i64>,
    pub cap: Option<u64>,
}

impl Within {
    pub fn limits(limits: &crate::archive::Limits, now_ms: i64) -> Within {
        Within {
            floor: limits.age_floor(now_ms),
            cap: limits.max_bytes,
        }
    }
}

/// How often a database import asks the archive's size (PostgreSQL adds
/// its rows up to answer).
const SIZE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// As `import_db`, leaving out sessions last updated before `floor` (the
/// age limit's, `Limits::age_floor`): what pruning would take away is
/// not brought back, even once the import mark went with the database's
/// last pruned session.
pub fn import_db_within(
    engine: &mut dyn Engine,
    path: &Path,
    within: Within,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<DbImported, String> {
    let shown = crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    let db = Db::open(path).map_err(|e| format!("opencode's database: {e}"))?;
    let key = source_key(path);
    let mark = engine.import_mark(&key).map_err(|e| e.to_string())?;
    let origin = Origin {
        server: None,
        host: crate::archive::origin::hostname(),
        file: Some(key.clone()),
    };
    let full_now = |engine: &mut dyn Engine| -> Result<Option<i64>, String> {
        let cap = within.cap.unwrap_or(u64::MAX);
        if engine.size().map_err(|e| e.to_string())? < cap {
            return Ok(None);
        }
        // Full: a session older than every one kept would be the first a
        // prune takes.
        let oldest = engine.span().map_err(|e| e.to_string())?;
        Ok(Some(oldest.map_or(i64::MAX, |(o, _)| o)))
    };
    let stop_before = StopBefore::default();
    let mut sized = None;
    if within.cap.is_some() {
        sized = Some(std::time::Instant::now());
        stop_before.set(full_now(&mut *engine)?);
    }
    let reading = Reading {
        db,
        shown,
        mark,
        floor: within.floor,
        origin,
        stop_before: &stop_before,
        redacts: crate::redact::policy().redacts(engine.shared()),
        rows_ahead: engine.rows_ahead(),
    };
    // Two stages on two threads, as a file's import: the database is read
    // and its sessions collected while the batch before is written.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Read>(1);
    let (read, written) = std::thread::scope(|scope| {
        let producer = std::thread::Builder::new()
            .name("archive-import-db".into())
            .spawn_scoped(scope, move || reading.run(&tx))
            .map_err(|e| format!("cannot start reading opencode's database: {e}"))?;
        let mut written = Written::default();
        let mut wrote = Ok(());
        engine.bulk(true);
        for Read {
            batch,
            sessions,
            total,
        } in rx.iter()
        {
            if !batch.is_empty() {
                match engine.write(&batch) {
                    Ok(w) => {
                        written.events += w.events;
                        written.parts += w.parts;
                    }
                    Err(e) => {
                        wrote = Err(e.to_string());
                        break;
                    }
                }
            }
            progress(sessions, total);
            if within.cap.is_some()
                && stop_before.get().is_none()
                && sized.is_none_or(|t: std::time::Instant| t.elapsed() >= SIZE_EVERY)
            {
                sized = Some(std::time::Instant::now());
                match full_now(&mut *engine) {
                    Ok(full) => stop_before.set(full),
                    Err(e) => {
                        wrote = Err(e);
                        break;
                    }
                }
            }
        }
        // A failed write stops the reading at its next batch.
        drop(rx);
        let read = producer
            .join()
            .map_err(|_| "reading opencode's database failed".to_string());
        engine.bulk(false);
        let read = read?;
        wrote?;
        Ok::<_, String>((read?, written))
    })?;
    let mut out = read.out;
    out.written = written;
    if out.failed == 0 {
        engine
            .set_import_mark(&key, read.next)
            .map_err(|e| e.to_string())?;
    }
    // A first import writes the most at once: the index's merges leave a
    // tenth of the file free, which later imports would only slowly fill.
    if mark.is_none() && out.written.parts > 0 {
        match engine.reclaim() {
            Ok(done) => out.reclaimed = done,
            Err(e) => tracing::warn!("archive: free pages not given back: {e}"),
        }
    }
    Ok(out)
}

/// The time before which sessions are left out, once the archive is full:
/// set by the writing stage, read by the reading one.
#[derive(Default)]
struct StopBefore(std::sync::Mutex<Option<i64>>);

impl StopBefore {
    fn set(&self, t: Option<i64>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = t;
    }

    fn get(&self) -> Option<i64> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A batch from the reading stage, and how far it has come.
struct Read {
    batch: Batch,
    sessions: u64,
    total: u64,
}

/// What the reading stage found: all but the rows written.
struct ReadAll {
    out: DbImported,
    next: ImportMark,
}

/// The reading stage: the database's sessions into batches.
struct Reading<'a> {
    db: Db,
    shown: String,
    mark: Option<ImportMark>,
    floor: Option<i64>,
    origin: Origin,
    stop_before: &'a StopBefore,
    redacts: bool,
    rows_ahead: Option<fn(&mut crate::archive::rows::PartRow)>,
}

impl Reading<'_> {
    /// Every session to import, newest first, then those added with old
    /// times since the last run; stops early when the writing stage has
    /// gone.
    fn run(self, tx: &std::sync::mpsc::SyncSender<Read>) -> Result<ReadAll, String> {
        let Reading {
            db, mark, floor, ..
        } = &self;
        let fail = |e: crate::source::opencode_db::DbError| format!("{}: {e}", self.shown);
        // Read before the sessions: a session added while this run reads
        // is found by the next one.
        let rowid_max = db.session_rowid_max().map_err(fail)?;
        let since = match (mark.map(|m| m.updated), *floor) {
            (Some(m), Some(f)) => Some(m.max(f)),
            (m, f) => m.or(f),
        };
        let mut total = db.session_count_from(since).map_err(fail)?;
        let mut next = ImportMark {
            updated: mark.map_or(i64::MIN, |m| m.updated),
            rowid_max,
        };
        let mut out = DbImported::default();
        let mut pending = Pending::new(self.origin.clone());
        let mut seen: HashSet<String> = HashSet::new();
        let mut after: Option<SessionCursor> = None;
        let send = |pending: &mut Pending, out: &DbImported, total: u64| {
            let batch =
                crate::archive::import_read::ready(pending.take(), self.redacts, self.rows_ahead);
            let read = Read {
                batch,
                sessions: out.sessions,
                total,
            };
            tx.send(read).is_ok()
        };
        // The writing stage went, having said why (its error wins).
        let gone = || Err("the import stopped".to_string());
        loop {
            let rows = db
                .sessions_from(since, PAGE, after.as_ref())
                .map_err(fail)?;
            let Some(last) = rows.last() else { break };
            after = Some(SessionCursor {
                time_updated: last.time_updated.unwrap_or(0),
                id: last.id.clone(),
            });
            let full = rows.len() == PAGE;
            for row in rows {
                if self
                    .stop_before
                    .get()
                    .is_some_and(|t| row.time_updated.unwrap_or(0) < t)
                {
                    out.at_cap = true;
                    break;
                }
                import_session(db, &row, &mut pending, &mut out);
                next.updated = next.updated.max(row.time_updated.unwrap_or(0));
                seen.insert(row.id);
                if pending.full() && !send(&mut pending, &out, total) {
                    return gone();
                }
            }
            if !full || out.at_cap {
                break;
            }
        }
        // Sessions added with old times since the last run.
        if let Some(m) = mark
            && rowid_max > m.rowid_max
            && !out.at_cap
        {
            let mut from = m.rowid_max;
            while from < rowid_max {
                let upto = (from + PAGE as i64).min(rowid_max);
                let added = db.sessions_added(from, upto, PAGE).map_err(fail)?;
                let kept = |r: &SessionRow| {
                    !seen.contains(&r.id)
                        && floor.is_none_or(|f| r.time_updated.is_none_or(|t| t >= f))
                };
                for row in added.into_iter().filter(kept) {
                    total += 1;
                    import_session(db, &row, &mut pending, &mut out);
                    if pending.full() && !send(&mut pending, &out, total) {
                        return gone();
                    }
                }
                from = upto;
            }
        }
        if !send(&mut pending, &out, total) {
            return gone();
        }
        Ok(ReadAll { out, next })
    }
}

/// One session's timeline, collected into the pending batch; a session
/// that cannot be read is named and the others go on.
fn import_session(db: &Db, row: &SessionRow, pending: &mut Pending, out: &mut DbImported) {
    out.sessions += 1;
    let timeline = match event_log::timeline(db, &row.id) {
        Ok(t) => t,
        Err(e) => {
            out.failed += 1;
            out.problems.push(format!("session {}: {e}", row.id));
            return;
        }
    };
    // A collector per session: its store holds one session, not the
    // database.
    let mut collector = Collector::new(pending.origin.clone());
    for (t, event) in timeline {
        if let Ok(Decoded::Event(mut env)) = decode(&event.to_string()) {
            env.received_ms = Some(t);
            collector.envelope(env);
        }
    }
    pending.add(collector.take());
}

/// Sessions' batches gathered into one write.
struct Pending {
    origin: Origin,
    batch: Batch,
    sessions: usize,
}

impl Pending {
    fn new(origin: Origin) -> Self {
        Pending {
            batch: Batch {
                origin: origin.clone(),
                ..Batch::default()
            },
            origin,
            sessions: 0,
        }
    }

    fn add(&mut self, b: Batch) {
        self.batch.events.extend(b.events);
        self.batch.sessions.extend(b.sessions);
        self.batch.messages.extend(b.messages);
        self.batch.parts.extend(b.parts);
        self.sessions += 1;
    }

    fn full(&self) -> bool {
        self.sessions >= BATCH_SESSIONS || self.batch.events.len() + self.batch.parts.len() >= BATCH
    }

    fn take(&mut self) -> Batch {
        self.sessions = 0;
        std::mem::replace(
            &mut self.batch,
            Batch {
                origin: self.origin.clone(),
                ..Batch::default()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn progress_counts_in_thousands() {
        assert_eq!(super::progress_line(1234, 10_000), "1,234/10,000 sessions");
        assert_eq!(super::progress_line(0, 999), "0/999 sessions");
    }
}
