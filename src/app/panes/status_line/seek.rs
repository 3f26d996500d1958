//! Typing where to seek (`:`), shown in the status line.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::component::{Ask, Component, Cx, Handled};

/// Characters a seek may have ("12:34.5", "-30s", "75%").
const SEEK_CHARS: usize = 16;

/// A seek being typed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SeekInput {
    pub text: String,
}

impl Component for SeekInput {
    /// Letters type, enter seeks, esc leaves; other keys go to the pane.
    fn key(&mut self, key: KeyEvent, _cx: &Cx<'_>) -> Handled {
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                if self.text.len() < SEEK_CHARS {
                    self.text.push(c);
                }
            }
            KeyCode::Backspace => {
                self.text.pop();
            }
            KeyCode::Enter if self.text.trim().is_empty() => return Handled::Asks(Ask::Close),
            KeyCode::Enter => return Handled::Asks(Ask::Seek(std::mem::take(&mut self.text))),
            KeyCode::Esc => return Handled::Asks(Ask::Close),
            _ => return Handled::Passed,
        }
        Handled::Used
    }
}
