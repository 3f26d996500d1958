//! The help overlay's keys: it takes every key; the list keys scroll it,
//! its own key or the list's close key close it.

use crossterm::event::KeyEvent;

use super::HelpState;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};

impl Component for HelpState {
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if cx.action(&key) == Some(Action::Help) {
            return Handled::Asks(Ask::Close);
        }
        match cx.only(Context::List, &key) {
            Some(Action::ListClose) => return Handled::Asks(Ask::Close),
            Some(Action::ListDown) => self.scroll = self.scroll.saturating_add(1),
            Some(Action::ListUp) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::ListPageDown) => self.scroll = self.scroll.saturating_add(10),
            Some(Action::ListPageUp) => self.scroll = self.scroll.saturating_sub(10),
            Some(Action::ListTop) => self.scroll = 0,
            Some(Action::ListBottom) => self.scroll = u16::MAX,
            _ => {}
        }
        Handled::Used
    }
}
