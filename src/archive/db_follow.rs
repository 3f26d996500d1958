//! opencode's database into the archive while ocview runs: on a thread of
//! its own (never the UI's, never the async runtime's), an import when it
//! starts, then another each time the database was written (`PRAGMA
//! data_version`, asked every `POLL`), each reading only what changed
//! (`import_db`). A large first import says how far it is on the status
//! line, at most once a second.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use crate::archive::import_db::{self, DbImported};
use crate::archive::place::Setting;
use crate::archive::prune::Limits;
use crate::source::opencode_db::Db;

/// How often the database is asked whether it was written.
pub const POLL: Duration = Duration::from_secs(2);
/// An import of at least this many sessions says how far it is.
const SHOW_PROGRESS_FROM: u64 = 100;
/// The least time between two progress lines.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// The least time between two prunes after imports that added something
/// (one that filled the archive prunes at once).
const PRUNE_EVERY: Duration = Duration::from_secs(600);

fn at_cap(imported: &Result<DbImported, String>) -> bool {
    imported.as_ref().is_ok_and(|d| d.at_cap)
}

/// The running follower; dropping it stops it (after the batch it writes).
pub struct Follower {
    _stop: Sender<()>,
}

/// Follow the database at `path` into the archive `setting`, leaving out
/// sessions older than `limits`' age limit (they would only be pruned);
/// `say` puts a line on the status line (from this thread).
pub fn spawn(
    setting: Setting,
    path: PathBuf,
    limits: Limits,
    say: Box<dyn Fn(String) + Send>,
) -> Follower {
    let (stop, stopped) = channel();
    let spawned = std::thread::Builder::new()
        .name("archive-opencode-db".into())
        .spawn(move || {
            lower_priority();
            run(&setting, &path, &limits, &stopped, &*say)
        });
    if let Err(e) = spawned {
        tracing::warn!("archive: no thread for opencode's database: {e}");
    }
    Follower { _stop: stop }
}

fn run(
    setting: &Setting,
    path: &std::path::Path,
    limits: &Limits,
    stopped: &Receiver<()>,
    say: &dyn Fn(String),
) {
    // The archive is opened once there is something to import: a viewer
    // on a machine without opencode's database holds no connection for it.
    let mut engine = None;
    let name = import_db::short_name(path);
    let mut watch: Option<Db> = None;
    let mut version: Option<i64> = None;
    let mut said_failure: Option<String> = None;
    // Whether the archive has yet to be asked if this database is new to it.
    let mut first_look = true;
    // When the archive was last pruned to its limits from here.
    let mut pruned: Option<Instant> = None;
    loop {
        if watch.is_none() && path.is_file() {
            watch = Db::open(path).ok();
        }
        let now = watch.as_ref().and_then(|db| db.data_version().ok());
        if watch.is_some() && now.is_none() {
            // Reopen at the next poll (the file was replaced, or locked).
            watch = None;
        }
        if now.is_some() && now != version {
            version = now;
            let mut last_said: Option<Instant> = None;
            let mut progress = |done: u64, total: u64| {
                if total >= SHOW_PROGRESS_FROM
                    && done < total
                    && last_said.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY)
                {
                    last_said = Some(Instant::now());
                    say(format!(
                        "archive: importing {name} {}",
                        import_db::progress_line(done, total)
                    ));
                }
            };
            if engine.is_none() {
                match setting.open() {
                    Ok(Some(opened)) if opened.read_only().is_none() => engine = Some(opened),
                    // The writer says why an archive cannot be used; once
                    // is enough. A read-only one takes no import.
                    _ => return,
                }
            }
            let Some(engine) = engine.as_mut() else {
                return;
            };
            if first_look {
                first_look = false;
                if engine
                    .import_mark(&import_db::source_key(path))
                    .ok()
                    .flatten()
                    .is_none()
                {
                    say(first_import_line(&name, path));
                }
            }
            let bounds =
                crate::archive::prune::limits_for(&mut **engine, limits).unwrap_or(*limits);
            let within = import_db::Within::limits(&bounds, now_ms());
            let imported = import_db::import_db_within(&mut **engine, path, within, &mut progress);
            // Within the limits after an import that added to it: at
            // once when it filled the archive, else now and then (the
            // size is a sum over every row on PostgreSQL).
            let added = imported
                .as_ref()
                .is_ok_and(|d| d.at_cap || d.written.events > 0);
            if added && pruned.is_none_or(|t| t.elapsed() >= PRUNE_EVERY || at_cap(&imported)) {
                pruned = Some(Instant::now());
                crate::archive::bounded::keep_within(&mut **engine, limits, say, false);
            }
            match imported {
                Ok(done) => {
                    said_failure = None;
                    if let Some(line) = finished(&name, &done, last_said.is_some()) {
                        say(line);
                    }
                }
                Err(e) => {
                    // Said once, tried again when the database changes.
                    if said_failure.as_deref() != Some(e.as_str()) {
                        say(format!("archive: {e}"));
                        said_failure = Some(e);
                    }
                }
            }
        }
        match stopped.recv_timeout(POLL) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// What a first import says before it starts: what is copied, how, and
/// how to leave it out.
fn first_import_line(name: &str, path: &std::path::Path) -> String {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    format!(
        "archive: copying {name} ({}) into the archive in the background, newest sessions \
         first (archive_opencode_db = false, or --no-archive-opencode-db, leaves it out)",
        crate::archive::prune::bytes(size)
    )
}

/// The import yields the processors to the viewer and the agents it
/// watches: its thread runs at a lower priority (on Linux a thread has a
/// nice value of its own).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only changes the calling thread's nice value.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

use crate::archive::now_ms;

/// The line after an import: when it showed progress, or when some
/// sessions could not be read.
fn finished(name: &str, done: &DbImported, showed_progress: bool) -> Option<String> {
    if done.failed > 0 {
        let first = done.problems.first().cloned().unwrap_or_default();
        return Some(format!(
            "archive: {name}: {} sessions not imported ({first})",
            done.failed
        ));
    }
    showed_progress.then(|| {
        format!(
            "archive: imported {name} {}",
            import_db::progress_line(done.sessions, done.sessions)
        )
    })
}
