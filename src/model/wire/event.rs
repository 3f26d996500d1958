//! Bus events, typed. Parsing dispatches on `type` first and then reads only
//! the properties that event has, so an event we ignore costs one scan.

use serde::de::{Error as _, IgnoredAny};
use serde::{Deserialize, Deserializer};
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

#[derive(Deserialize)]
struct SessionProps<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
}

#[derive(Deserialize)]
struct StatusProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    status: SessionStatus,
}

#[derive(Deserialize)]
struct SessionIdProps {
    #[serde(rename = "sessionID")]
    session_id: String,
}

#[derive(Deserialize)]
struct ErrorProps<'a> {
    #[serde(rename = "sessionID", default)]
    session_id: Option<String>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct DiffProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default)]
    diff: Vec<FileDiff>,
}

#[derive(Deserialize)]
struct InfoProps<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    /// The event's session: the owner of an info or part that names none.
    #[serde(rename = "sessionID", default)]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct MessageRemovedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
}

#[derive(Deserialize)]
struct PartProps<'a> {
    #[serde(borrow)]
    part: &'a RawValue,
    #[serde(rename = "sessionID", default)]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct PartRemovedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
    #[serde(rename = "partID")]
    part_id: String,
}

#[derive(Deserialize)]
struct DeltaProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
    #[serde(rename = "partID")]
    part_id: String,
    #[serde(default = "text_field")]
    field: String,
    delta: String,
}

fn text_field() -> String {
    "text".to_string()
}

#[derive(Deserialize)]
struct RepliedProps {
    #[serde(rename = "sessionID", default)]
    session_id: String,
    /// `permissionID` in OpenCode before 1.0's rename.
    #[serde(rename = "requestID", alias = "permissionID")]
    request_id: String,
    /// `response` in OpenCode before 1.0's rename.
    #[serde(default, alias = "response")]
    reply: String,
    #[serde(default)]
    answers: Vec<Vec<String>>,
}

#[derive(Deserialize)]
struct TodoProps<'a> {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(borrow)]
    todos: &'a RawValue,
}

/// `permission.updated`, the permission request of OpenCode 0.x (renamed
/// `permission.asked` later): the tool's name was `type`, the patterns one
/// `pattern` (a string or a list), the tool call named at the top level.
#[derive(Deserialize, Default)]
#[serde(default)]
struct OldPermission {
    id: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "type")]
    permission: String,
    pattern: Option<serde_json::Value>,
    #[serde(rename = "messageID")]
    message_id: String,
    #[serde(rename = "callID")]
    call_id: Option<String>,
    title: Option<String>,
    metadata: serde_json::Value,
}

impl OldPermission {
    fn into_request(self) -> PermissionRequest {
        use serde_json::Value;
        let patterns = match self.pattern {
            Some(Value::String(p)) => vec![p],
            Some(Value::Array(list)) => list
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let tool = (!self.message_id.is_empty()).then(|| crate::model::entity::prompt::ToolRef {
            message_id: self.message_id,
            call_id: self.call_id.unwrap_or_default(),
        });
        PermissionRequest {
            id: self.id,
            session_id: self.session_id,
            permission: self.permission,
            patterns,
            metadata: self.metadata,
            always: Vec::new(),
            tool,
            title: self.title.filter(|t| !t.is_empty()),
        }
    }
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

    /// Build an event of type `kind` straight from the deserializer positioned
    /// at its `properties`, so a record is scanned once, not once per level.
    pub fn from_properties<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
        let bad = |reason: &str| D::Error::custom(format!("{kind}: {reason}"));
        let session_info = |p: SessionProps| -> Result<Box<SessionInfo>, D::Error> {
            let info = SessionInfo::from_raw(p.info).map_err(|e| bad(&e.to_string()))?;
            if info.id.is_empty() {
                return Err(bad("info has no id"));
            }
            Ok(Box::new(info))
        };
        Ok(match kind {
            "server.connected" | "server.heartbeat" | "server.instance.disposed" => {
                IgnoredAny::deserialize(d)?;
                match kind {
                    "server.connected" => Event::ServerConnected,
                    "server.heartbeat" => Event::ServerHeartbeat,
                    _ => Event::InstanceDisposed,
                }
            }
            "session.created" => {
                Event::SessionCreated(session_info(SessionProps::deserialize(d)?)?)
            }
            "session.updated" => {
                Event::SessionUpdated(session_info(SessionProps::deserialize(d)?)?)
            }
            "session.deleted" => {
                Event::SessionDeleted(session_info(SessionProps::deserialize(d)?)?)
            }
            "session.status" => {
                let p = StatusProps::deserialize(d)?;
                Event::SessionStatus {
                    session_id: p.session_id,
                    status: p.status,
                }
            }
            "session.idle" => Event::SessionIdle {
                session_id: SessionIdProps::deserialize(d)?.session_id,
            },
            "session.compacted" => Event::SessionCompacted {
                session_id: SessionIdProps::deserialize(d)?.session_id,
            },
            "session.error" => {
                let p = ErrorProps::deserialize(d)?;
                Event::SessionError {
                    session_id: p.session_id.filter(|id| !id.is_empty()),
                    error: p
                        .error
                        .map(ErrorInfo::from_raw)
                        .unwrap_or_else(|| ErrorInfo {
                            name: "UnknownError".into(),
                            ..Default::default()
                        }),
                }
            }
            "session.diff" => {
                let p = DiffProps::deserialize(d)?;
                Event::SessionDiff {
                    session_id: p.session_id,
                    diff: p.diff,
                }
            }
            "message.updated" => {
                let p = InfoProps::deserialize(d)?;
                let mut info = MessageInfo::from_raw(p.info).map_err(|e| bad(&e.to_string()))?;
                if info.session_id.is_empty() {
                    info.session_id = p.session_id.unwrap_or_default();
                }
                if info.id.is_empty() || info.session_id.is_empty() {
                    return Err(bad("info has no id or sessionID"));
                }
                Event::MessageUpdated(Box::new(info))
            }
            "message.removed" => {
                let p = MessageRemovedProps::deserialize(d)?;
                Event::MessageRemoved {
                    session_id: p.session_id,
                    message_id: p.message_id,
                }
            }
            "message.part.updated" => {
                let p = PartProps::deserialize(d)?;
                let mut part = Part::from_raw(p.part).map_err(|e| bad(&e.to_string()))?;
                if part.session_id.is_empty() {
                    part.session_id = p.session_id.unwrap_or_default();
                }
                Event::PartUpdated(Box::new(part))
            }
            "message.part.removed" => {
                let p = PartRemovedProps::deserialize(d)?;
                Event::PartRemoved {
                    session_id: p.session_id,
                    message_id: p.message_id,
                    part_id: p.part_id,
                }
            }
            "message.part.delta" => {
                let p = DeltaProps::deserialize(d)?;
                Event::PartDelta {
                    session_id: p.session_id,
                    message_id: p.message_id,
                    part_id: p.part_id,
                    field: p.field,
                    delta: p.delta,
                }
            }
            "permission.asked" => {
                let p = PermissionRequest::deserialize(d)?;
                if p.id.is_empty() {
                    return Err(bad("request has no id"));
                }
                Event::PermissionAsked(Box::new(p))
            }
            "permission.updated" => {
                let p = OldPermission::deserialize(d)?.into_request();
                if p.id.is_empty() {
                    return Err(bad("request has no id"));
                }
                Event::PermissionAsked(Box::new(p))
            }
            "permission.replied" => {
                let p = RepliedProps::deserialize(d)?;
                Event::PermissionReplied {
                    session_id: p.session_id,
                    request_id: p.request_id,
                    reply: p.reply,
                }
            }
            "question.asked" => {
                let q = QuestionRequest::deserialize(d)?;
                if q.id.is_empty() {
                    return Err(bad("request has no id"));
                }
                Event::QuestionAsked(Box::new(q))
            }
            "question.replied" => {
                let p = RepliedProps::deserialize(d)?;
                Event::QuestionReplied {
                    session_id: p.session_id,
                    request_id: p.request_id,
                    answers: p.answers,
                }
            }
            "question.rejected" => {
                let p = RepliedProps::deserialize(d)?;
                Event::QuestionRejected {
                    session_id: p.session_id,
                    request_id: p.request_id,
                }
            }
            "todo.updated" => {
                let p = TodoProps::deserialize(d)?;
                Event::TodoUpdated {
                    session_id: p.session_id,
                    todos: serde_json::from_str(p.todos.get()).map_err(|e| bad(&e.to_string()))?,
                    raw_todos: p.todos.to_owned(),
                }
            }
            crate::model::entity::context::MODEL_LIMITS_EVENT => {
                #[derive(Deserialize)]
                struct LimitsProps {
                    models: Vec<crate::model::entity::context::ModelLimit>,
                }
                Event::ModelLimits(LimitsProps::deserialize(d)?.models)
            }
            super::own::SERVER_EVENT => Event::Server(Box::new(
                crate::model::entity::server::ServerReport::deserialize(d)?,
            )),
            super::own::PENDING_PROMPTS_EVENT => {
                #[derive(Deserialize)]
                struct PendingProps {
                    ids: Vec<String>,
                }
                Event::PendingPrompts {
                    server: None,
                    ids: PendingProps::deserialize(d)?.ids,
                }
            }
            super::own::SESSIONS_EVENT => {
                #[derive(Deserialize)]
                struct SessionsProps {
                    ids: Vec<String>,
                }
                Event::SessionList {
                    server: None,
                    ids: SessionsProps::deserialize(d)?.ids,
                }
            }
            other => {
                IgnoredAny::deserialize(d)?;
                Event::Other(other.to_string())
            }
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
