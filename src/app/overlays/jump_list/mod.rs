//! The prompt jump list (`i`): the session's user prompts with their
//! times; enter puts the chosen one at the top of the turn view. Built when
//! opened (one walk over the messages), drawn a screen at a time.

pub mod draw;

use crate::app::keymap::Action;
use crate::app::view::Jump;
use crate::app::{App, Overlay};
use crate::model::{PartBody, Session};

/// Characters of a prompt kept for its entry.
const ENTRY_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct PromptEntry {
    pub message_id: String,
    pub created: Option<i64>,
    /// The prompt's first non-empty line.
    pub text: String,
}

#[derive(Debug, Default)]
pub struct JumpList {
    pub session_id: String,
    pub entries: Vec<PromptEntry>,
    pub selected: usize,
    /// Rows the list showed last (for page keys), set when drawn.
    pub page: usize,
}

/// The user prompts of a session, oldest first.
pub fn prompt_entries(session: &Session) -> Vec<PromptEntry> {
    session
        .messages
        .iter()
        .filter(|m| m.info.is_user())
        .map(|m| {
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
            }
        })
        .collect()
}

impl App {
    /// Open the jump list on the prompt the view shows.
    pub(crate) fn open_jump_list(&mut self) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let entries = prompt_entries(session);
        if entries.is_empty() {
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
            None => entries.len() - 1,
        };
        self.jump_list = JumpList {
            session_id: session.info.id.clone(),
            entries,
            selected,
            page: self.jump_list.page.max(1),
        };
        self.overlay = Some(Overlay::Prompts);
    }

    /// A key of the list context while the jump list is open.
    pub(crate) fn jump_list_act(&mut self, action: Action) {
        let list = &mut self.jump_list;
        let last = list.entries.len().saturating_sub(1);
        let page = list.page.max(1);
        match action {
            Action::ListUp => list.selected = list.selected.saturating_sub(1),
            Action::ListDown => list.selected = (list.selected + 1).min(last),
            Action::ListPageUp => list.selected = list.selected.saturating_sub(page),
            Action::ListPageDown => list.selected = (list.selected + page).min(last),
            Action::ListTop => list.selected = 0,
            Action::ListBottom => list.selected = last,
            Action::ListChoose => {
                let chosen = list
                    .entries
                    .get(list.selected)
                    .map(|e| e.message_id.clone());
                let session = list.session_id.clone();
                self.overlay = None;
                if let Some(mid) = chosen
                    && self.selected.as_deref() == Some(session.as_str())
                    && let Some(t) = self.turn_state_mut()
                {
                    t.jump(Jump::ToMessage(mid));
                    self.focus = crate::app::Focus::Turns;
                }
            }
            Action::ListClose => self.overlay = None,
            _ => {}
        }
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
