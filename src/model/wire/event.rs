//! Bus events, typed. Parsing dispatches on `type` first and then reads only
//! the properties that event has, so an event we ignore costs one scan.

use serde_json::value::RawValue;

use crate::model::entity::message::{FileDiff, MessageInfo};
use crate::model::entity::part::Part;
use crate::model::entity::prompt::{PermissionRequest, QuestionRequest, Todo};
use crate::model::entity::session::{ErrorInfo, SessionInfo, SessionStatus};

#[derive(Debug, Clone)]
pub enum Event {
    ServerConnected,
    ServerHeartbeat,
    InstanceDisposed,
    SessionCreated(Box<SessionInfo>),
    SessionUpdated(Box<SessionInfo>),
    SessionDeleted(Box<SessionInfo>),
    SessionStatus {
        session_id: String,
        status: SessionStatus,
    },
    SessionIdle {
        session_id: String,
    },
    SessionError {
        session_id: Option<String>,
        error: ErrorInfo,
    },
    SessionCompacted {
        session_id: String,
    },
    SessionDiff {
        session_id: String,
        diff: Vec<FileDiff>,
    },
    MessageUpdated(Box<MessageInfo>),
    MessageRemoved {
        session_id: String,
        message_id: String,
    },
    PartUpdated(Box<Part>),
    PartRemoved {
        session_id: String,
        message_id: String,
        part_id: String,
    },
    PartDelta {
        session_id: String,
        message_id: String,
        part_id: String,
        field: String,
        delta: String,
    },
    PermissionAsked(Box<PermissionRequest>),
    PermissionReplied {
        session_id: String,
        request_id: String,
        reply: String,
    },
    QuestionAsked(Box<QuestionRequest>),
    QuestionReplied {
        session_id: String,
        request_id: String,
        answers: Vec<Vec<String>>,
    },
    QuestionRejected {
        session_id: String,
        request_id: String,
    },
    TodoUpdated {
        session_id: String,
        todos: Vec<Todo>,
        /// The list as sent, for the materialised todo part.
        raw_todos: Box<RawValue>,
    },
    /// ocview's own: the context limits of the server's models.
    ModelLimits(Vec<crate::model::entity::context::ModelLimit>),
    /// ocview's own: a server of a fleet joined or changed state.
    Server(Box<crate::model::entity::server::ServerReport>),
    /// ocview's own: the prompts a (re)load found pending; every other
    /// prompt still pending was settled while the stream was away.
    PendingPrompts {
        /// In a fleet, the server that listed them.
        server: Option<String>,
        ids: Vec<String>,
    },
    /// ocview's own: every session a (re)load found; every other session
    /// of that server is gone from it (deleted while the stream was away,
    /// or lost in a restart).
    SessionList {
        /// In a fleet, the server that listed them.
        server: Option<String>,
        ids: Vec<String>,
    },
    /// Any other event type: counted, then ignored.
    Other(String),
}

/// An event with what its source knows about it.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// Sortable position from the `evt_` id; 0 when unknown (REST snapshots).
    pub seq: u64,
    /// A hash of the whole `evt_` id (`event_mark::event_tag`); 0 without one.
    pub tag: u64,
    /// When the source received it, ms (the recording's clock), if known.
    pub received_ms: Option<i64>,
    /// The project directory from a `/global/event` wrapper.
    pub directory: Option<String>,
    pub event: Event,
}

impl Envelope {
    pub fn new(event: Event) -> Self {
        Envelope {
            seq: 0,
            tag: 0,
            received_ms: None,
            directory: None,
            event,
        }
    }
}

/// A known event type whose properties did not have the required shape.
#[derive(Debug, thiserror::Error)]
#[error("{kind}: {reason}")]
pub struct EventError {
    pub kind: String,
    pub reason: String,
}

/// The one list of events that name their session by id, as a place to
/// read or to change (`session_field!(event, mut)`).
macro_rules! session_field {
    ($event:expr, $($mutable:tt)?) => {
        Some(match $event {
            Event::SessionStatus { session_id, .. }
            | Event::SessionIdle { session_id }
            | Event::SessionCompacted { session_id }
            | Event::SessionDiff { session_id, .. }
            | Event::MessageRemoved { session_id, .. }
            | Event::PartRemoved { session_id, .. }
            | Event::PartDelta { session_id, .. }
            | Event::TodoUpdated { session_id, .. }
            | Event::PermissionReplied { session_id, .. }
            | Event::QuestionReplied { session_id, .. }
            | Event::QuestionRejected { session_id, .. } => session_id,
            Event::MessageUpdated(info) => &$($mutable)? info.session_id,
            Event::PartUpdated(part) => &$($mutable)? part.session_id,
            Event::PermissionAsked(p) => &$($mutable)? p.session_id,
            Event::QuestionAsked(q) => &$($mutable)? q.session_id,
            _ => return None,
        })
    };
}

impl Event {
    /// Build an event from its `type` and raw `properties` object.
    pub fn parse(kind: &str, properties: Option<&RawValue>) -> Result<Event, EventError> {
        let raw = properties.map(RawValue::get).unwrap_or("{}");
        let mut de = serde_json::Deserializer::from_str(raw);
        Event::from_properties(kind, &mut de)
            .and_then(|event| de.end().map(|()| event))
            .map_err(|e| EventError {
                kind: kind.to_string(),
                reason: e.to_string(),
            })
    }

    /// The event's `type` string.
    pub fn kind(&self) -> &str {
        match self {
            Event::ServerConnected => "server.connected",
            Event::ServerHeartbeat => "server.heartbeat",
            Event::InstanceDisposed => "server.instance.disposed",
            Event::SessionCreated(_) => "session.created",
            Event::SessionUpdated(_) => "session.updated",
            Event::SessionDeleted(_) => "session.deleted",
            Event::SessionStatus { .. } => "session.status",
            Event::SessionIdle { .. } => "session.idle",
            Event::SessionError { .. } => "session.error",
            Event::SessionCompacted { .. } => "session.compacted",
            Event::SessionDiff { .. } => "session.diff",
            Event::MessageUpdated(_) => "message.updated",
            Event::MessageRemoved { .. } => "message.removed",
            Event::PartUpdated(_) => "message.part.updated",
            Event::PartRemoved { .. } => "message.part.removed",
            Event::PartDelta { .. } => "message.part.delta",
            Event::PermissionAsked(_) => "permission.asked",
            Event::PermissionReplied { .. } => "permission.replied",
            Event::QuestionAsked(_) => "question.asked",
            Event::QuestionReplied { .. } => "question.replied",
            Event::QuestionRejected { .. } => "question.rejected",
            Event::TodoUpdated { .. } => "todo.updated",
            Event::ModelLimits(_) => crate::model::entity::context::MODEL_LIMITS_EVENT,
            Event::Server(_) => super::own::SERVER_EVENT,
            Event::PendingPrompts { .. } => super::own::PENDING_PROMPTS_EVENT,
            Event::SessionList { .. } => super::own::SESSIONS_EVENT,
            Event::Other(kind) => kind,
        }
    }

    /// The session id of an event that belongs to a session by id (not the
    /// session's own info, not an error whose session is optional): for
    /// scoping ids in a fleet and for refusing an empty one.
    pub fn session_id_mut(&mut self) -> Option<&mut String> {
        session_field!(self, mut)
    }

    /// As `session_id_mut`, to read.
    pub fn session_id(&self) -> Option<&str> {
        session_field!(self,).map(String::as_str)
    }

    /// The session an event is about, whatever its kind: a session's own
    /// info included, and an error that names one. `None` for events of no
    /// session (heartbeats, a fleet's reports) and for an empty id.
    pub fn session(&self) -> Option<&str> {
        let id = match self {
            Event::SessionCreated(info)
            | Event::SessionUpdated(info)
            | Event::SessionDeleted(info) => info.id.as_str(),
            Event::SessionError { session_id, .. } => session_id.as_deref()?,
            _ => self.session_id()?,
        };
        (!id.is_empty()).then_some(id)
    }

    /// The event's type when it belongs to a session but names none (an
    /// empty `sessionID`; a prompt's is optional on the wire): such an
    /// event is ignored, never applied to a session whose id is "".
    pub fn without_session(&mut self) -> Option<&str> {
        let nameless = self.session_id_mut().is_some_and(|id| id.is_empty());
        nameless.then(|| self.kind())
    }
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
