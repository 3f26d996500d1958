//! The diff view's keys: choose a file, scroll its diff, close.

use crossterm::event::KeyEvent;

use super::DiffViewState;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};

impl Component for DiffViewState {
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let files = cx.session().map_or(0, |s| s.modified_files().len());
        match cx.only(Context::Diff, &key) {
            Some(Action::DiffClose) => return Handled::Asks(Ask::Close),
            Some(Action::DiffNextFile) => {
                self.file = (self.file + 1).min(files.saturating_sub(1));
                self.scroll = 0;
            }
            Some(Action::DiffPrevFile) => {
                self.file = self.file.saturating_sub(1);
                self.scroll = 0;
            }
            Some(Action::DiffScrollDown) => self.scroll = self.scroll.saturating_add(10),
            Some(Action::DiffScrollUp) => self.scroll = self.scroll.saturating_sub(10),
            Some(Action::DiffPageDown) => self.scroll = self.scroll.saturating_add(20),
            Some(Action::DiffPageUp) => self.scroll = self.scroll.saturating_sub(20),
            Some(Action::DiffTop) => self.scroll = 0,
            _ => {}
        }
        Handled::Used
    }
}
