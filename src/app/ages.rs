//! Ages on screen ("5m", "3h"): when the next one will read differently,
//! so the loop draws then, and not every second while idle.

use crate::app::App;
use crate::render::format;

impl App {
    /// When (wall clock, ms) an age in the session list last drawn at
    /// `now_ms` next changes; `None` in a replay, whose ages are measured
    /// against the recording's clock and so never move on their own.
    pub fn ages_change_at(&self) -> Option<i64> {
        if self.source.recorded {
            return None;
        }
        let sessions = self.store.sessions();
        self.panes
            .list
            .rows
            .iter()
            .filter(|row| row.header.is_none())
            .filter_map(|row| sessions.get(row.index))
            .filter_map(|s| format::updated(s))
            .map(|then| format::relative_changes_at(then, self.now_ms))
            .min()
    }
}
