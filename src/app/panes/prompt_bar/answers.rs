//! Answering: one queue of every pending permission and question, of every
//! session at any depth, in arrival order. The prompt bar is a layer that
//! sees keys first while focused; answers are queued to the reply task and
//! can never be sent twice.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;
use tokio::time::Instant;

use crate::app::keymap::{Action, Context, Key};
use crate::app::panes::prompt_bar::questions::Draft;
use crate::app::{App, Focus, Overlay};
use crate::model::{PartBody, Prompt, PromptRequest};
use crate::source::live::reply::Reply;
use crate::source::msg::ReplyOutcome;

/// The text box of the prompt bar, and the prompt it was opened for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorOwner {
    pub request_id: String,
    /// "reject with a message: bash", for when that prompt is gone.
    pub what: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermStep {
    #[default]
    Choose,
    /// "Always" lists what the server will remember, and asks again.
    ConfirmAlways,
    /// Typing the message that goes with a rejection.
    RejectMessage,
}

/// The four answers to a permission, in bar order.
pub const PERM_CHOICES: [(&str, &str); 4] = [
    ("y", "allow once"),
    ("a", "allow always"),
    ("n", "reject"),
    ("m", "reject with a message"),
];

#[derive(Default)]
pub struct PromptUi {
    /// The prompt shown (by request id).
    pub current: Option<String>,
    pub step: PermStep,
    /// The highlighted permission choice.
    pub choice: usize,
    pub drafts: HashMap<String, Draft>,
    /// The text being typed: a rejection message or an own answer.
    pub editor: Option<TextArea<'static>>,
    /// The prompt the text box was opened for.
    pub editor_for: Option<EditorOwner>,
    /// Answers on their way; a second press does nothing.
    pub sending: HashSet<String>,
    /// Answers the server took: hidden until its event settles them.
    pub sent: HashSet<String>,
    pub error: Option<String>,
    /// Focus to return to when the bar lets go.
    pub prior_focus: Option<Focus>,
    /// Scroll of the full-screen view.
    pub view_scroll: u16,
    /// The user moved the highlight with ←/→: only then does Enter pick a
    /// permission answer (by default it shows the whole prompt).
    pub chose: bool,
    /// The prompt the frame being laid out shows with its choices, nothing
    /// over them (`None`: covered, unfocused or none).
    pub visible: Option<String>,
    /// The prompt a flushed frame showed uncovered, and when that frame
    /// went out (or a key was last dropped): answers wait `arming` after.
    pub armed: Option<(String, Instant)>,
    /// How long a prompt that took focus ignores answering keys.
    pub arming: Duration,
    /// A key was ignored while arming (the bar says why).
    pub dropped_while_arming: bool,
    /// The frame being drawn shows the focused prompt still arming.
    pub arming_shown: bool,
}

/// Sort key for arrival order across kinds: `per_` and `que_` ids share
/// opencode's clock after their prefix.
fn arrival(p: &Prompt) -> &str {
    p.request.id().get(4..).unwrap_or("")
}

impl App {
    /// Every prompt waiting for an answer, oldest first. A permission whose
    /// tool is no longer running (its session was aborted) is not offered.
    pub fn prompt_queue(&self) -> Vec<&Prompt> {
        let mut q: Vec<&Prompt> = self
            .store
            .pending_prompts()
            .filter(|p| !self.prompts.sent.contains(p.request.id()))
            .filter(|p| !self.tool_finished(p))
            .collect();
        q.sort_by(|a, b| arrival(a).cmp(arrival(b)));
        q
    }

    fn tool_finished(&self, p: &Prompt) -> bool {
        let (PromptRequest::Permission(_), Some(tool)) = (&p.request, p.request.tool()) else {
            return false;
        };
        let Some(part) = self
            .store
            .session(p.request.session_id())
            .and_then(|s| s.message(&tool.message_id))
            .and_then(|m| {
                m.parts
                    .iter()
                    .find(|part| part.tool().is_some_and(|t| t.call_id == tool.call_id))
            })
        else {
            return false;
        };
        matches!(&part.body, PartBody::Tool(t) if t.state.status.is_terminal())
    }

    /// The prompt the bar shows, and its place in the queue.
    pub fn current_prompt(&self) -> Option<(usize, usize, &Prompt)> {
        let q = self.prompt_queue();
        let n = q.len();
        let i = self
            .prompts
            .current
            .as_ref()
            .and_then(|id| q.iter().position(|p| p.request.id() == id))
            .unwrap_or(0);
        q.get(i).map(|p| (i, n, *p))
    }

    /// Keep the bar on a prompt that is still there; take focus when the
    /// first prompt arrives (live, answerable only).
    pub fn refresh_prompts(&mut self) {
        if !self.source.recorded {
            let arrived: Vec<(String, String)> = self
                .prompt_queue()
                .iter()
                .map(|p| {
                    let (kind, subject) = crate::model::entity::prompt::describe(&p.request);
                    let what = format!("{kind}: {subject}");
                    let session = p.request.session_id();
                    let text = crate::app::attention::about(&self.store, session, &what);
                    (p.request.id().to_string(), text)
                })
                .collect();
            for (id, text) in arrived {
                self.attention.raise(&id, text);
            }
        }
        let current = self
            .current_prompt()
            .map(|(_, _, p)| p.request.id().to_string());
        if current != self.prompts.current {
            self.prompts.current = current.clone();
            self.prompts.step = PermStep::Choose;
            self.prompts.choice = 0;
            self.prompts.chose = false;
            // A text box open for the prompt that went stays open (stale):
            // what is being typed must not land on the next prompt.
            self.prompts.error = None;
        }
        self.settle_prompt_focus();
    }

    /// What the reply task said about an answer.
    pub fn on_replied(&mut self, request_id: &str, outcome: ReplyOutcome) {
        self.prompts.sending.remove(request_id);
        match outcome {
            ReplyOutcome::Sent => {
                self.prompts.sent.insert(request_id.to_string());
            }
            ReplyOutcome::AlreadyGone => {
                self.prompts.sent.insert(request_id.to_string());
                self.notice = Some("that prompt was already answered".into());
            }
            ReplyOutcome::Failed(e) => self.prompts.error = Some(format!("not sent: {e}")),
        }
        self.refresh_prompts();
    }

    pub(super) fn send_reply(&mut self, reply: Reply) {
        let id = reply.request_id().to_string();
        let Some(tx) = &self.replies else {
            self.prompts.error = Some(
                if self.source.recorded {
                    "replay: nothing is sent"
                } else {
                    "read-only: answers are not sent"
                }
                .into(),
            );
            return;
        };
        if self.prompts.sending.contains(&id) || self.prompts.sent.contains(&id) {
            return; // one answer per prompt, however often the key is pressed
        }
        self.prompts.error = None;
        if tx.send(reply).is_ok() {
            self.prompts.sending.insert(id);
        } else {
            self.prompts.error = Some("not sent: the connection is gone".into());
        }
        self.prompts.editor = None;
        self.prompts.editor_for = None;
        self.prompts.step = PermStep::Choose;
    }

    /// Keys while the bar has focus, typed no earlier than `typed_at`.
    /// Returns whether the key was used.
    pub fn prompt_key(&mut self, key: KeyEvent, typed_at: Instant) -> bool {
        let Some((_, n, prompt)) = self.current_prompt() else {
            return false;
        };
        let request = prompt.request.clone();
        let action = Key::from_event(&key).and_then(|k| self.keymap.only(Context::Prompt, k));
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
        if !looking && !self.prompt_armed(typed_at) {
            // Each dropped key starts the delay again: a typist still going
            // (a held key, the rest of an answer) has not looked yet.
            if let Some((_, since)) = &mut self.prompts.armed {
                *since = Instant::now();
            }
            self.prompts.dropped_while_arming = true;
            return true;
        }
        // Typing: every key is text but the box's own two, enter (send
        // the rejection, or done with the own answer) and esc (back,
        // nothing changed); none reaches the bar's keys or a pane.
        if let Some(editor) = &mut self.prompts.editor {
            match (key.code, &request) {
                (KeyCode::Esc, _) => self.close_editor(&request, false),
                (KeyCode::Enter, PromptRequest::Permission(p)) => {
                    let message = editor.lines().join("\n");
                    let id = p.id.clone();
                    self.send_reply(Reply::Permission {
                        request_id: id,
                        reply: "reject".into(),
                        message: Some(message),
                    });
                }
                (KeyCode::Enter, PromptRequest::Question(_)) => self.close_editor(&request, true),
                _ => {
                    editor.input(key);
                }
            }
            return true;
        }
        // Everywhere in the bar.
        match action {
            Some(Action::PromptNext) => return self.move_prompt(1, n),
            Some(Action::PromptPrev) => return self.move_prompt(-1, n),
            Some(Action::PromptSession) => {
                self.selected = Some(request.session_id().to_string());
                self.history.clear();
                return true;
            }
            Some(Action::PromptView) => {
                self.overlay = if self.overlay == Some(Overlay::PromptView) {
                    None
                } else {
                    Some(Overlay::PromptView)
                };
                self.prompts.view_scroll = 0;
                return true;
            }
            _ => {}
        }
        if self.overlay == Some(Overlay::PromptView) {
            // The whole prompt scrolls with the list keys; the rest answer.
            let scroll = &mut self.prompts.view_scroll;
            match Key::from_event(&key).and_then(|k| self.keymap.only(Context::List, k)) {
                Some(Action::ListDown) => *scroll = scroll.saturating_add(1),
                Some(Action::ListUp) => *scroll = scroll.saturating_sub(1),
                Some(Action::ListPageDown) => *scroll = scroll.saturating_add(20),
                Some(Action::ListPageUp) => *scroll = scroll.saturating_sub(20),
                Some(Action::ListClose) => self.overlay = None,
                _ => {
                    let used = self.answer_key(action, key, &request);
                    // What the answer asks next (a text to type, "always"
                    // to confirm) is in the bar: the view makes way.
                    if self.prompts.editor.is_some() || self.prompts.step != PermStep::Choose {
                        self.overlay = None;
                    }
                    return used;
                }
            }
            return true;
        }
        self.answer_key(action, key, &request)
    }

    fn move_prompt(&mut self, by: i64, n: usize) -> bool {
        let q: Vec<String> = self
            .prompt_queue()
            .iter()
            .map(|p| p.request.id().to_string())
            .collect();
        let cur = self.current_prompt().map_or(0, |(i, _, _)| i) as i64;
        let next = (cur + by).rem_euclid(n.max(1) as i64) as usize;
        if let Some(id) = q.get(next) {
            self.prompts.current = Some(id.clone());
            self.prompts.step = PermStep::Choose;
            self.prompts.choice = 0;
            self.prompts.chose = false;
            self.prompts.error = None;
        }
        true
    }

    fn answer_key(
        &mut self,
        action: Option<Action>,
        key: KeyEvent,
        request: &PromptRequest,
    ) -> bool {
        match request {
            PromptRequest::Permission(p) => self.permission_key(action, key, &p.id),
            PromptRequest::Question(q) => self.question_key(action, key, q),
        }
    }

    fn permission_key(&mut self, action: Option<Action>, key: KeyEvent, id: &str) -> bool {
        let reply = |r: &str| Reply::Permission {
            request_id: id.to_string(),
            reply: r.to_string(),
            message: None,
        };
        if self.prompts.step == PermStep::ConfirmAlways {
            match Key::from_event(&key).and_then(|k| self.keymap.only(Context::Confirm, k)) {
                Some(Action::Confirm) => self.send_reply(reply("always")),
                Some(Action::Cancel) => self.prompts.step = PermStep::Choose,
                _ => {}
            }
            return true;
        }
        let chosen = match action {
            // Letters only by default: digits pick a question's options,
            // and a digit typed for a question must never answer a
            // permission.
            Some(Action::AllowOnce) => Some(0),
            Some(Action::AllowAlways) => Some(1),
            Some(Action::Reject) => Some(2),
            Some(Action::RejectMessage) => Some(3),
            // Enter picks only what the user highlighted; by default it
            // shows the whole prompt (the default is to look, not to allow).
            Some(Action::PromptEnter) if self.prompts.chose => Some(self.prompts.choice),
            Some(Action::PromptEnter) => {
                self.overlay = Some(Overlay::PromptView);
                self.prompts.view_scroll = 0;
                None
            }
            Some(Action::ChoiceLeft) => {
                self.prompts.choice = self.prompts.choice.saturating_sub(1);
                self.prompts.chose = true;
                None
            }
            Some(Action::ChoiceRight) => {
                self.prompts.choice = (self.prompts.choice + 1).min(PERM_CHOICES.len() - 1);
                self.prompts.chose = true;
                None
            }
            Some(Action::PromptLater) => {
                self.release_prompt_focus();
                None
            }
            _ => return false,
        };
        match chosen {
            Some(0) => self.send_reply(reply("once")),
            Some(1) => {
                self.prompts.choice = 1;
                self.prompts.step = PermStep::ConfirmAlways;
            }
            Some(2) => self.send_reply(reply("reject")),
            Some(3) => {
                self.prompts.choice = 3;
                self.prompts.step = PermStep::RejectMessage;
                self.open_editor(id, "reject with a message", TextArea::default());
            }
            _ => {}
        }
        true
    }

    /// Open the text box for a prompt, remembering which.
    pub(super) fn open_editor(&mut self, request_id: &str, what: &str, editor: TextArea<'static>) {
        let subject = self
            .store
            .prompt(request_id)
            .map(|p| crate::model::entity::prompt::describe(&p.request).1)
            .unwrap_or_default();
        self.prompts.editor_for = Some(EditorOwner {
            request_id: request_id.to_string(),
            what: format!("{what} ({})", crate::model::wire::sanitize::line(&subject)),
        });
        self.prompts.editor = Some(editor);
    }

    /// Leave the text box; for a question, `keep` what was typed as the
    /// own answer to the question it was opened on.
    fn close_editor(&mut self, request: &PromptRequest, keep: bool) {
        let Some(editor) = self.prompts.editor.take() else {
            return;
        };
        self.prompts.editor_for = None;
        match request {
            PromptRequest::Question(q) if keep => {
                if let Some(d) = self.prompts.drafts.get_mut(&q.id) {
                    let tab = d.tab.min(d.typed.len().saturating_sub(1));
                    d.typed_done(q, tab, editor.lines().join("\n"));
                }
            }
            PromptRequest::Permission(_) => self.prompts.step = PermStep::Choose,
            _ => {}
        }
    }

    /// Esc at the top of the bar: back to the panes, the prompt stays.
    pub(super) fn release_prompt_focus(&mut self) {
        self.focus = self.prompts.prior_focus.unwrap_or(Focus::Sessions);
        // Still set: the bar does not grab focus again until the queue empties.
        self.prompts.prior_focus = Some(self.focus);
    }
}
