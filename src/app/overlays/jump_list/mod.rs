//! The prompt jump list (`i`): every user prompt of the session with its
//! time; enter puts the chosen one at the top of the turn view. A live
//! session's older pages are asked for when it opens and their prompts join
//! the list as they come (a "loading older…" row says so meanwhile); `/`
//! filters it as you type. Built when opened and when a page arrives (one
//! walk over the messages), drawn a screen at a time.

pub mod draw;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::component::{Ask, Component, Cx, Handled, list_move};
use crate::app::keymap::{Action, Context};
use crate::app::{App, Overlay};
use crate::model::{PartBody, Session};

/// Characters of a prompt kept for its entry.
const ENTRY_CHARS: usize = 200;
/// Characters of a filter.
const FILTER_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct PromptEntry {
    pub message_id: String,
    pub created: Option<i64>,
    /// The prompt's first non-empty line.
    pub text: String,
    /// Its place among the session's loaded prompts, from 1.
    pub number: usize,
}

#[derive(Debug, Default)]
pub struct JumpList {
    pub session_id: String,
    /// Every prompt loaded.
    all: Vec<PromptEntry>,
    /// The prompts the filter keeps (all of them without one).
    pub entries: Vec<PromptEntry>,
    pub selected: usize,
    /// Rows the list showed last (for page keys), set when drawn.
    pub page: usize,
    /// What `/` typed: entries hold it (case-insensitive).
    pub filter: String,
    /// Keys go to the filter.
    pub typing: bool,
}

impl JumpList {
    /// Keep the entries the filter holds, the chosen one chosen still.
    fn refilter(&mut self, keep: Option<String>) {
        let needle = self.filter.to_lowercase();
        self.entries = self
            .all
            .iter()
            .filter(|e| needle.is_empty() || e.text.to_lowercase().contains(&needle))
            .cloned()
            .collect();
        self.selected = keep
            .and_then(|id| self.entries.iter().position(|e| e.message_id == id))
            .unwrap_or(self.selected)
            .min(self.entries.len().saturating_sub(1));
    }

    fn chosen_id(&self) -> Option<String> {
        self.entries
            .get(self.selected)
            .map(|e| e.message_id.clone())
    }
}

/// The user prompts of a session, oldest first.
pub fn prompt_entries(session: &Session) -> Vec<PromptEntry> {
    session
        .messages
        .iter()
        .filter(|m| m.info.is_user())
        .enumerate()
        .map(|(i, m)| {
            let text = m
                .parts
                .iter()
                .filter_map(|p| match &p.body {
                    PartBody::Text(t) if !t.synthetic => Some(t.text.as_str()),
                    PartBody::Subtask(s) => Some(s.prompt.as_str()),
                    _ => None,
                })
                .flat_map(str::lines)
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| l.chars().take(ENTRY_CHARS).collect())
                .unwrap_or_else(|| "(no text)".to_string());
            PromptEntry {
                message_id: m.info.id.clone(),
                created: m.info.created,
                text,
                number: i + 1,
            }
        })
        .collect()
}

impl App {
    /// Open the jump list on the prompt the view shows; a live session's
    /// older pages are asked for.
    pub(crate) fn open_jump_list(&mut self) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let id = session.info.id.clone();
        let entries = prompt_entries(session);
        let whole = self.history_whole(&id);
        if entries.is_empty() && whole {
            self.verbs.say("no prompts in this session");
            return;
        }
        // The prompt of the turn at the top of the view.
        let top = self.turn_state().map_or(usize::MAX, |t| t.position.0);
        let top_id = session.messages.get(top).map(|m| m.info.id.clone());
        let selected = match top_id {
            Some(id) => entries
                .iter()
                .rposition(|e| e.message_id <= id)
                .unwrap_or(0),
            None => entries.len().saturating_sub(1),
        };
        self.overlays.jump_list = JumpList {
            session_id: id.clone(),
            all: entries.clone(),
            entries,
            selected,
            page: self.overlays.jump_list.page.max(1),
            ..Default::default()
        };
        self.overlay = Some(Overlay::Prompts);
        if !whole {
            self.load_whole(&id);
        }
    }

    /// Older prompts still to come: the session is not loaded whole.
    pub fn jump_list_loading(&self) -> bool {
        !self.history_whole(&self.overlays.jump_list.session_id)
    }

    /// A page of `session_id` came in: its prompts join the open list.
    pub(crate) fn refresh_jump_list(&mut self, session_id: &str) {
        if self.overlay != Some(Overlay::Prompts)
            || self.overlays.jump_list.session_id != session_id
        {
            return;
        }
        let Some(session) = self.store.session(session_id) else {
            return;
        };
        let keep = self.overlays.jump_list.chosen_id();
        self.overlays.jump_list.all = prompt_entries(session);
        self.overlays.jump_list.refilter(keep);
    }
}

impl Component for JumpList {
    /// A key while the jump list is open: the filter's while it is typed
    /// (`/` starts it), else the list context's.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if self.typing {
            let keep = self.chosen_id();
            match key.code {
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    if self.filter.chars().count() < FILTER_CHARS {
                        self.filter.push(c);
                    }
                    self.refilter(keep);
                    return Handled::Used;
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                    self.refilter(keep);
                    return Handled::Used;
                }
                KeyCode::Esc => {
                    self.typing = false;
                    self.filter.clear();
                    self.refilter(keep);
                    return Handled::Used;
                }
                _ => {}
            }
        } else if key.code == KeyCode::Char('/') {
            self.typing = true;
            return Handled::Used;
        } else if key.code == KeyCode::Esc && !self.filter.is_empty() {
            let keep = self.chosen_id();
            self.filter.clear();
            self.refilter(keep);
            return Handled::Used;
        }
        let action = cx.only(Context::List, &key);
        if let Some(to) =
            action.and_then(|a| list_move(a, self.selected, self.entries.len(), self.page))
        {
            self.selected = to;
            return Handled::Used;
        }
        match action {
            Some(Action::ListChoose) => {
                return Handled::Asks(match self.chosen_id() {
                    Some(message) => Ask::JumpTo {
                        session: self.session_id.clone(),
                        message,
                    },
                    None => Ask::Close,
                });
            }
            Some(Action::ListClose) => return Handled::Asks(Ask::Close),
            _ => {}
        }
        Handled::Used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_take_the_first_line_of_user_text() {
        let bytes = br#"{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"s","role":"user","time":{"created":5}}}}
{"type":"message.part.updated","properties":{"part":{"id":"p1","messageID":"msg_1","sessionID":"s","type":"text","text":"\n  fix the bug\nplease"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_2","sessionID":"s","role":"assistant","parentID":"msg_1"}}}
{"type":"message.part.updated","properties":{"part":{"id":"p2","messageID":"msg_2","sessionID":"s","type":"text","text":"done"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_3","sessionID":"s","role":"user"}}}
"#;
        let mut reader = crate::source::ReplayReader::new(&bytes[..]);
        let mut store = crate::model::Store::new();
        crate::source::ingest(&mut reader, &mut store, &mut crate::model::NoObserver).unwrap();
        let entries = prompt_entries(store.session("s").unwrap());
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, "fix the bug");
        assert_eq!(entries[0].created, Some(5));
        assert_eq!(entries[1].text, "(no text)");
    }
}
