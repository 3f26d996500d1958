//! Reading each family of event types from its `properties`: the shapes
//! the server sends, read once, into `Event`s. Unknown types, and known ones
//! of a family not listed here, are `Event::Other`.

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::event::Event;
use crate::model::entity::message::{FileDiff, MessageInfo};
use crate::model::entity::part::Part;
use crate::model::entity::prompt::{PermissionRequest, QuestionRequest};
use crate::model::entity::session::{ErrorInfo, SessionInfo, SessionStatus};

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

impl Event {
    /// Build an event of type `kind` straight from the deserializer positioned
    /// at its `properties`, so a record is scanned once, not once per level.
    /// Each family of types (`session.*`, `message.*`, …) has its reader.
    pub fn from_properties<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
        match kind.split('.').next().unwrap_or_default() {
            "server" => server_event(kind, d),
            "session" => session_event(kind, d),
            "message" => message_event(kind, d),
            "permission" | "question" | "todo" => prompt_event(kind, d),
            _ => own_event(kind, d),
        }
    }
}

/// `server.*`: the connection itself.
fn server_event<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    Ok(match kind {
        "server.connected" | "server.heartbeat" | "server.instance.disposed" => {
            IgnoredAny::deserialize(d)?;
            match kind {
                "server.connected" => Event::ServerConnected,
                "server.heartbeat" => Event::ServerHeartbeat,
                _ => Event::InstanceDisposed,
            }
        }
        other => skipped(other, d)?,
    })
}

/// `session.*`: a session's info, status, errors and diffs.
fn session_event<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    let bad = |reason: &str| bad::<D::Error>(kind, reason);
    let session_info = |p: SessionProps| -> Result<Box<SessionInfo>, D::Error> {
        let info = SessionInfo::from_raw(p.info).map_err(|e| bad(&e.to_string()))?;
        if info.id.is_empty() {
            return Err(bad("info has no id"));
        }
        Ok(Box::new(info))
    };
    Ok(match kind {
        "session.created" => Event::SessionCreated(session_info(SessionProps::deserialize(d)?)?),
        "session.updated" => Event::SessionUpdated(session_info(SessionProps::deserialize(d)?)?),
        "session.deleted" => Event::SessionDeleted(session_info(SessionProps::deserialize(d)?)?),
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
        other => skipped(other, d)?,
    })
}

/// `message.*`: messages and their parts.
fn message_event<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    let bad = |reason: &str| bad::<D::Error>(kind, reason);
    Ok(match kind {
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
        other => skipped(other, d)?,
    })
}

/// `permission.*`, `question.*`, `todo.*`: what asks a person, and the plan.
fn prompt_event<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    let bad = |reason: &str| bad::<D::Error>(kind, reason);
    Ok(match kind {
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
        other => skipped(other, d)?,
    })
}

/// ocview's own events (`ocview.*`), and any other type.
fn own_event<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    Ok(match kind {
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
        other => skipped(other, d)?,
    })
}

/// A type this family does not read: its properties passed over, the
/// event counted by its type.
fn skipped<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Event, D::Error> {
    IgnoredAny::deserialize(d)?;
    Ok(Event::Other(kind.to_string()))
}

/// A known type whose properties do not have the shape it needs.
fn bad<E: serde::de::Error>(kind: &str, reason: &str) -> E {
    E::custom(format!("{kind}: {reason}"))
}
