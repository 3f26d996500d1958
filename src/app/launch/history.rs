//! Starting the reader of opencode's database (every past session, in the
//! list beside the live servers), and routing the app's page requests: a
//! session listed from the database goes to that reader, any other to its
//! live server.

use tokio::sync::mpsc;

use crate::app::App;
use crate::app::launch::{Outcome, tui};
use crate::model::store::fleet;
use crate::source::live::LiveCommand;
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::opencode_db::DbEnv;
use crate::source::opencode_db::history::{self, HISTORY_KEY, HistoryHandle};

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

/// One sender for the app's requests: the database's sessions to
/// `history`, the others to `live` (a fleet's, when there is one).
pub fn route(
    live: Option<mpsc::UnboundedSender<LiveCommand>>,
    history: HistoryHandle,
) -> mpsc::UnboundedSender<LiveCommand> {
    let (tx, mut rx) = mpsc::unbounded_channel::<LiveCommand>();
    tokio::spawn(async move {
        while let Some(cmd) = rx.recv().await {
            let id = match &cmd {
                LiveCommand::Open(id) | LiveCommand::Older(id) | LiveCommand::AllOlder(id) => id,
            };
            if fleet::server_of(id) == Some(HISTORY_KEY) {
                let bare = fleet::bare(id).to_string();
                let cmd = match cmd {
                    LiveCommand::Open(_) => LiveCommand::Open(bare),
                    LiveCommand::Older(_) => LiveCommand::Older(bare),
                    LiveCommand::AllOlder(_) => LiveCommand::AllOlder(bare),
                };
                history.send(cmd);
            } else if let Some(live) = &live {
                let _ = live.send(cmd);
            }
        }
    });
    tx
}

/// `ocview history` (and `ocview` with no server found): the database's
/// sessions alone.
pub async fn history_tui(mut app: App, path: std::path::PathBuf) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    let handle = history::spawn(path, tx);
    app.live = Some(route(None, handle));
    app.source.state = SourceState::Live;
    tui(app, rx).await
}
