//! Logs go to a file under `$XDG_STATE_HOME/ocview/` (or
//! `~/.local/state/ocview/`), never to the screen. `OCVIEW_LOG` sets the
//! filter (`info` by default, e.g. `OCVIEW_LOG=debug`).

use std::path::PathBuf;

use tracing_subscriber::EnvFilter;

/// Log lines waiting for the file before more are dropped.
const LOG_QUEUE_LINES: usize = 4096;

pub fn log_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state")))
        .map(|d| d.join("ocview"))
}

/// Start logging to `ocview.log`. Returns the guard that flushes the log on
/// drop, or `None` when no log file could be opened (then nothing is logged:
/// never to the terminal).
pub fn init() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = log_dir()?;
    // Private whatever the umask: a log names servers, paths and sessions.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join("ocview.log"))
        .ok()?;
    // The queue's room is set aside up front (the default, 128,000 lines,
    // held 4 MB all the time); a few thousand lines waiting is plenty for
    // a log written at `info`, and a burst past it is dropped, not waited on.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(file);
    let filter = EnvFilter::try_from_env("OCVIEW_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
