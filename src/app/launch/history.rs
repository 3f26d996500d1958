//! Starting the reader of opencode's database (every past session, in the
//! list beside the live servers); the app's requests reach it through
//! `archive_list::route`.

use tokio::sync::mpsc;

use crate::app::App;
use crate::app::launch::{Outcome, tui};
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::opencode_db::DbEnv;
use crate::source::opencode_db::history::{self, HistoryHandle};

/// The database reader, when this environment names a database that is
/// there (a missing file is no history, not an error).
pub fn spawn(tx: mpsc::Sender<SourceMsg>) -> Option<HistoryHandle> {
    let path = DbEnv::from_process().database()?;
    if !path.exists() {
        return None;
    }
    tracing::info!("history from {}", path.display());
    Some(history::spawn(path, tx))
}

/// `ocview history` (and `ocview` with no server found): the database's
/// sessions, and the archive's (when on) after them.
pub async fn history_tui(mut app: App, path: std::path::PathBuf) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    // The archive's sessions after the database's.
    let archive = super::archive_list::spawn(&mut app, None, tx.clone());
    open_database(&mut app, path, tx, archive);
    tui(app, rx).await
}

/// The viewer on the database at `path`: its reader started and routed
/// to (with the archive's list, when given); the usage view (`u`) reads
/// this database too, not the one this machine's opencode uses.
pub fn open_database(
    app: &mut App,
    path: std::path::PathBuf,
    tx: mpsc::Sender<SourceMsg>,
    archive: Option<crate::archive::list_reader::ArchiveListHandle>,
) {
    app.overlays.usage.db = Some(path.clone());
    let handle = history::spawn(path, tx);
    app.live = Some(super::archive_list::route(None, Some(handle), archive));
    app.source.state = SourceState::Live;
}
