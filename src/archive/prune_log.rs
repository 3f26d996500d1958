//! Every prune on this machine, on record: when, from which archive, which
//! session (its title) and why, a line each in `prune.log` beside the
//! spool (`$XDG_STATE_HOME/ocview/`, else `~/.local/state/ocview/`), mode
//! 0600 in a 0700 folder: the time (ms since the epoch), the archive, the
//! session, its title and why, apart by tabs (none inside a field);
//! `ocview archive log` prints it in words.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::archive::prune::{Limits, Pruned};
use crate::model::wire::sanitize;

/// Where the log is.
pub fn path() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state")))
        .map(|d| d.join("ocview").join("prune.log"))
}

/// Put what a prune of the archive at `place` took on record (nothing
/// when it took nothing). A log that cannot be written is said in the
/// program's own log, never in the way of pruning.
pub fn record(place: &str, pruned: &Pruned, limits: &Limits, now_ms: i64) {
    if pruned.sessions() == 0 {
        return;
    }
    let age = format!(
        "older than {} days",
        limits.max_age_days.unwrap_or_default()
    );
    let cap = format!(
        "over the size cap of {}",
        crate::archive::prune::bytes(limits.max_bytes.unwrap_or_default())
    );
    let rows = pruned
        .by_age
        .iter()
        .map(|id| (id, &age))
        .chain(pruned.by_size.iter().map(|id| (id, &cap)));
    let mut text = String::new();
    for (id, why) in rows {
        let title = pruned.titles.get(id).map(String::as_str).unwrap_or("");
        let field = |t: &str| sanitize::line(t).replace('\t', " ");
        text.push_str(&format!(
            "{now_ms}\t{}\t{}\t{}\t{why}\n",
            field(place),
            field(id),
            field(title)
        ));
    }
    if let Err(e) = append(&text) {
        tracing::warn!("archive: the prune log was not written: {e}");
    }
}

fn append(text: &str) -> std::io::Result<()> {
    let path = path().ok_or_else(|| std::io::Error::other("no home folder"))?;
    if let Some(dir) = path.parent()
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)?;
    file.write_all(text.as_bytes())
}

/// One line of the log: (when, archive, session, title, why); `None` for a
/// line that is not one (torn, or from elsewhere).
pub fn parse_line(line: &str) -> Option<(i64, &str, &str, &str, &str)> {
    let mut f = line.split('\t');
    let when = f.next()?.parse().ok()?;
    Some((when, f.next()?, f.next()?, f.next()?, f.next()?))
}
