//! Answering: one queue of every pending permission and question, of every
//! session at any depth, in arrival order. The prompt bar is a layer that
//! sees keys first while focused; answers are queued to the reply task and
//! can never be sent twice.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use ratatui_textarea::TextArea;
use tokio::time::Instant;

use crate::app::panes::prompt_bar::questions::Draft;
use crate::app::{App, Focus};
use crate::model::{PartBody, Prompt, PromptRequest, Store};
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
    /// What each answer on its way says, for the record once the server
    /// has taken it (`audit`).
    pub replies: HashMap<String, Reply>,
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
    /// The last key answered with the whole prompt in view: what it asks
    /// next (a text to type, "always" to confirm) is in the bar, and the
    /// view makes way.
    pub answered_in_view: bool,
}

/// Sort key for arrival order across kinds: `per_` and `que_` ids share
/// opencode's clock after their prefix.
fn arrival(p: &Prompt) -> &str {
    p.request.id().get(4..).unwrap_or("")
}

impl PromptUi {
    /// Every prompt waiting for an answer, oldest first. A permission whose
    /// tool is no longer running (its session was aborted) is not offered.
    pub fn queue<'a>(&self, store: &'a Store) -> Vec<&'a Prompt> {
        let mut q: Vec<&Prompt> = store
            .pending_prompts()
            .filter(|p| !self.sent.contains(p.request.id()))
            .filter(|p| !tool_finished(store, p))
            .collect();
        q.sort_by(|a, b| arrival(a).cmp(arrival(b)));
        q
    }

    /// The prompt the bar shows, its place in the queue and the queue's
    /// length.
    pub fn current_in<'a>(&self, store: &'a Store) -> Option<(usize, usize, &'a Prompt)> {
        let q = self.queue(store);
        let n = q.len();
        let i = self
            .current
            .as_ref()
            .and_then(|id| q.iter().position(|p| p.request.id() == id))
            .unwrap_or(0);
        q.get(i).map(|p| (i, n, *p))
    }
}

fn tool_finished(store: &Store, p: &Prompt) -> bool {
    let (PromptRequest::Permission(_), Some(tool)) = (&p.request, p.request.tool()) else {
        return false;
    };
    let Some(part) = store
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

impl App {
    /// Every prompt waiting for an answer, oldest first.
    pub fn prompt_queue(&self) -> Vec<&Prompt> {
        self.panes.prompts.queue(&self.store)
    }

    /// The prompt the bar shows, and its place in the queue.
    pub fn current_prompt(&self) -> Option<(usize, usize, &Prompt)> {
        self.panes.prompts.current_in(&self.store)
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
        if current != self.panes.prompts.current {
            self.panes.prompts.current = current.clone();
            self.panes.prompts.step = PermStep::Choose;
            self.panes.prompts.choice = 0;
            self.panes.prompts.chose = false;
            // A text box open for the prompt that went stays open (stale):
            // what is being typed must not land on the next prompt.
            self.panes.prompts.error = None;
        }
        self.settle_prompt_focus();
    }

    /// What the reply task said about an answer.
    pub fn on_replied(&mut self, request_id: &str, outcome: ReplyOutcome) {
        self.panes.prompts.sending.remove(request_id);
        if let Some(reply) = self.panes.prompts.replies.remove(request_id) {
            self.keep_answer(&reply, &outcome);
        }
        match outcome {
            ReplyOutcome::Sent => {
                self.panes.prompts.sent.insert(request_id.to_string());
            }
            ReplyOutcome::AlreadyGone => {
                self.panes.prompts.sent.insert(request_id.to_string());
                self.notice = Some("that prompt was already answered".into());
            }
            ReplyOutcome::Failed(e) => self.panes.prompts.error = Some(format!("not sent: {e}")),
        }
        self.refresh_prompts();
    }

    pub(crate) fn send_reply(&mut self, reply: Reply) {
        let id = reply.request_id().to_string();
        let Some(tx) = &self.replies else {
            self.panes.prompts.error = Some(
                if self.source.recorded {
                    "replay: nothing is sent"
                } else {
                    "read-only: answers are not sent"
                }
                .into(),
            );
            return;
        };
        if self.panes.prompts.sending.contains(&id) || self.panes.prompts.sent.contains(&id) {
            return; // one answer per prompt, however often the key is pressed
        }
        self.panes.prompts.error = None;
        if tx.send(reply.clone()).is_ok() {
            self.panes.prompts.replies.insert(id.clone(), reply);
            self.panes.prompts.sending.insert(id);
        } else {
            self.panes.prompts.error = Some("not sent: the connection is gone".into());
        }
        self.panes.prompts.editor = None;
        self.panes.prompts.editor_for = None;
        self.panes.prompts.step = PermStep::Choose;
    }

    /// Esc at the top of the bar: back to the panes, the prompt stays.
    pub(crate) fn release_prompt_focus(&mut self) {
        self.focus = self.panes.prompts.prior_focus.unwrap_or(Focus::Sessions);
        // Still set: the bar does not grab focus again until the queue empties.
        self.panes.prompts.prior_focus = Some(self.focus);
    }
}
