//! The reply observer protocol (seed 001): every callback the reducer
//! dispatches, each with a no-op default, so an observer overrides only what
//! it cares about and a new callback never breaks an existing observer.
//! The UI, the recorder and tests are observers.

use crate::model::entity::message::MessageInfo;
use crate::model::entity::part::{Part, ToolStatus};
use crate::model::entity::prompt::{PermissionRequest, QuestionRequest, Todo};
use crate::model::entity::session::{ErrorInfo, Tokens};

#[allow(unused_variables)]
pub trait ReplyObserver {
    /// A message's info was created or replaced (cost, tokens, finish, error).
    fn message_updated(&mut self, info: &MessageInfo) {}
    /// A new part was inserted at `index` of its message.
    fn part_added(&mut self, part: &Part, index: usize) {}
    /// A part's text grew by `delta` (streaming text or reasoning).
    fn part_changed(&mut self, part: &Part, index: usize, delta: &str) {}
    /// An existing part was rewritten to the server's authoritative value.
    /// Fires on every such rewrite so throttled observers can flush.
    fn part_finalized(&mut self, part: &Part, index: usize) {}
    /// A tool part changed status or state payload.
    fn tool_progressed(&mut self, part: &Part, index: usize, status: &ToolStatus) {}
    /// A step finished, with its usage.
    fn step_finished(&mut self, session_id: &str, cost: f64, tokens: &Tokens) {}
    /// The session's todo list changed (always the full list).
    fn todos_changed(&mut self, session_id: &str, todos: &[Todo]) {}
    fn permission_asked(&mut self, request: &PermissionRequest) {}
    /// `asked_at` is when the matching ask was received, when known.
    fn permission_replied(
        &mut self,
        session_id: &str,
        request_id: &str,
        reply: &str,
        asked_at: Option<i64>,
    ) {
    }
    fn question_asked(&mut self, request: &QuestionRequest) {}
    fn question_replied(
        &mut self,
        session_id: &str,
        request_id: &str,
        answers: &[Vec<String>],
        asked_at: Option<i64>,
    ) {
    }
    fn question_rejected(&mut self, session_id: &str, request_id: &str, asked_at: Option<i64>) {}
    /// A session-level error; `text` is "Name: message".
    fn session_errored(&mut self, session_id: Option<&str>, text: &str, error: &ErrorInfo) {}
    /// The session is retrying a model call.
    fn session_retried(&mut self, session_id: &str, attempt: Option<u64>, message: &str) {}
}

/// An observer that does nothing, for callers that only want the state.
pub struct NoObserver;

impl ReplyObserver for NoObserver {}
