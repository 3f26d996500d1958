//! A question's keys in the prompt bar: pick options by number or with
//! the highlight, type an own answer, review, send or dismiss.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use super::answers::PromptUi;
use super::questions::{Draft, pick};
use crate::app::component::{Ask, Handled};
use crate::app::keymap::Action;
use crate::model::{Prompt, QuestionRequest};
use crate::source::live::reply::Reply;

impl PromptUi {
    pub(super) fn question_key(
        &mut self,
        action: Option<Action>,
        key: KeyEvent,
        prompt: &Prompt,
        q: &QuestionRequest,
    ) -> Handled {
        let draft = self
            .drafts
            .entry(q.id.clone())
            .or_insert_with(|| Draft::new(q));
        let review = q.questions.len();
        let tab = draft.tab.min(review);
        if tab == review {
            match action {
                Some(Action::PromptEnter | Action::QuestionReview) => {
                    return Handled::Asks(Ask::Reply(Reply::Answer {
                        request_id: q.id.clone(),
                        answers: draft.answers(q),
                    }));
                }
                Some(Action::ChoiceLeft) => draft.tab = review.saturating_sub(1),
                Some(Action::QuestionDismiss) => {
                    return Handled::Asks(Ask::Reply(Reply::Dismiss {
                        request_id: q.id.clone(),
                    }));
                }
                Some(Action::PromptLater) => return Handled::Asks(Ask::LeavePrompt),
                _ => {}
            }
            return Handled::Used;
        }
        let question = &q.questions[tab];
        let custom_allowed = question.custom != Some(false);
        let last = question.options.len() + usize::from(custom_allowed);
        // Digits pick an option by its number, the own answer's included:
        // fixed, like the numbers shown.
        if let KeyCode::Char(c @ '1'..='9') = key.code
            && !key.modifiers.contains(KeyModifiers::CONTROL)
        {
            let o = (c as u8 - b'1') as usize;
            if o < question.options.len() {
                draft.cursor = o;
                pick(draft, tab, o, question.multiple);
                if !question.multiple {
                    draft.tab = (tab + 1).min(review);
                    draft.cursor = 0;
                }
            } else if o == question.options.len() && custom_allowed {
                draft.cursor = o;
                self.open_own_answer(prompt, q, tab);
            }
            return Handled::Used;
        }
        match action {
            Some(Action::ChoiceRight) => {
                draft.tab = (tab + 1).min(review);
                draft.cursor = 0;
            }
            Some(Action::ChoiceLeft) => {
                draft.tab = tab.saturating_sub(1);
                draft.cursor = 0;
            }
            Some(Action::OptionDown) => {
                draft.cursor = (draft.cursor + 1).min(last.saturating_sub(1))
            }
            Some(Action::OptionUp) => draft.cursor = draft.cursor.saturating_sub(1),
            // Enter on a multiple-choice question confirms the picks and moves on.
            Some(Action::PromptEnter)
                if question.multiple && draft.cursor < question.options.len() =>
            {
                draft.tab = (tab + 1).min(review);
                draft.cursor = 0;
            }
            Some(Action::OptionToggle | Action::PromptEnter) => {
                if draft.cursor == question.options.len() && custom_allowed {
                    self.open_own_answer(prompt, q, tab);
                } else if draft.cursor < question.options.len() {
                    pick(draft, tab, draft.cursor, question.multiple);
                    if !question.multiple {
                        draft.tab = (tab + 1).min(review);
                        draft.cursor = 0;
                    }
                }
            }
            Some(Action::QuestionReview) => draft.tab = review,
            Some(Action::QuestionDismiss) => {
                return Handled::Asks(Ask::Reply(Reply::Dismiss {
                    request_id: q.id.clone(),
                }));
            }
            Some(Action::PromptLater) => return Handled::Asks(Ask::LeavePrompt),
            _ => return Handled::Passed,
        }
        Handled::Used
    }

    /// The text box for the own answer to the question on `tab`, holding
    /// what was typed for it before. Every key is text until enter or esc
    /// (the bar's `key` routes them).
    fn open_own_answer(&mut self, prompt: &Prompt, q: &QuestionRequest, tab: usize) {
        let typed = self
            .drafts
            .get(&q.id)
            .and_then(|d| d.typed.get(tab))
            .cloned()
            .unwrap_or_default();
        let mut editor = TextArea::new(typed.lines().map(str::to_string).collect());
        editor.move_cursor(ratatui_textarea::CursorMove::Bottom);
        editor.move_cursor(ratatui_textarea::CursorMove::End);
        self.open_editor(prompt, "your own answer", editor);
    }
}
