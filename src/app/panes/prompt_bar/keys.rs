//! The prompt bar's keys: a prompt seen and armed takes its answers, the
//! text box takes every key while open, and looking around (next, view,
//! leave) is always allowed. Answers go out through the app
//! (`Ask::Reply`), never twice.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;

use super::answers::{EditorOwner, PERM_CHOICES, PermStep, PromptUi};
use crate::app::Overlay;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::model::{Prompt, PromptRequest};
use crate::source::live::reply::Reply;

impl Component for PromptUi {
    /// A key while the bar has focus (or its text box outlived its prompt).
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if self.editor_is_stale() {
            return self.stale_editor_key(key);
        }
        let Some((_, n, prompt)) = self.current_in(cx.store) else {
            return Handled::Passed;
        };
        let action = cx.only(Context::Prompt, &key);
        // A prompt the user may not have seen takes no answer: keys typed
        // for the one before (answered a moment ago) must not reach it.
        // Looking around (next, view, leave) is fine.
        let looking = matches!(
            action,
            Some(
                Action::PromptLater
                    | Action::PromptNext
                    | Action::PromptPrev
                    | Action::PromptView
                    | Action::PromptSession
            )
        );
        if !looking && !self.armed_at(cx.typed_at) {
            // Each dropped key starts the delay again: a typist still going
            // (a held key, the rest of an answer) has not looked yet.
            if let Some((_, since)) = &mut self.armed {
                *since = tokio::time::Instant::now();
            }
            self.dropped_while_arming = true;
            return Handled::Used;
        }
        let request = &prompt.request;
        // Typing: every key is text but the box's own two, enter (send
        // the rejection, or done with the own answer) and esc (back,
        // nothing changed); none reaches the bar's keys or a pane.
        if let Some(editor) = &mut self.editor {
            match (key.code, request) {
                (KeyCode::Esc, _) => self.close_editor(request, false),
                (KeyCode::Enter, PromptRequest::Permission(p)) => {
                    return Handled::Asks(Ask::Reply(Reply::Permission {
                        request_id: p.id.clone(),
                        reply: "reject".into(),
                        message: Some(editor.lines().join("\n")),
                    }));
                }
                (KeyCode::Enter, PromptRequest::Question(_)) => self.close_editor(request, true),
                _ => {
                    editor.input(key);
                }
            }
            return Handled::Used;
        }
        let viewing = cx.overlay == Some(Overlay::PromptView);
        // Everywhere in the bar.
        match action {
            Some(Action::PromptNext) => return self.move_prompt(cx, 1, n),
            Some(Action::PromptPrev) => return self.move_prompt(cx, -1, n),
            Some(Action::PromptSession) => {
                return Handled::Asks(Ask::ShowSession(request.session_id().to_string()));
            }
            Some(Action::PromptView) => {
                self.view_scroll = 0;
                return Handled::Asks(Ask::PromptView(!viewing));
            }
            _ => {}
        }
        if viewing {
            // The whole prompt scrolls with the list keys; the rest answer.
            let scroll = &mut self.view_scroll;
            match cx.only(Context::List, &key) {
                Some(Action::ListDown) => *scroll = scroll.saturating_add(1),
                Some(Action::ListUp) => *scroll = scroll.saturating_sub(1),
                Some(Action::ListPageDown) => *scroll = scroll.saturating_add(20),
                Some(Action::ListPageUp) => *scroll = scroll.saturating_sub(20),
                Some(Action::ListClose) => return Handled::Asks(Ask::PromptView(false)),
                _ => {
                    self.answered_in_view = true;
                    return self.answer_key(cx, action, key, prompt);
                }
            }
            return Handled::Used;
        }
        self.answer_key(cx, action, key, prompt)
    }
}

impl PromptUi {
    /// The last key answered with the whole prompt in view and asked for
    /// more (a text to type, "always" to confirm): the view makes way.
    pub fn view_makes_way(&mut self) -> bool {
        std::mem::take(&mut self.answered_in_view)
            && (self.editor.is_some() || self.step != PermStep::Choose)
    }

    /// Keys for a text box whose prompt is gone: typing goes on into it,
    /// enter or esc closes it; nothing is sent.
    fn stale_editor_key(&mut self, key: KeyEvent) -> Handled {
        match key.code {
            KeyCode::Esc | KeyCode::Enter => {
                let what = self.editor_for.take().map(|o| o.what);
                self.editor = None;
                Handled::Asks(Ask::Notice(format!(
                    "not sent: {} (that prompt is gone)",
                    what.as_deref().unwrap_or("the text")
                )))
            }
            _ => {
                if let Some(editor) = &mut self.editor {
                    editor.input(key);
                }
                Handled::Used
            }
        }
    }

    fn move_prompt(&mut self, cx: &Cx<'_>, by: i64, n: usize) -> Handled {
        let q = self.queue(cx.store);
        let cur = self.current_in(cx.store).map_or(0, |(i, _, _)| i) as i64;
        let next = (cur + by).rem_euclid(n.max(1) as i64) as usize;
        if let Some(p) = q.get(next) {
            self.current = Some(p.request.id().to_string());
            self.step = PermStep::Choose;
            self.choice = 0;
            self.chose = false;
            self.error = None;
        }
        Handled::Used
    }

    fn answer_key(
        &mut self,
        cx: &Cx<'_>,
        action: Option<Action>,
        key: KeyEvent,
        prompt: &Prompt,
    ) -> Handled {
        match &prompt.request {
            PromptRequest::Permission(p) => self.permission_key(cx, action, key, prompt, &p.id),
            PromptRequest::Question(q) => self.question_key(action, key, prompt, q),
        }
    }

    fn permission_key(
        &mut self,
        cx: &Cx<'_>,
        action: Option<Action>,
        key: KeyEvent,
        prompt: &Prompt,
        id: &str,
    ) -> Handled {
        let reply = |r: &str| {
            Handled::Asks(Ask::Reply(Reply::Permission {
                request_id: id.to_string(),
                reply: r.to_string(),
                message: None,
            }))
        };
        if self.step == PermStep::ConfirmAlways {
            match cx.only(Context::Confirm, &key) {
                Some(Action::Confirm) => return reply("always"),
                Some(Action::Cancel) => self.step = PermStep::Choose,
                _ => {}
            }
            return Handled::Used;
        }
        let chosen = match action {
            // Letters only by default: digits pick a question's options,
            // and a digit typed for a question must never answer a
            // permission.
            Some(Action::AllowOnce) => 0,
            Some(Action::AllowAlways) => 1,
            Some(Action::Reject) => 2,
            Some(Action::RejectMessage) => 3,
            // Enter picks only what the user highlighted; by default it
            // shows the whole prompt (the default is to look, not to allow).
            Some(Action::PromptEnter) if self.chose => self.choice,
            Some(Action::PromptEnter) => {
                self.view_scroll = 0;
                return Handled::Asks(Ask::PromptView(true));
            }
            Some(Action::ChoiceLeft) => {
                self.choice = self.choice.saturating_sub(1);
                self.chose = true;
                return Handled::Used;
            }
            Some(Action::ChoiceRight) => {
                self.choice = (self.choice + 1).min(PERM_CHOICES.len() - 1);
                self.chose = true;
                return Handled::Used;
            }
            Some(Action::PromptLater) => return Handled::Asks(Ask::LeavePrompt),
            _ => return Handled::Passed,
        };
        match chosen {
            0 => return reply("once"),
            1 => {
                self.choice = 1;
                self.step = PermStep::ConfirmAlways;
            }
            2 => return reply("reject"),
            3 => {
                self.choice = 3;
                self.step = PermStep::RejectMessage;
                self.open_editor(prompt, "reject with a message", TextArea::default());
            }
            _ => {}
        }
        Handled::Used
    }

    /// Open the text box for a prompt, remembering which.
    pub(super) fn open_editor(&mut self, prompt: &Prompt, what: &str, editor: TextArea<'static>) {
        let subject = crate::model::entity::prompt::describe(&prompt.request).1;
        self.editor_for = Some(EditorOwner {
            request_id: prompt.request.id().to_string(),
            what: format!("{what} ({})", crate::model::wire::sanitize::line(&subject)),
        });
        self.editor = Some(editor);
    }

    /// Leave the text box; for a question, `keep` what was typed as the
    /// own answer to the question it was opened on.
    fn close_editor(&mut self, request: &PromptRequest, keep: bool) {
        let Some(editor) = self.editor.take() else {
            return;
        };
        self.editor_for = None;
        match request {
            PromptRequest::Question(q) if keep => {
                if let Some(d) = self.drafts.get_mut(&q.id) {
                    let tab = d.tab.min(d.typed.len().saturating_sub(1));
                    d.typed_done(q, tab, editor.lines().join("\n"));
                }
            }
            PromptRequest::Permission(_) => self.step = PermStep::Choose,
            _ => {}
        }
    }
}
