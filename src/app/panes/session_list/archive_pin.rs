//! `M` on a session: pin it in the archive (a prune never takes it), or
//! unpin it; the archive's writer says what came of it.

use crate::app::App;

impl App {
    pub(crate) fn pin_session(&mut self) {
        let selected = self.selected.clone().unwrap_or_default();
        if selected.is_empty() || crate::app::session_tree::groups::is_group_key(&selected) {
            self.verbs.warn("M pins a session: select one");
            return;
        }
        match &self.archive.tap {
            Some(tap) => tap.toggle_pin(&selected),
            None => self.verbs.warn("the archive is off: nothing to pin in"),
        }
    }
}
