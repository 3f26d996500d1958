//! `ocview replay opencode.db --session ID` (a session's event log played)
//! and `ocview history` (every session in the database, no server).

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::app::App;
use crate::app::launch::Outcome;
use crate::source::opencode_db::{Db, DbEnv, event_log};

use crate::cli::PaceArgs;
use crate::cli::io::{Setup, Usage};
use crate::cli::replay::{Input, dump_input, viewer};

/// An SQLite file (by its header): read as opencode's database.
pub fn is_database(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == b"SQLite format 3\0")
}

/// The database opencode uses here, when it is there.
pub fn local_database() -> Option<PathBuf> {
    DbEnv::from_process().database().filter(|p| p.is_file())
}

fn shown(path: &Path) -> String {
    crate::model::wire::sanitize::line(&path.display().to_string()).into_owned()
}

/// Play (or `--dump`) one session of the database at `path`.
pub fn replay(
    setup: Setup,
    path: &Path,
    session: Option<String>,
    dump: bool,
    pace: PaceArgs,
) -> anyhow::Result<ExitCode> {
    let db = Db::open(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(wanted) = session else {
        return Err(Usage(format!(
            "{} is opencode's database: name the session to play with --session ID",
            shown(path)
        ))
        .into());
    };
    let id = resolve(&db, &wanted)?;
    let bytes = event_log::recording(&db, &id).map_err(|e| anyhow::anyhow!("{e}"))?;
    drop(db);
    let label = format!("replay {id}");
    if dump {
        return dump_input(Box::new(std::io::Cursor::new(bytes)), Path::new(&label));
    }
    viewer(
        setup,
        &label,
        Input::Bytes(bytes::Bytes::from(bytes)),
        pace,
        Some(id),
    )
}

/// A whole session id, or the one that starts with `wanted`.
fn resolve(db: &Db, wanted: &str) -> anyhow::Result<String> {
    if db
        .session(wanted)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .is_some()
    {
        return Ok(wanted.to_string());
    }
    let safe = wanted
        .replace('\'', "")
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    let like = db
        .query_strings(&format!(
            "SELECT id FROM session WHERE id LIKE '{safe}%' ESCAPE '\\' LIMIT 5"
        ))
        .unwrap_or_default()
        .into_iter()
        .filter(|id| id.starts_with(wanted))
        .collect::<Vec<_>>();
    match like.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(anyhow::anyhow!(
            "no session {} in {}",
            crate::model::wire::sanitize::line(wanted),
            shown(db.path())
        )),
        many => Err(anyhow::anyhow!(
            "{} names more than one session: {}",
            crate::model::wire::sanitize::line(wanted),
            many.iter()
                .map(|id| crate::model::wire::sanitize::line(id))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The viewer on the database's sessions alone.
pub fn history(setup: Setup, db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let Some(path) = db.or_else(|| DbEnv::from_process().database()) else {
        anyhow::bail!("no opencode database here (set OPENCODE_DB or XDG_DATA_HOME)");
    };
    // Said before any terminal is taken.
    Db::open(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if !std::io::stdout().is_terminal() {
        anyhow::bail!("standard output is not a terminal; the history viewer needs one");
    }
    let mut app = App::new(setup.config, "history", false).map_err(|e| anyhow::anyhow!("{e}"))?;
    // Searchable, and its sessions listed after the database's.
    crate::cli::archive_tap::connect_archive(&mut app, None, &setup.archive);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let outcome = rt.block_on(crate::app::launch::history::history_tui(app, path));
    rt.shutdown_background();
    Ok(match outcome? {
        Outcome::Done => ExitCode::SUCCESS,
        Outcome::Interrupted(code) => ExitCode::from(code),
    })
}
