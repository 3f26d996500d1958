//! The Durable Stream envelope (seed 004, §3.1): one `StreamEvent` per JSON
//! line, `{id, type, stream_id, causation_id?, correlation_id, actor,
//! timestamp, payload, metadata?}`.
//!
//! [`decode`] checks the envelope and the payload's shape, so a bad one is a
//! `RecordError` counted like any malformed line; [`durable_events`] then
//! turns one event into the model events a server would have sent, the way
//! `run_events` does for `opencode run` lines, for the one reducer to apply.
//!
//! The format names less than the bus does, so some ids are derived, always
//! from the event and the store alone (a seek that restores a store
//! checkpoint gets the same ids as a straight replay):
//! - the stream id is the root session; a session that names no parent hangs
//!   under it, so the session list shows the trace as a tree;
//! - a user input is message `msg_<event id>`;
//! - the assistant message of a workflow run is `<user message id>.<run id>`:
//!   one per run, session and user turn, and it sorts right after the user
//!   message it answers (messages are kept in id order);
//! - a part is the payload's part id, else the event id (ULIDs sort by time).

use serde::Deserialize;
use serde_json::value::to_raw_value;
use serde_json::{Map, Value, json};

use super::record::{Decoded, RecordError};
use crate::model::part::PartBody;
use crate::model::{
    Envelope, ErrorInfo, Event, FileDiff, MessageInfo, Part, PermissionRequest, SessionInfo,
    SessionStatus, Store, Tokens,
};

/// The type namespaces of seed 004 (§3.1, plus `user.`/`human.` of §2.3/§3.2).
const NAMESPACES: [&str; 7] = [
    "lifecycle.",
    "execution.",
    "agent.",
    "checkpoint.",
    "files.",
    "user.",
    "human.",
];

/// Whether `kind` is in a Durable Stream namespace (no opencode bus event is).
pub fn is_durable_type(kind: &str) -> bool {
    NAMESPACES.iter().any(|ns| kind.starts_with(ns))
}

/// One Durable Stream event, checked and ready to map.
#[derive(Debug)]
pub struct DurableEvent {
    pub id: String,
    pub kind: String,
    /// The root session (the trace).
    pub stream_id: String,
    pub causation_id: Option<String>,
    /// The workflow run.
    pub correlation_id: Option<String>,
    /// `"user"` or an agent's name.
    pub actor: Option<String>,
    /// When it happened, ms.
    pub timestamp: Option<i64>,
    /// The session it is about: the payload's, else the stream's root.
    pub session_id: String,
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// `lifecycle.session.created`, `agent.spawned`.
    Session(SessionFields),
    /// `lifecycle.session.idle`, `agent.completed`.
    Idle,
    Compacted,
    /// `execution.step_start|step_finish|tool_use`, `files.patched`: the part
    /// object without its ids, already known to parse as its type.
    Part {
        message_id: Option<String>,
        part_id: Option<String>,
        part: Map<String, Value>,
    },
    /// `execution.tool_result` (and `execution.step`, its §3.2 name).
    ToolResult {
        message_id: Option<String>,
        part_id: Option<String>,
        call_id: Option<String>,
        fields: Map<String, Value>,
    },
    UserInput {
        message_id: Option<String>,
        part_id: Option<String>,
        text: String,
    },
    Aborted(String),
    Handoff(String),
    Checkpoint(Box<PermissionRequest>),
    Reply {
        request_id: Option<String>,
        reply: String,
    },
    Diff(Vec<FileDiff>),
    /// A type of a durable namespace this version does not map.
    Unknown,
}

#[derive(Debug, Default)]
struct SessionFields {
    parent_id: Option<String>,
    title: Option<String>,
    agent: Option<String>,
    directory: Option<String>,
    /// A subagent's task, shown as its session's first user message.
    prompt: Option<String>,
    spawned: bool,
}

#[derive(Deserialize)]
struct Wire {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    stream_id: Option<String>,
    causation_id: Option<String>,
    correlation_id: Option<String>,
    actor: Option<String>,
    timestamp: Option<Value>,
    payload: Option<Value>,
    metadata: Option<Value>,
}

/// Decode a line whose keys said it is a Durable Stream event.
pub fn decode(text: &str) -> Result<Decoded, RecordError> {
    let wire: Wire = serde_json::from_str(text)
        .map_err(|e| RecordError(format!("invalid JSON at column {}: {e}", e.column())))?;
    let kind = wire
        .kind
        .ok_or_else(|| RecordError("a Durable Stream event without \"type\"".into()))?;
    let bad = |reason: String| RecordError(format!("durable {kind}: {reason}"));
    let stream_id = wire
        .stream_id
        .ok_or_else(|| bad("no \"stream_id\"".into()))?;
    check_id("stream_id", &stream_id).map_err(bad)?;
    let id = wire.id.ok_or_else(|| bad("no \"id\"".into()))?;
    check_id("id", &id).map_err(bad)?;
    for (name, value) in [
        ("causation_id", &wire.causation_id),
        ("correlation_id", &wire.correlation_id),
    ] {
        if let Some(v) = value {
            check_id(name, v).map_err(bad)?;
        }
    }
    let payload = wire.payload.ok_or_else(|| bad("no \"payload\"".into()))?;
    // `files.changed` may carry the diff list itself (seed 2.1: "delta payload").
    let (payload, list) = match payload {
        Value::Object(map) => (map, None),
        Value::Array(list) if kind == "files.changed" => (Map::new(), Some(list)),
        _ => return Err(bad("the payload is not an object".into())),
    };
    let metadata = wire.metadata.as_ref().and_then(Value::as_object);
    let (session_id, body) = parse_body(&kind, &id, payload, list, metadata).map_err(bad)?;
    let session_id = session_id.unwrap_or_else(|| stream_id.clone());
    Ok(Decoded::Durable(Box::new(DurableEvent {
        id,
        kind,
        stream_id,
        causation_id: wire.causation_id,
        correlation_id: wire.correlation_id,
        actor: wire.actor,
        timestamp: wire
            .timestamp
            .as_ref()
            .and_then(Value::as_f64)
            .map(|f| f as i64),
        session_id,
        body,
    })))
}

/// Ids become keys and dump lines: no control characters, not empty.
fn check_id(name: &str, id: &str) -> Result<(), String> {
    if id.is_empty() || id.chars().any(char::is_control) {
        return Err(format!("{name} {id:?} is not a usable id"));
    }
    Ok(())
}

/// The first of `keys` present: `Ok(None)` when none is (or all are null),
/// an error when one holds something other than a string.
fn text(map: &Map<String, Value>, keys: &[&str]) -> Result<Option<String>, String> {
    for key in keys {
        match map.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => return Ok(Some(s.clone())),
            Some(_) => return Err(format!("\"{key}\" is not a string")),
        }
    }
    Ok(None)
}

/// Like [`text`], for a field that is an id.
fn id_field(map: &Map<String, Value>, keys: &[&str]) -> Result<Option<String>, String> {
    let id = text(map, keys)?;
    if let Some(id) = &id {
        check_id(keys[0], id)?;
    }
    Ok(id)
}

const SESSION_KEYS: [&str; 2] = ["sessionID", "session_id"];
const MESSAGE_KEYS: [&str; 2] = ["messageID", "message_id"];
const PART_KEYS: [&str; 3] = ["partID", "part_id", "id"];

fn parse_body(
    kind: &str,
    event_id: &str,
    mut p: Map<String, Value>,
    list: Option<Vec<Value>>,
    metadata: Option<&Map<String, Value>>,
) -> Result<(Option<String>, Body), String> {
    let mut session = id_field(&p, &SESSION_KEYS)?;
    if session.is_none()
        && let Some(meta) = metadata
    {
        session = id_field(meta, &SESSION_KEYS)?;
    }
    let body = match kind {
        "lifecycle.session.created" | "agent.spawned" => {
            // The SDK's own `session.created` carries `{info: Session}`.
            let src = match p.get("info") {
                Some(Value::Object(info)) => info,
                _ => &p,
            };
            let spawned = kind == "agent.spawned";
            if session.is_none() {
                session = id_field(src, &["sessionID", "session_id", "id"])?;
            }
            if spawned && session.is_none() {
                return Err("names no session for the agent".into());
            }
            let title = match text(src, &["title"])? {
                Some(t) => Some(t),
                None if spawned => text(src, &["description"])?,
                None => None,
            };
            Body::Session(SessionFields {
                parent_id: id_field(src, &["parentID", "parent_id"])?
                    .filter(|parent| session.as_ref() != Some(parent)),
                title,
                agent: text(src, &["agent", "name"])?,
                directory: text(src, &["directory"])?,
                prompt: text(src, &["prompt"])?,
                spawned,
            })
        }
        "lifecycle.session.idle" | "agent.completed" => Body::Idle,
        "lifecycle.session.compacted" | "lifecycle.compacted" => Body::Compacted,
        "execution.step_start"
        | "execution.step_finish"
        | "execution.tool_use"
        | "files.patched" => {
            let part_type = match kind {
                "execution.step_start" => "step-start",
                "execution.step_finish" => "step-finish",
                "execution.tool_use" => "tool",
                _ => "patch",
            };
            let message_id = id_field(&p, &MESSAGE_KEYS)?;
            let part_id = id_field(&p, &PART_KEYS)?;
            if part_type == "tool" {
                if !matches!(p.get("state"), Some(Value::Object(_))) {
                    return Err("no \"state\" object".into());
                }
                if text(&p, &["tool"])?.is_none() {
                    return Err("no \"tool\" name".into());
                }
            }
            if part_type == "patch" && !matches!(p.get("files"), Some(Value::Array(_))) {
                return Err("no \"files\" list".into());
            }
            Body::Part {
                message_id,
                part_id,
                part: part_object(p, part_type)?,
            }
        }
        "execution.tool_result" | "execution.step" => {
            let message_id = id_field(&p, &MESSAGE_KEYS)?;
            let part_id = id_field(&p, &PART_KEYS)?;
            let call_id = text(&p, &["callID", "call_id"])?;
            text(&p, &["tool"])?;
            if let Some(state) = p.get("state")
                && !state.is_object()
            {
                return Err("\"state\" is not an object".into());
            }
            // The hook's output is text; anything else is kept as its JSON.
            if let Some(out) = p.get_mut("output")
                && !out.is_string()
                && !out.is_null()
            {
                *out = Value::String(out.to_string());
            }
            Body::ToolResult {
                message_id,
                part_id,
                call_id,
                fields: p,
            }
        }
        "user.input" | "human.input" => {
            let mut message_id = id_field(&p, &MESSAGE_KEYS)?;
            if message_id.is_none()
                && let Some(Value::Object(m)) = p.get("message")
            {
                message_id = id_field(m, &["id"])?;
            }
            Body::UserInput {
                message_id,
                part_id: id_field(&p, &["partID", "part_id"])?,
                text: input_text(&p)?,
            }
        }
        "agent.aborted" => Body::Aborted(
            text(&p, &["reason", "message", "error"])?.unwrap_or_else(|| "aborted".into()),
        ),
        "agent.handoff" => {
            let from = text(&p, &["from", "from_agent"])?;
            let to = text(&p, &["to", "to_agent", "agent"])?;
            let why = text(&p, &["reason", "summary", "message"])?;
            let mut note = String::from("handoff");
            if let Some(from) = from {
                note.push_str(&format!(" from {from}"));
            }
            if let Some(to) = to {
                note.push_str(&format!(" to {to}"));
            }
            if let Some(why) = why {
                note.push_str(&format!(": {why}"));
            }
            Body::Handoff(note)
        }
        "checkpoint.requested" => Body::Checkpoint(Box::new(checkpoint(&p, event_id)?)),
        "checkpoint.approved" | "checkpoint.rejected" => {
            let reply = if kind == "checkpoint.rejected" {
                "reject".to_string()
            } else {
                // `always` when the approval says so; an approval is `once` otherwise.
                match text(&p, &["reply", "response"])?.as_deref() {
                    Some("always") => "always".into(),
                    _ => "once".into(),
                }
            };
            Body::Reply {
                request_id: id_field(&p, &["requestID", "request_id", "id"])?,
                reply,
            }
        }
        "files.changed" => Body::Diff(diffs(list, &p)?),
        _ => Body::Unknown,
    };
    Ok((session, body))
}

/// The payload as a part of `part_type`, its ids taken out (they are given
/// when mapped). Parsed once here so a payload that does not fit is an error
/// now rather than a part shown as unknown.
fn part_object(mut p: Map<String, Value>, part_type: &str) -> Result<Map<String, Value>, String> {
    for key in ["id", "partID", "part_id", "messageID", "message_id"] {
        p.remove(key);
    }
    for key in SESSION_KEYS {
        p.remove(key);
    }
    if let Some(call) = p.remove("call_id")
        && !p.contains_key("callID")
    {
        p.insert("callID".into(), call);
    }
    p.insert("type".into(), Value::String(part_type.into()));
    let part = build_part(&p, "check", "check", "check")
        .ok_or_else(|| format!("the payload does not fit a {part_type} part"))?;
    if matches!(part.body, PartBody::Unknown { .. }) {
        return Err(format!("the payload does not fit a {part_type} part"));
    }
    Ok(p)
}

fn build_part(fields: &Map<String, Value>, id: &str, message: &str, session: &str) -> Option<Part> {
    let mut map = fields.clone();
    map.insert("id".into(), Value::String(id.into()));
    map.insert("messageID".into(), Value::String(message.into()));
    map.insert("sessionID".into(), Value::String(session.into()));
    let raw = to_raw_value(&map).ok()?;
    Part::from_raw(&raw).ok()
}

/// A user input's text: `text`/`content`/`prompt`/`message`, or the text
/// parts of the `chat.message` hook's `parts`.
fn input_text(p: &Map<String, Value>) -> Result<String, String> {
    if let Some(Value::String(s)) = p.get("message") {
        return Ok(s.clone());
    }
    if let Some(t) = text(p, &["text", "content", "prompt"])? {
        return Ok(t);
    }
    if let Some(Value::Array(parts)) = p.get("parts") {
        let texts: Vec<&str> = parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str).unwrap_or("text") == "text")
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect();
        if !texts.is_empty() {
            return Ok(texts.join("\n\n"));
        }
    }
    Err("no text".into())
}

/// `checkpoint.requested` as a permission prompt. It mirrors the
/// `permission.ask` hook's object when a bridge logged that, or is a plain
/// decision (`requestCheckpoint(decision, options)`, seed 3.2).
fn checkpoint(p: &Map<String, Value>, event_id: &str) -> Result<PermissionRequest, String> {
    let id = id_field(p, &["requestID", "request_id", "id"])?;
    let mut metadata = match p.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for key in ["decision", "options", "title"] {
        if let Some(v) = p.get(key) {
            metadata.entry(key).or_insert_with(|| v.clone());
        }
    }
    if id.as_deref().is_some_and(|id| id != event_id) {
        // The reply may point at this event instead of the request id.
        metadata.insert(CHECKPOINT_EVENT.into(), Value::String(event_id.into()));
    }
    let mut patterns = match p.get("patterns").or_else(|| p.get("pattern")) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(v) => Vec::<String>::deserialize(v)
            .map_err(|_| "\"patterns\" is not a list of strings".to_string())?,
    };
    if patterns.is_empty()
        && let Some(what) = text(p, &["decision", "title"])?
    {
        patterns.push(what);
    }
    let mut request = json!({
        "id": id.unwrap_or_else(|| event_id.to_string()),
        "permission": text(p, &["permission", "type"])?.unwrap_or_else(|| "checkpoint".into()),
        "patterns": patterns,
        "metadata": metadata,
        "always": p.get("always").cloned().unwrap_or(json!([])),
    });
    let tool = match p.get("tool") {
        Some(Value::Object(tool)) => Some(Value::Object(tool.clone())),
        _ => text(p, &["callID", "call_id"])?.map(|call| {
            let message = text(p, &MESSAGE_KEYS).ok().flatten().unwrap_or_default();
            json!({"messageID": message, "callID": call})
        }),
    };
    if let Some(tool) = tool {
        request["tool"] = tool;
    }
    PermissionRequest::deserialize(&request).map_err(|e| format!("not a checkpoint: {e}"))
}

/// The metadata key that remembers the requesting event of a checkpoint
/// whose request id is not the event id.
const CHECKPOINT_EVENT: &str = "checkpointEvent";

/// `files.changed`: the list itself, or `{diff|diffs|files: [...]}` of
/// `session.diff` objects or bare paths.
fn diffs(list: Option<Vec<Value>>, p: &Map<String, Value>) -> Result<Vec<FileDiff>, String> {
    let list = match list {
        Some(list) => list,
        None => match ["diff", "diffs", "files"].iter().find_map(|k| p.get(*k)) {
            Some(Value::Array(list)) => list.clone(),
            _ => return Err("no list of changed files".into()),
        },
    };
    list.into_iter()
        .map(|item| match item {
            Value::String(file) => Ok(FileDiff {
                file,
                ..Default::default()
            }),
            other => FileDiff::deserialize(&other).map_err(|e| format!("a changed file: {e}")),
        })
        .collect()
}

/// The model events one Durable Stream event stands for. Sessions and
/// messages are announced the first time they are named, so nothing lands
/// on a placeholder.
pub fn durable_events(ev: DurableEvent, store: &Store) -> Vec<Envelope> {
    let DurableEvent {
        id,
        kind,
        stream_id,
        causation_id,
        correlation_id,
        actor,
        timestamp,
        session_id,
        body,
    } = ev;
    let mut m = Mapper {
        store,
        event_id: id,
        stream_id,
        session_id,
        run: correlation_id,
        causation: causation_id,
        agent: actor.filter(|a| a != "user" && !a.is_empty()),
        at: timestamp,
        out: Vec::new(),
        sessions: Vec::new(),
        messages: Vec::new(),
    };
    if matches!(body, Body::Unknown) {
        // Counted by type with the bus events we ignore, so a newer
        // producer's events show up in the summary instead of as damage.
        m.push(Event::Other(kind));
        return m.out;
    }
    let root = m.stream_id.clone();
    m.ensure_session(&root, false);
    let sid = m.session_id.clone();
    match body {
        Body::Session(fields) => m.session(fields),
        Body::Idle => {
            m.ensure_session(&sid, true);
            m.push(Event::SessionIdle { session_id: sid });
        }
        Body::Compacted => {
            m.ensure_session(&sid, true);
            m.push(Event::SessionCompacted { session_id: sid });
        }
        Body::Part {
            message_id,
            part_id,
            part,
        } => m.part(message_id, part_id, part),
        Body::ToolResult {
            message_id,
            part_id,
            call_id,
            fields,
        } => m.tool_result(message_id, part_id, call_id, fields),
        Body::UserInput {
            message_id,
            part_id,
            text,
        } => {
            m.ensure_session(&sid, true);
            let mid = message_id.unwrap_or_else(|| format!("msg_{}", m.event_id));
            let agent = m.agent.clone();
            m.user_message(&sid, &mid, part_id, &text, agent);
        }
        Body::Aborted(reason) => {
            m.ensure_session(&sid, true);
            let error = json!({"name": "MessageAbortedError", "data": {"message": reason}});
            if let Ok(raw) = to_raw_value(&error) {
                m.push(Event::SessionError {
                    session_id: Some(sid.clone()),
                    error: ErrorInfo::from_raw(&raw),
                });
            }
            m.push(Event::SessionIdle { session_id: sid });
        }
        Body::Handoff(note) => {
            // Shown where it happened, marked synthetic: our words, not the model's.
            let fields = json!({"type": "text", "text": note, "synthetic": true});
            if let Value::Object(fields) = fields {
                m.part(None, None, fields);
            }
        }
        Body::Checkpoint(mut request) => {
            m.ensure_session(&sid, true);
            // A request naming only its call: the message is the tool part's.
            if let Some(tool) = &mut request.tool
                && tool.message_id.is_empty()
                && let Some(part) = m.find_tool(&sid, None, Some(&tool.call_id))
            {
                tool.message_id = part.message_id.clone();
            }
            request.session_id = sid;
            m.push(Event::PermissionAsked(request));
        }
        Body::Reply { request_id, reply } => m.reply(request_id, reply),
        Body::Diff(diff) => {
            m.ensure_session(&sid, true);
            m.push(Event::SessionDiff {
                session_id: sid,
                diff,
            });
        }
        Body::Unknown => {}
    }
    m.out
}

struct Mapper<'s> {
    store: &'s Store,
    event_id: String,
    stream_id: String,
    session_id: String,
    run: Option<String>,
    causation: Option<String>,
    /// The acting agent (`None` for the user).
    agent: Option<String>,
    at: Option<i64>,
    out: Vec<Envelope>,
    /// Session infos announced by this event: (id, info).
    sessions: Vec<(String, Value)>,
    /// Message infos announced by this event: (session id, info).
    messages: Vec<(String, Value)>,
}

impl Mapper<'_> {
    fn push(&mut self, event: Event) {
        self.out.push(Envelope {
            received_ms: self.at,
            ..Envelope::new(event)
        });
    }

    fn now(&self) -> i64 {
        self.at.unwrap_or(0)
    }

    /// The info of a session, as JSON: announced by this event, or stored.
    fn session_info(&self, id: &str) -> Option<Value> {
        if let Some((_, v)) = self.sessions.iter().rev().find(|(s, _)| s == id) {
            return Some(v.clone());
        }
        let session = self.store.session(id)?;
        if session.placeholder {
            return None;
        }
        let raw = session.info.raw.as_ref()?;
        serde_json::from_str(raw.get()).ok()
    }

    fn announce_session(&mut self, info: Value, created: bool) {
        let Some(id) = info["id"].as_str().map(str::to_string) else {
            return;
        };
        if let Ok(raw) = to_raw_value(&info)
            && let Ok(parsed) = SessionInfo::from_raw(&raw)
        {
            let parsed = Box::new(parsed);
            self.push(if created {
                Event::SessionCreated(parsed)
            } else {
                Event::SessionUpdated(parsed)
            });
            self.sessions.push((id, info));
        }
    }

    /// Announce a session named for the first time: under the stream root
    /// unless it is the root, titled after the acting agent when the event
    /// is its own.
    fn ensure_session(&mut self, id: &str, own_event: bool) {
        let known = self.sessions.iter().any(|(s, _)| s == id)
            || self.store.session(id).is_some_and(|s| !s.placeholder);
        if known {
            return;
        }
        let at = self.now();
        let mut info = json!({"id": id, "title": "", "time": {"created": at, "updated": at}});
        if id != self.stream_id {
            info["parentID"] = json!(self.stream_id);
        }
        if own_event && let Some(agent) = &self.agent {
            info["title"] = json!(agent);
            info["agent"] = json!(agent);
        }
        self.announce_session(info, true);
    }

    /// `lifecycle.session.created` / `agent.spawned`: create the session, or
    /// complete what an earlier mention announced.
    fn session(&mut self, f: SessionFields) {
        let sid = self.session_id.clone();
        let at = self.now();
        let existing = self.session_info(&sid);
        let created = existing.is_none();
        let mut info =
            existing.unwrap_or_else(|| json!({"id": sid, "title": "", "time": {"created": at}}));
        let agent = f.agent.clone().or_else(|| self.agent.clone());
        let parent = f.parent_id.clone().or_else(|| {
            info["parentID"]
                .as_str()
                .map(str::to_string)
                .or_else(|| (sid != self.stream_id).then(|| self.stream_id.clone()))
        });
        if let Some(parent) = parent {
            info["parentID"] = json!(parent);
        }
        match (&f.title, &agent) {
            (Some(title), _) => info["title"] = json!(title),
            (None, Some(agent)) if info["title"].as_str().unwrap_or("").is_empty() => {
                info["title"] = json!(agent)
            }
            _ => {}
        }
        if let Some(agent) = &agent {
            info["agent"] = json!(agent);
        }
        if let Some(dir) = &f.directory {
            info["directory"] = json!(dir);
        }
        let updated = info["time"]["updated"].as_i64().unwrap_or(at).max(at);
        info["time"]["updated"] = json!(updated);
        self.announce_session(info, created);
        if f.spawned {
            self.push(Event::SessionStatus {
                session_id: sid.clone(),
                status: SessionStatus::Busy,
            });
        }
        if let Some(prompt) = f.prompt {
            // Addressed to the subagent, as opencode's task prompt is.
            let mid = format!("msg_{}", self.event_id);
            self.user_message(&sid, &mid, None, &prompt, agent);
        }
    }

    fn user_message(
        &mut self,
        sid: &str,
        mid: &str,
        part_id: Option<String>,
        text: &str,
        agent: Option<String>,
    ) {
        if !self.message_known(sid, mid) {
            let mut info = json!({"id": mid, "sessionID": sid, "role": "user", "time": {"created": self.now()}});
            if let Some(agent) = &agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(sid, info);
        }
        let pid = part_id.unwrap_or_else(|| self.event_id.clone());
        let fields = json!({"type": "text", "text": text});
        if let Value::Object(fields) = fields
            && let Some(part) = build_part(&fields, &pid, mid, sid)
        {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    fn message_known(&self, sid: &str, mid: &str) -> bool {
        self.messages
            .iter()
            .any(|(s, v)| s == sid && v["id"] == mid)
            || self
                .store
                .session(sid)
                .and_then(|s| s.message(mid))
                .is_some_and(|m| !m.placeholder)
    }

    fn message_info(&self, sid: &str, mid: &str) -> Option<Value> {
        if let Some((_, v)) = self
            .messages
            .iter()
            .rev()
            .find(|(s, v)| s == sid && v["id"] == mid)
        {
            return Some(v.clone());
        }
        let message = self.store.session(sid)?.message(mid)?;
        if message.placeholder {
            return None;
        }
        serde_json::from_str(message.info.raw.as_ref()?.get()).ok()
    }

    fn announce_message(&mut self, sid: &str, info: Value) {
        if let Ok(raw) = to_raw_value(&info)
            && let Ok(parsed) = MessageInfo::from_raw(&raw)
        {
            self.push(Event::MessageUpdated(Box::new(parsed)));
            self.messages.push((sid.to_string(), info));
        }
    }

    /// The newest user message of a session: the turn a run answers.
    fn newest_user(&self, sid: &str) -> Option<String> {
        let announced = self
            .messages
            .iter()
            .rev()
            .find(|(s, v)| s == sid && v["role"] == "user")
            .and_then(|(_, v)| v["id"].as_str().map(str::to_string));
        announced.or_else(|| {
            let session = self.store.session(sid)?;
            let user = session.messages.iter().rev().find(|m| m.info.is_user())?;
            Some(user.info.id.clone())
        })
    }

    /// The message a run already has in a session (its id ends `.<run>`).
    fn run_message(&self, sid: &str, run: &str) -> Option<String> {
        let suffix = format!(".{run}");
        let announced = self
            .messages
            .iter()
            .filter(|(s, v)| s == sid && v["role"] == "assistant")
            .filter_map(|(_, v)| v["id"].as_str())
            .find(|id| id.ends_with(&suffix));
        if let Some(id) = announced {
            return Some(id.to_string());
        }
        let session = self.store.session(sid)?;
        let found = session
            .messages
            .iter()
            .rev()
            .find(|m| m.info.is_assistant() && m.info.id.ends_with(&suffix))?;
        Some(found.info.id.clone())
    }

    /// The assistant message this event's part belongs to, announced when new.
    fn assistant(&mut self, sid: &str, explicit: Option<String>) -> String {
        let user = self.newest_user(sid);
        let mid = explicit.unwrap_or_else(|| {
            // One message per run and session: the one the run already has,
            // else one answering the newest user message, sorting right after
            // it (`.` sorts before any ULID digit, so a run before the first
            // input stays before it). Looking the run up first keeps the
            // mapping the same when lines are replayed again.
            let run = self.run.clone().unwrap_or_else(|| self.stream_id.clone());
            self.run_message(sid, &run).unwrap_or_else(|| match &user {
                Some(u) => format!("{u}.{run}"),
                None => format!("msg_.{run}"),
            })
        });
        if !self.message_known(sid, &mid) {
            let mut info = json!({"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": self.now()}});
            if let Some(user) = user {
                info["parentID"] = json!(user);
            }
            if let Some(agent) = &self.agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(sid, info);
        }
        mid
    }

    /// A tool part of the session already holding `call_id`, or with `part_id`.
    fn find_tool(&self, sid: &str, part_id: Option<&str>, call_id: Option<&str>) -> Option<&Part> {
        let session = self.store.session(sid)?;
        let tools = || {
            session
                .messages
                .iter()
                .rev()
                .flat_map(|m| m.parts.iter().rev())
                .filter(|p| p.tool().is_some())
        };
        if let Some(pid) = part_id
            && let Some(p) = tools().find(|p| p.id == pid)
        {
            return Some(p);
        }
        let call = call_id.filter(|c| !c.is_empty())?;
        tools().find(|p| p.tool().is_some_and(|t| t.call_id == call))
    }

    fn part(
        &mut self,
        message_id: Option<String>,
        part_id: Option<String>,
        fields: Map<String, Value>,
    ) {
        let sid = self.session_id.clone();
        self.ensure_session(&sid, true);
        let kind = fields["type"].as_str().unwrap_or("").to_string();
        // A tool reported again (pending → running → completed) without a
        // part id updates the part its call already has.
        let earlier = match (&kind[..], &part_id) {
            ("tool", None) => {
                let call = fields.get("callID").and_then(Value::as_str);
                self.find_tool(&sid, None, call)
                    .map(|p| (p.message_id.clone(), p.id.clone()))
            }
            _ => None,
        };
        let (mid, pid) = match earlier {
            Some((mid, pid)) => (mid, pid),
            None => {
                let mid = self.assistant(&sid, message_id);
                (mid, part_id.unwrap_or_else(|| self.event_id.clone()))
            }
        };
        let Some(part) = build_part(&fields, &pid, &mid, &sid) else {
            return;
        };
        if kind == "step-start" {
            self.push(Event::SessionStatus {
                session_id: sid.clone(),
                status: SessionStatus::Busy,
            });
        }
        let new = self
            .store
            .session(&sid)
            .and_then(|s| s.message(&mid))
            .is_none_or(|m| m.part(&pid).is_none());
        let step = match &part.body {
            PartBody::StepFinish(step) if new => Some(step.clone()),
            _ => None,
        };
        self.push(Event::PartUpdated(Box::new(part)));
        if let Some(step) = step {
            self.add_cost(&sid, &mid, step.cost, &step.tokens, &step.reason);
        }
    }

    /// A step's cost and tokens, added to its message and its session (the
    /// bus reports both as totals; here only the steps carry them).
    fn add_cost(&mut self, sid: &str, mid: &str, cost: f64, tokens: &Tokens, reason: &str) {
        if let Some(mut info) = self.message_info(sid, mid) {
            add_usage(&mut info, cost, tokens);
            info["finish"] = json!(reason);
            // A step that asked for tools is followed by another one.
            if reason != "tool-calls" {
                info["time"]["completed"] = json!(self.now());
            }
            self.announce_message(sid, info);
        }
        if let Some(mut info) = self.session_info(sid) {
            add_usage(&mut info, cost, tokens);
            let updated = info["time"]["updated"]
                .as_i64()
                .unwrap_or(0)
                .max(self.now());
            info["time"]["updated"] = json!(updated);
            self.announce_session(info, false);
        }
    }

    fn tool_result(
        &mut self,
        message_id: Option<String>,
        part_id: Option<String>,
        call_id: Option<String>,
        mut fields: Map<String, Value>,
    ) {
        let sid = self.session_id.clone();
        self.ensure_session(&sid, true);
        // The tool part: named by the payload, by the causing event (the
        // `tool_use` whose id it took), or holding the same call.
        let named = part_id.as_deref().or(self.causation.as_deref());
        let found = self
            .find_tool(&sid, named, call_id.as_deref())
            .map(|p| (p.message_id.clone(), p.id.clone(), p.to_value()));
        let (mid, pid, mut part) = match found {
            Some(found) => found,
            None => {
                let mid = self.assistant(&sid, message_id);
                let pid = part_id.unwrap_or_else(|| self.event_id.clone());
                let tool = text(&fields, &["tool"]).ok().flatten();
                let part = json!({
                    "type": "tool",
                    "tool": tool.unwrap_or_else(|| "tool".into()),
                    "callID": call_id.clone().unwrap_or_default(),
                    "state": {"status": "running", "input": {}, "time": {"start": self.now()}},
                });
                (mid, pid, part)
            }
        };
        let mut state = match part.get_mut("state").map(Value::take) {
            Some(Value::Object(state)) => state,
            _ => Map::new(),
        };
        let explicit = match fields.remove("state") {
            Some(Value::Object(given)) => {
                let has_status = given.contains_key("status");
                state.extend(given);
                has_status
            }
            _ => false,
        };
        for key in ["input", "output", "title", "metadata", "error"] {
            if let Some(v) = fields.remove(key).filter(|v| !v.is_null()) {
                state.insert(key.into(), v);
            }
        }
        if !explicit {
            let failed = state.get("error").is_some_and(|e| !e.is_null());
            state.insert(
                "status".into(),
                json!(if failed { "error" } else { "completed" }),
            );
        }
        let mut time = match state.remove("time") {
            Some(Value::Object(t)) => t,
            _ => Map::new(),
        };
        time.entry("start").or_insert(json!(self.now()));
        time.entry("end").or_insert(json!(self.now()));
        state.insert("time".into(), Value::Object(time));
        part["state"] = Value::Object(state);
        if let Value::Object(fields) = part
            && let Some(part) = build_part(&fields, &pid, &mid, &sid)
        {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    /// `checkpoint.approved|rejected`: the reply to the prompt named by the
    /// payload, else by the causing event (the request's id, or the event
    /// that asked when the request had an id of its own).
    fn reply(&mut self, request_id: Option<String>, reply: String) {
        let request_id = request_id.or_else(|| {
            let cause = self.causation.clone()?;
            if self.store.prompt(&cause).is_some() {
                return Some(cause);
            }
            let asked = self.store.prompts().iter().find(|p| match &p.request {
                crate::model::PromptRequest::Permission(r) => {
                    r.metadata.get(CHECKPOINT_EVENT).and_then(Value::as_str) == Some(cause.as_str())
                }
                _ => false,
            });
            Some(asked.map_or(cause, |p| p.request.id().to_string()))
        });
        // With nothing to name the request, the reducer counts an orphan.
        let request_id = request_id.unwrap_or_else(|| self.event_id.clone());
        let session_id = self
            .store
            .prompt(&request_id)
            .map(|p| p.request.session_id().to_string())
            .unwrap_or_else(|| self.session_id.clone());
        self.push(Event::PermissionReplied {
            session_id,
            request_id,
            reply,
        });
    }
}

/// Add a step's cost and tokens to a message or session info (JSON).
fn add_usage(info: &mut Value, cost: f64, step: &Tokens) {
    let old_cost = info["cost"].as_f64().unwrap_or(0.0);
    info["cost"] = json!(old_cost + cost);
    let old: Tokens = Tokens::deserialize(&info["tokens"]).unwrap_or_default();
    let mut sum = json!({
        "input": old.input + step.input,
        "output": old.output + step.output,
        "reasoning": old.reasoning + step.reasoning,
        "cache": {"read": old.cache.read + step.cache.read, "write": old.cache.write + step.cache.write},
    });
    if old.total.is_some() || step.total.is_some() {
        sum["total"] = json!(old.sum() + step.sum());
    }
    info["tokens"] = sum;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NoObserver;

    fn line(kind: &str, id: &str, payload: &str) -> String {
        format!(
            r#"{{"id":"{id}","type":"{kind}","stream_id":"ses_root","correlation_id":"01RUN","actor":"build","timestamp":1000,"payload":{payload}}}"#
        )
    }

    fn apply(store: &mut Store, text: &str) {
        match super::super::record::decode(text).unwrap() {
            Decoded::Durable(ev) => {
                for env in durable_events(*ev, store) {
                    let outcome = store.apply(env, &mut NoObserver);
                    assert_eq!(outcome.orphan, None, "{text}");
                }
            }
            other => panic!("not durable: {other:?}"),
        }
    }

    #[test]
    fn decodes_whatever_the_key_order() {
        let sorted = r#"{"actor":"build","correlation_id":"01RUN","id":"01A","payload":{"snapshot":"abc"},"stream_id":"ses_root","timestamp":5,"type":"execution.step_start"}"#;
        let payload_first = r#"{"payload":{"type":"session.status","properties":{}},"id":"01A","type":"execution.step_start","stream_id":"ses_root"}"#;
        for text in [sorted, payload_first] {
            match super::super::record::decode(text) {
                Ok(Decoded::Durable(ev)) => {
                    assert_eq!(
                        (ev.kind.as_str(), ev.session_id.as_str()),
                        ("execution.step_start", "ses_root")
                    );
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let no_stream = r#"{"id":"01A","type":"execution.step_start","payload":{}}"#;
        let err = super::super::record::decode(no_stream).unwrap_err();
        assert!(err.0.contains("stream_id"), "{err}");
        let no_state = line("execution.tool_use", "01B", r#"{"tool":"read"}"#);
        let err = super::super::record::decode(&no_state).unwrap_err();
        assert!(err.0.contains("state"), "{err}");
    }

    #[test]
    fn a_run_is_one_assistant_message_after_its_user_turn() {
        let mut store = Store::new();
        apply(&mut store, &line("user.input", "01A", r#"{"text":"hi"}"#));
        apply(&mut store, &line("execution.step_start", "01B", "{}"));
        apply(
            &mut store,
            &line(
                "execution.tool_use",
                "01C",
                r#"{"tool":"read","callID":"c1","state":{"status":"running","input":{}}}"#,
            ),
        );
        apply(
            &mut store,
            &line(
                "execution.tool_result",
                "01D",
                r#"{"callID":"c1","output":"text"}"#,
            ),
        );
        apply(
            &mut store,
            &line(
                "execution.step_finish",
                "01E",
                r#"{"reason":"stop","cost":0.5,"tokens":{"input":10,"output":5}}"#,
            ),
        );
        let session = store.session("ses_root").unwrap();
        let ids: Vec<&str> = session.messages.iter().map(|m| m.id()).collect();
        assert_eq!(ids, ["msg_01A", "msg_01A.01RUN"]);
        let turns = session.turns();
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].assistants.len(), 1);
        let answer = &session.messages[1];
        assert_eq!(answer.parts.len(), 3, "step-start, one tool, step-finish");
        let tool = answer.parts[1].tool().unwrap();
        assert_eq!(tool.state.output.as_deref(), Some("text"));
        assert!(tool.state.status.is_terminal());
        assert_eq!(answer.info.cost, 0.5);
        assert_eq!(session.info.tokens.sum(), 15);
    }

    #[test]
    fn a_checkpoint_reply_finds_its_request_through_the_causing_event() {
        let mut store = Store::new();
        apply(
            &mut store,
            &line(
                "checkpoint.requested",
                "01A",
                r#"{"id":"per_x","permission":"edit","patterns":["a.rs"]}"#,
            ),
        );
        let reply = r#"{"id":"01B","type":"checkpoint.rejected","stream_id":"ses_root","causation_id":"01A","payload":{}}"#;
        apply(&mut store, reply);
        let prompt = store.prompt("per_x").unwrap();
        assert_eq!(
            prompt.resolution,
            Some(crate::model::Resolution::Replied("reject".into()))
        );
    }
}
