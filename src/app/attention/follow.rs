//! Following attention (`--follow`): until the user
//! navigates, the turn view shows the session that asks for an answer, or
//! else the one where something last happened. The first navigation key
//! hands the view over to the user for good.

use crate::app::App;
use crate::app::keymap::{Action, Context};

impl App {
    /// A message or part of this session just changed.
    /// The archive's copies load, they do not happen: not followed.
    pub(crate) fn note_activity(&mut self, session_id: &str, is_content: bool) {
        use crate::app::session_tree::copies;
        if is_content && !copies::is_archived(session_id) {
            self.last_active = Some(session_id.to_string());
        }
    }

    /// Whether the view still follows attention.
    pub fn following_attention(&self) -> bool {
        self.config.follow_attention && !self.navigated
    }

    /// Before a frame: show the session that wants attention.
    pub(crate) fn follow_attention(&mut self) {
        if !self.following_attention() {
            return;
        }
        let asking = self
            .prompt_queue()
            .first()
            .map(|p| p.request.session_id().to_string());
        let Some(target) = asking.or_else(|| self.last_active.clone()) else {
            return;
        };
        if self.selected.as_deref() != Some(target.as_str())
            && self.store.session(&target).is_some()
        {
            self.selected = Some(target);
            self.history.clear();
        }
    }

    /// Keys that move around the sessions or the turns end following.
    pub(crate) fn note_navigation(&mut self, action: Action) {
        let navigates = matches!(action.context(), Context::Sessions | Context::Turns)
            || matches!(action, Action::Filter | Action::Back);
        if navigates {
            self.navigated = true;
        }
    }
}
