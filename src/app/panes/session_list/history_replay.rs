//! `R` on a session listed from opencode's database: the session's event
//! log played in the player (`ocview replay DB --session ID`), with the
//! terminal handed over until it ends.

use crate::app::App;
use crate::app::verbs::Request;
use crate::model::store::fleet;
use crate::source::opencode_db::history::HISTORY_KEY;

impl App {
    /// The arguments that replay the selected history session, or why not.
    pub fn history_replay_argv(&self) -> Result<Vec<std::ffi::OsString>, String> {
        let id = self
            .selected
            .as_deref()
            .filter(|id| fleet::server_of(id) == Some(HISTORY_KEY))
            .ok_or("R replays a session of the history group (opencode's database)")?;
        let db = self
            .store
            .server(HISTORY_KEY)
            .map(|s| s.url.clone())
            .filter(|p| !p.is_empty())
            .ok_or("opencode's database is not known")?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find ocview itself: {e}"))?;
        Ok(vec![
            exe.into(),
            "replay".into(),
            db.into(),
            "--session".into(),
            fleet::bare(id).into(),
        ])
    }

    pub(crate) fn replay_history(&mut self) {
        match self.history_replay_argv() {
            Ok(argv) => {
                self.verbs.request = Some(Request::Run {
                    argv,
                    what: "the replay".into(),
                })
            }
            Err(why) => self.verbs.warn(why),
        }
    }
}
