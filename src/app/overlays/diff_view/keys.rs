//! The diff view's keys: choose a file, scroll its diff, close.

use crossterm::event::KeyEvent;

use crate::app::App;
use crate::app::keymap::{Action, Context, Key};

impl App {
    /// The diff overlay's keys: choose a file, scroll its diff, close.
    pub(crate) fn diff_key(&mut self, key: KeyEvent) {
        let files = self
            .selected_session()
            .map_or(0, |s| s.modified_files().len());
        let Some(action) = Key::from_event(&key).and_then(|k| self.keymap.only(Context::Diff, k))
        else {
            return;
        };
        match action {
            Action::DiffClose => self.overlay = None,
            Action::DiffNextFile => {
                self.diff.file = (self.diff.file + 1).min(files.saturating_sub(1));
                self.diff.scroll = 0;
            }
            Action::DiffPrevFile => {
                self.diff.file = self.diff.file.saturating_sub(1);
                self.diff.scroll = 0;
            }
            Action::DiffScrollDown => self.diff.scroll = self.diff.scroll.saturating_add(10),
            Action::DiffScrollUp => self.diff.scroll = self.diff.scroll.saturating_sub(10),
            Action::DiffPageDown => self.diff.scroll = self.diff.scroll.saturating_add(20),
            Action::DiffPageUp => self.diff.scroll = self.diff.scroll.saturating_sub(20),
            Action::DiffTop => self.diff.scroll = 0,
            _ => {}
        }
    }
}
