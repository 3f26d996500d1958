//! Typing where to seek (`:`), shown in the status line.

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::App;

impl App {
    /// Typing where to seek. Returns whether the key was used.
    pub(crate) fn seek_key(&mut self, key: KeyEvent) -> bool {
        let Some(text) = self.seek_input.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                if text.len() < 16 {
                    text.push(c);
                }
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let text = self.seek_input.take().unwrap_or_default();
                if !text.trim().is_empty() {
                    self.seek_typed(&text);
                }
            }
            KeyCode::Esc => self.seek_input = None,
            _ => return false,
        }
        true
    }
}
