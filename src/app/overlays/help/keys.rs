//! The help overlay's keys: it takes every key; the list keys scroll it,
//! its own key or the list's close key close it.

use crossterm::event::KeyEvent;

use crate::app::App;
use crate::app::keymap::{Action, Context, Key};

impl App {
    /// The help overlay takes every key: the list keys scroll it, its own
    /// key or the list's close key closes it.
    pub(crate) fn help_key(&mut self, key: KeyEvent) {
        let k = Key::from_event(&key);
        let toggles = k.and_then(|k| self.keymap.action(self.context(), k)) == Some(Action::Help);
        match k.and_then(|k| self.keymap.only(Context::List, k)) {
            _ if toggles => self.overlay = None,
            Some(Action::ListClose) => self.overlay = None,
            Some(Action::ListDown) => self.help.scroll = self.help.scroll.saturating_add(1),
            Some(Action::ListUp) => self.help.scroll = self.help.scroll.saturating_sub(1),
            Some(Action::ListPageDown) => self.help.scroll = self.help.scroll.saturating_add(10),
            Some(Action::ListPageUp) => self.help.scroll = self.help.scroll.saturating_sub(10),
            Some(Action::ListTop) => self.help.scroll = 0,
            Some(Action::ListBottom) => self.help.scroll = u16::MAX,
            _ => {}
        }
    }
}
