//! Turns: a user message and every assistant message whose parentID is it.

use super::message::Message;

#[derive(Debug, Clone)]
pub struct Turn<'a> {
    /// The prompting user message; `None` for assistant messages whose parent
    /// we have not seen (a capture that started mid-turn).
    pub user: Option<&'a Message>,
    pub assistants: Vec<&'a Message>,
}

impl Turn<'_> {
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.user.into_iter().chain(self.assistants.iter().copied())
    }
}

/// Group messages (ordered by id) into turns. Assistant messages attach to the
/// turn of their parent; one without a known parent opens a turn of its own.
pub fn group_turns(messages: &[Message]) -> Vec<Turn<'_>> {
    let mut turns: Vec<Turn> = Vec::new();
    for m in messages {
        if m.info.is_assistant() {
            let parent = m.info.parent_id.as_deref();
            // Almost always the newest turn; search back only when it is not.
            let found = turns
                .iter_mut()
                .rev()
                .find(|t| parent.is_some() && t.user.map(|u| u.info.id.as_str()) == parent);
            match found {
                Some(turn) => turn.assistants.push(m),
                None => turns.push(Turn {
                    user: None,
                    assistants: vec![m],
                }),
            }
        } else {
            turns.push(Turn {
                user: Some(m),
                assistants: Vec::new(),
            });
        }
    }
    turns
}
