//! `R` on a session listed from opencode's database or the archive: the
//! session's event log played in the player (`ocview replay DB --session
//! ID`, `ocview archive replay ID`), with the terminal handed over until it
//! ends.

use crate::app::App;
use crate::app::msg::Request;
use crate::archive::Setting;
use crate::archive::list_reader::is_archive_key;
use crate::model::store::fleet;
use crate::source::opencode_db::history::HISTORY_KEY;

impl App {
    /// The arguments that replay the selected history or archived
    /// session, or why not.
    pub fn history_replay_argv(&self) -> Result<Vec<std::ffi::OsString>, String> {
        let exe = || std::env::current_exe().map_err(|e| format!("cannot find ocview itself: {e}"));
        let selected = self.selected.as_deref().unwrap_or_default();
        if fleet::server_of(selected).is_some_and(is_archive_key) {
            // Its event log, as `ocview archive replay` plays it; the URL
            // never holds a password (refused when given).
            let archive = match &self.archive.setting {
                Some(Setting::Sqlite(path)) => path.clone().into_os_string(),
                Some(Setting::Postgres(url)) => url.into(),
                _ => return Err("the archive is off".into()),
            };
            return Ok(vec![
                exe()?.into(),
                "--archive".into(),
                archive,
                "archive".into(),
                "replay".into(),
                fleet::bare(selected).into(),
            ]);
        }
        let id = Some(selected)
            .filter(|id| fleet::server_of(id) == Some(HISTORY_KEY))
            .ok_or(
                "R replays a session of the history group (opencode's database) or of the archive",
            )?;
        let db = self
            .store
            .server(HISTORY_KEY)
            .map(|s| s.url.clone())
            .filter(|p| !p.is_empty())
            .ok_or("opencode's database is not known")?;
        Ok(vec![
            exe()?.into(),
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
