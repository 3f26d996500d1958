//! Starting the archive's list reader (every archived session, in the list
//! after the live servers and opencode's database), and routing the app's
//! page requests among the three: a session listed from the archive goes
//! to its reader, one from the database to that reader, any other to its
//! live server.

use tokio::sync::mpsc;

use crate::app::App;
use crate::app::session_tree::groups;
use crate::archive::Setting;
use crate::archive::list_reader::{self, ArchiveListHandle, Scope, is_archive_key};
use crate::model::store::fleet;
use crate::source::live::LiveCommand;
use crate::source::msg::SourceMsg;
use crate::source::opencode_db::history::{HISTORY_KEY, HistoryHandle};

/// The archive's reader for `app`'s list, when there is an archive; with
/// `scope`, it lists only those servers' sessions (`ocview attach URL…`).
/// Its heading starts folded.
pub fn spawn(
    app: &mut App,
    scope: Option<Scope>,
    tx: mpsc::Sender<SourceMsg>,
) -> Option<ArchiveListHandle> {
    match &app.archive.setting {
        None | Some(Setting::Off) => None,
        Some(setting) => {
            let handle = list_reader::spawn(setting.clone(), scope, tx);
            app.panes.list.folded.insert(groups::archive_group_key());
            Some(handle)
        }
    }
}

/// The heading of a single server's own sessions (ids not scoped) when
/// the archive's are listed beside them: its address, as a fleet's key.
pub fn live_heading(base: &str) -> String {
    let address = base.split_once("://").map_or(base, |(_, rest)| rest);
    let address = address.strip_suffix('/').unwrap_or(address);
    crate::model::wire::sanitize::line(address).into_owned()
}

/// One sender for the app's requests: the archive's sessions to
/// `archive` (scoped ids: its reader scopes what it sends back), the
/// database's to `history` (bare ids), the others to `live`.
pub fn route(
    live: Option<mpsc::UnboundedSender<LiveCommand>>,
    history: Option<HistoryHandle>,
    archive: Option<ArchiveListHandle>,
) -> mpsc::UnboundedSender<LiveCommand> {
    let (tx, mut rx) = mpsc::unbounded_channel::<LiveCommand>();
    tokio::spawn(async move {
        while let Some(cmd) = rx.recv().await {
            let id = cmd.session();
            match fleet::server_of(id) {
                Some(key) if is_archive_key(key) => {
                    if let Some(archive) = &archive {
                        archive.send(cmd);
                    }
                }
                Some(HISTORY_KEY) => {
                    if let Some(history) = &history {
                        let bare = fleet::bare(id).to_string();
                        history.send(cmd.for_session(bare));
                    }
                }
                _ => {
                    if let Some(live) = &live {
                        let _ = live.send(cmd);
                    }
                }
            }
        }
    });
    tx
}
