//! The Durable Stream envelope (seed 004, §3.1): one `StreamEvent` per JSON
//! line, `{id, type, stream_id, causation_id?, correlation_id, actor,
//! timestamp, payload, metadata?}`.
//!
//! [`decode`] checks the envelope and the payload's shape, so a bad one is a
//! `RecordError` counted like any malformed line; [`durable_events`] turns
//! one event into the model events a server would have sent, the way
//! `run_events` does for `opencode run` lines, for the one reducer to apply.
//!
//! The format names less than the bus does, so some ids are derived, from
//! the event and the store only (a seek that restores a store checkpoint, or
//! a line replayed twice, maps the same way):
//! - the stream id is the root session; a session that names no parent hangs
//!   under it, so the session list shows the trace as a tree;
//! - a user input is message `msg_<event id>`;
//! - a workflow run (the correlation id) is one assistant message per
//!   session, `<user message id>.<run id>`: it sorts right after the user
//!   message it answers (messages are kept in id order);
//! - a part is the payload's part id, else the event id (ULIDs sort by time).

use serde::Deserialize;
use serde_json::value::to_raw_value;
use serde_json::{Map, Value, json};

use super::record::{Decoded, RecordError};
use crate::model::part::PartBody;
use crate::model::{
    Envelope, ErrorInfo, Event, FileDiff, MessageInfo, Part, PermissionRequest, PromptRequest,
    SessionInfo, SessionStatus, Store, Tokens,
};

/// The type namespaces of seed 004 (§3.1, plus `user.`/`human.` of §2.3/§3.2).
#[rustfmt::skip]
const NAMESPACES: [&str; 7] =
    ["lifecycle.", "execution.", "agent.", "checkpoint.", "files.", "user.", "human."];

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
    /// Checked by [`check`]: every field read later has the expected shape.
    payload: Map<String, Value>,
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

/// Fields that are ids wherever they appear in a payload.
#[rustfmt::skip]
const ID_KEYS: [&str; 13] = [
    "id", "sessionID", "session_id", "parentID", "parent_id", "messageID", "message_id",
    "partID", "part_id", "requestID", "request_id", "callID", "call_id",
];

/// Decode a line whose keys said it is a Durable Stream event.
pub fn decode(text: &str) -> Result<Decoded, RecordError> {
    let w: Wire = serde_json::from_str(text).map_err(|e| {
        RecordError(if e.is_data() {
            format!("not a Durable Stream envelope: {e}")
        } else {
            format!("invalid JSON at column {}: {e}", e.column())
        })
    })?;
    let kind = w.kind.unwrap_or_default();
    let bad = |why: String| RecordError(format!("durable event {kind:?}: {why}"));
    let (Some(stream_id), Some(id)) = (w.stream_id, w.id) else {
        return Err(bad("no \"stream_id\" or no \"id\"".into()));
    };
    let ids = [&w.causation_id, &w.correlation_id];
    for v in [&stream_id, &id]
        .into_iter()
        .chain(ids.into_iter().flatten())
    {
        check_id(v).map_err(bad)?;
    }
    let mut payload = match w.payload {
        Some(Value::Object(map)) => map,
        // `files.changed` may carry the list itself (seed 2.1: "delta payload").
        Some(list @ Value::Array(_)) if kind == "files.changed" => {
            Map::from_iter([("diff".to_string(), list)])
        }
        _ => return Err(bad("no payload object".into())),
    };
    let meta = w.metadata.as_ref().and_then(Value::as_object);
    check(&kind, &mut payload, meta).map_err(bad)?;
    let session_id = session_of(&kind, &payload, meta).unwrap_or_else(|| stream_id.clone());
    Ok(Decoded::Durable(Box::new(DurableEvent {
        id,
        kind,
        stream_id,
        causation_id: w.causation_id,
        correlation_id: w.correlation_id,
        actor: w.actor.filter(|a| !a.is_empty()),
        timestamp: w
            .timestamp
            .as_ref()
            .and_then(Value::as_f64)
            .map(|f| f as i64),
        session_id,
        payload,
    })))
}

/// Ids become keys and dump lines: no control characters, not empty.
fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.chars().any(char::is_control) {
        return Err(format!("{id:?} is not a usable id"));
    }
    Ok(())
}

/// The first of `keys` holding a string.
fn get(map: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| map.get(*k)?.as_str())
        .map(str::to_string)
}

/// The object a session event describes: the SDK's own `session.created`
/// carries `{info: Session}`.
fn session_source(p: &Map<String, Value>) -> &Map<String, Value> {
    p.get("info").and_then(Value::as_object).unwrap_or(p)
}

fn session_of(
    kind: &str,
    p: &Map<String, Value>,
    meta: Option<&Map<String, Value>>,
) -> Option<String> {
    const KEYS: [&str; 2] = ["sessionID", "session_id"];
    let own = match kind {
        "lifecycle.session.created" | "agent.spawned" => {
            get(p, &KEYS).or_else(|| get(session_source(p), &["sessionID", "session_id", "id"]))
        }
        _ => get(p, &KEYS),
    };
    own.or_else(|| get(meta?, &KEYS))
}

/// Whether the payload fits its type: what each type maps to is built once
/// here, so mapping it later cannot fail. A few shapes are normalised.
fn check(
    kind: &str,
    p: &mut Map<String, Value>,
    meta: Option<&Map<String, Value>>,
) -> Result<(), String> {
    // An id is a string fit to be a key, wherever it appears; metadata is
    // free-form, only the session it may name is read from it.
    let meta = meta.map(|m| (m, &ID_KEYS[1..3]));
    let maps = [(&*p, &ID_KEYS[..]), (session_source(p), &ID_KEYS[..])];
    for (map, keys) in maps.into_iter().chain(meta) {
        for key in keys {
            match map.get(*key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => check_id(s)?,
                Some(_) => return Err(format!("\"{key}\" is not a string")),
            }
        }
    }
    if let Some(call) = p.remove("call_id") {
        p.entry("callID").or_insert(call);
    }
    match kind {
        "agent.spawned" if session_of(kind, p, None).is_none() => {
            Err("names no session for the agent".into())
        }
        "execution.tool_use" if !p.get("state").is_some_and(Value::is_object) => {
            Err("no \"state\" object".into())
        }
        "execution.tool_use" if get(p, &["tool"]).is_none() => Err("no \"tool\" name".into()),
        "execution.step_start"
        | "execution.step_finish"
        | "execution.tool_use"
        | "files.patched" => {
            let part = build_part(&part_fields(kind, p), "x", "x", "x");
            match part.map(|p| p.body) {
                Some(PartBody::Unknown { kind }) => Err(format!("the payload is no {kind} part")),
                None => Err("the payload is no part".into()),
                _ => Ok(()),
            }
        }
        "execution.tool_result" | "execution.step" => {
            if p.get("state").is_some_and(|s| !s.is_object()) {
                return Err("\"state\" is not an object".into());
            }
            // The hook's output and error are text; anything else is kept as JSON.
            for key in ["output", "error"] {
                if let Some(v) = p.get_mut(key).filter(|v| !v.is_string() && !v.is_null()) {
                    *v = Value::String(v.to_string());
                }
            }
            Ok(())
        }
        "user.input" | "human.input" if input_text(p).is_none() => Err("no text".into()),
        "checkpoint.requested" => checkpoint(p, "x").map(drop),
        "files.changed" => diffs(p).map(drop),
        _ => Ok(()),
    }
}

/// The part a `step_start|step_finish|tool_use` or `files.patched` payload
/// stands for (seed 2.2): the payload itself, typed, without its ids.
fn part_fields(kind: &str, p: &Map<String, Value>) -> Map<String, Value> {
    let part_type = match kind {
        "execution.step_start" => "step-start",
        "execution.step_finish" => "step-finish",
        "execution.tool_use" => "tool",
        _ => "patch",
    };
    let mut fields = p.clone();
    for key in ID_KEYS.iter().filter(|k| **k != "callID") {
        fields.remove(*key);
    }
    fields.insert("type".into(), json!(part_type));
    fields
}

fn build_part(fields: &Map<String, Value>, id: &str, message: &str, session: &str) -> Option<Part> {
    let mut map = fields.clone();
    map.insert("id".into(), json!(id));
    map.insert("messageID".into(), json!(message));
    map.insert("sessionID".into(), json!(session));
    Part::from_raw(&to_raw_value(&map).ok()?).ok()
}

/// A user input's text: `text`/`content`/`prompt`/`message`, or the text
/// parts of the `chat.message` hook's `parts`.
fn input_text(p: &Map<String, Value>) -> Option<String> {
    if let Some(t) = get(p, &["text", "content", "prompt", "message"]) {
        return Some(t);
    }
    let texts: Vec<&str> = p
        .get("parts")?
        .as_array()?
        .iter()
        .filter(|part| {
            part.get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "text")
        })
        .filter_map(|part| part.get("text")?.as_str())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// The metadata key that remembers the asking event of a checkpoint whose
/// request id is not the event id: a reply may name either.
const CHECKPOINT_EVENT: &str = "checkpointEvent";

/// `checkpoint.requested` as a permission prompt. It is the `permission.ask`
/// hook's object when a bridge logged that, or a plain decision
/// (`requestCheckpoint(decision, options)`, seed 3.2).
fn checkpoint(p: &Map<String, Value>, event_id: &str) -> Result<PermissionRequest, String> {
    let id = get(p, &["requestID", "request_id", "id"]).unwrap_or_else(|| event_id.into());
    let mut metadata = p
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in ["decision", "options", "title"] {
        if let Some(v) = p.get(key) {
            metadata.entry(key).or_insert_with(|| v.clone());
        }
    }
    if id != event_id {
        metadata.insert(CHECKPOINT_EVENT.into(), json!(event_id));
    }
    let mut patterns = match p.get("patterns").or_else(|| p.get("pattern")) {
        Some(Value::String(s)) => json!([s]),
        Some(v) => v.clone(),
        None => json!([]),
    };
    if patterns.as_array().is_some_and(Vec::is_empty)
        && let Some(what) = get(p, &["decision", "title"])
    {
        patterns = json!([what]);
    }
    let mut request = json!({
        "id": id,
        "permission": get(p, &["permission", "type"]).unwrap_or_else(|| "checkpoint".into()),
        "patterns": patterns,
        "metadata": metadata,
        "always": p.get("always").cloned().unwrap_or(json!([])),
    });
    if let Some(tool) = p.get("tool").filter(|t| t.is_object()) {
        request["tool"] = tool.clone();
    } else if let Some(call) = get(p, &["callID"]) {
        let message = get(p, &["messageID", "message_id"]).unwrap_or_default();
        request["tool"] = json!({"messageID": message, "callID": call});
    }
    PermissionRequest::deserialize(&request).map_err(|e| format!("not a checkpoint: {e}"))
}

/// `files.changed`: `{diff|diffs|files: [...]}` of `session.diff` objects or paths.
fn diffs(p: &Map<String, Value>) -> Result<Vec<FileDiff>, String> {
    let list = ["diff", "diffs", "files"]
        .iter()
        .find_map(|k| p.get(*k)?.as_array())
        .ok_or("no list of changed files")?;
    list.iter()
        .map(|item| match item {
            Value::String(file) => Ok(FileDiff {
                file: file.clone(),
                ..Default::default()
            }),
            other => FileDiff::deserialize(other).map_err(|e| format!("a changed file: {e}")),
        })
        .collect()
}

/// The model events one Durable Stream event stands for. Sessions and
/// messages are announced the first time they are named, so nothing lands
/// on a placeholder.
pub fn durable_events(ev: DurableEvent, store: &Store) -> Vec<Envelope> {
    let mut m = Mapper {
        store,
        agent: ev.actor.clone().filter(|a| a != "user"),
        ev,
        out: Vec::new(),
        sessions: Vec::new(),
        messages: Vec::new(),
    };
    let (kind, sid, p) = (
        m.ev.kind.clone(),
        m.ev.session_id.clone(),
        m.ev.payload.clone(),
    );
    if !KNOWN.contains(&kind.as_str()) {
        // Counted by type with the bus events we ignore: a newer producer's
        // events show in the summary instead of as damage.
        m.push(Event::Other(kind));
        return m.out;
    }
    let root = m.ev.stream_id.clone();
    m.ensure_session(&root, false);
    if !matches!(kind.as_str(), "lifecycle.session.created" | "agent.spawned") {
        m.ensure_session(&sid, true);
    }
    match kind.as_str() {
        "lifecycle.session.created" | "agent.spawned" => m.session(&p, kind == "agent.spawned"),
        "lifecycle.session.idle" | "agent.completed" => {
            m.push(Event::SessionIdle { session_id: sid })
        }
        "lifecycle.session.compacted" | "lifecycle.compacted" => {
            m.push(Event::SessionCompacted { session_id: sid })
        }
        "execution.tool_result" | "execution.step" => m.tool_result(p),
        "user.input" | "human.input" => {
            let mid = get(&p, &["messageID", "message_id"])
                .or_else(|| get(p.get("message")?.as_object()?, &["id"]))
                .unwrap_or_else(|| format!("msg_{}", m.ev.id));
            let (agent, part) = (m.agent.clone(), get(&p, &["partID", "part_id"]));
            m.user_message(&sid, &mid, part, &input_text(&p).unwrap_or_default(), agent);
        }
        "agent.aborted" => {
            let reason =
                get(&p, &["reason", "message", "error"]).unwrap_or_else(|| "aborted".into());
            let error = json!({"name": "MessageAbortedError", "data": {"message": reason}});
            if let Ok(raw) = to_raw_value(&error) {
                let error = ErrorInfo::from_raw(&raw);
                m.push(Event::SessionError {
                    session_id: Some(sid.clone()),
                    error,
                });
            }
            m.push(Event::SessionIdle { session_id: sid });
        }
        "agent.handoff" => {
            // Shown where it happened, marked synthetic: our words, not the model's.
            let mut note = String::from("handoff");
            for (word, keys) in [
                (" from ", &["from", "from_agent"][..]),
                (" to ", &["to", "to_agent", "agent"]),
                (": ", &["reason", "summary", "message"]),
            ] {
                if let Some(v) = get(&p, keys) {
                    note.push_str(word);
                    note.push_str(&v);
                }
            }
            let fields = json!({"type": "text", "text": note, "synthetic": true});
            m.part(None, None, fields.as_object().cloned().unwrap_or_default());
        }
        "checkpoint.requested" => {
            let Ok(mut request) = checkpoint(&p, &m.ev.id) else {
                return m.out;
            };
            // A request naming only its call: the message is the tool part's.
            if let Some(tool) = &mut request.tool
                && tool.message_id.is_empty()
                && let Some(part) = m.find_tool(&sid, None, Some(&tool.call_id))
            {
                tool.message_id = part.message_id.clone();
            }
            request.session_id = sid;
            m.push(Event::PermissionAsked(Box::new(request)));
        }
        "checkpoint.approved" | "checkpoint.rejected" => {
            // `always` when the approval says so; otherwise an approval is `once`.
            let reply = match (kind.as_str(), get(&p, &["reply", "response"]).as_deref()) {
                ("checkpoint.rejected", _) => "reject",
                (_, Some("always")) => "always",
                _ => "once",
            };
            m.reply(get(&p, &["requestID", "request_id", "id"]), reply);
        }
        "files.changed" => {
            let diff = diffs(&p).unwrap_or_default();
            m.push(Event::SessionDiff {
                session_id: sid,
                diff,
            });
        }
        _ => {
            let (mid, pid) = (
                get(&p, &["messageID", "message_id"]),
                get(&p, &["partID", "part_id", "id"]),
            );
            m.part(mid, pid, part_fields(&kind, &p));
        }
    }
    m.out
}

/// The types [`durable_events`] maps (the last four as parts).
#[rustfmt::skip]
const KNOWN: [&str; 20] = [
    "lifecycle.session.created", "agent.spawned", "lifecycle.session.idle", "agent.completed",
    "lifecycle.session.compacted", "lifecycle.compacted", "execution.tool_result",
    "execution.step", "user.input", "human.input", "agent.aborted", "agent.handoff",
    "checkpoint.requested", "checkpoint.approved", "checkpoint.rejected", "files.changed",
    "execution.step_start", "execution.step_finish", "execution.tool_use", "files.patched",
];

struct Mapper<'s> {
    store: &'s Store,
    ev: DurableEvent,
    /// The acting agent (`None` for the user).
    agent: Option<String>,
    out: Vec<Envelope>,
    /// Session infos announced by this event.
    sessions: Vec<Value>,
    /// Message infos announced by this event.
    messages: Vec<Value>,
}

impl<'s> Mapper<'s> {
    fn push(&mut self, event: Event) {
        let received_ms = self.ev.timestamp;
        self.out.push(Envelope {
            received_ms,
            ..Envelope::new(event)
        });
    }

    fn now(&self) -> i64 {
        self.ev.timestamp.unwrap_or(0)
    }

    /// A session's info as JSON: announced by this event, else stored.
    fn session_info(&self, id: &str) -> Option<Value> {
        if let Some(v) = self.sessions.iter().rev().find(|v| v["id"] == id) {
            return Some(v.clone());
        }
        let session = self.store.session(id).filter(|s| !s.placeholder)?;
        serde_json::from_str(session.info.raw.as_ref()?.get()).ok()
    }

    fn announce_session(&mut self, info: Value, created: bool) {
        let Some(parsed) = to_raw_value(&info)
            .ok()
            .and_then(|r| SessionInfo::from_raw(&r).ok())
        else {
            return;
        };
        let parsed = Box::new(parsed);
        self.push(if created {
            Event::SessionCreated(parsed)
        } else {
            Event::SessionUpdated(parsed)
        });
        self.sessions.push(info);
    }

    /// Announce a session named for the first time: under the stream root
    /// unless it is the root, titled after the acting agent when the event
    /// is its own.
    fn ensure_session(&mut self, id: &str, own_event: bool) {
        let known = self.sessions.iter().any(|v| v["id"] == id)
            || self.store.session(id).is_some_and(|s| !s.placeholder);
        if known {
            return;
        }
        let at = self.now();
        let mut info = json!({"id": id, "title": "", "time": {"created": at, "updated": at}});
        if id != self.ev.stream_id {
            info["parentID"] = json!(self.ev.stream_id);
        }
        if own_event && let Some(agent) = &self.agent {
            info["title"] = json!(agent);
            info["agent"] = json!(agent);
        }
        self.announce_session(info, true);
    }

    /// `lifecycle.session.created` / `agent.spawned`: create the session, or
    /// complete what an earlier mention announced.
    fn session(&mut self, p: &Map<String, Value>, spawned: bool) {
        let (sid, at, src) = (self.ev.session_id.clone(), self.now(), session_source(p));
        let existing = self.session_info(&sid);
        let created = existing.is_none();
        let mut info =
            existing.unwrap_or_else(|| json!({"id": sid, "title": "", "time": {"created": at}}));
        // A named parent wins; else the one announced earlier; else the root.
        if let Some(parent) = get(src, &["parentID", "parent_id"]).filter(|p| *p != sid) {
            info["parentID"] = json!(parent);
        } else if info["parentID"].is_null() && sid != self.ev.stream_id {
            info["parentID"] = json!(self.ev.stream_id);
        }
        let agent = get(src, &["agent", "name"]).or_else(|| self.agent.clone());
        let spawned_title = if spawned {
            get(src, &["description"])
        } else {
            None
        };
        if let Some(title) = get(src, &["title"]).or(spawned_title) {
            info["title"] = json!(title);
        } else if let Some(agent) = agent.as_ref().filter(|_| info["title"] == "") {
            info["title"] = json!(agent);
        }
        if let Some(agent) = &agent {
            info["agent"] = json!(agent);
        }
        if let Some(dir) = get(src, &["directory"]) {
            info["directory"] = json!(dir);
        }
        info["time"]["updated"] = json!(info["time"]["updated"].as_i64().unwrap_or(at).max(at));
        self.announce_session(info, created);
        if spawned {
            self.push(Event::SessionStatus {
                session_id: sid.clone(),
                status: SessionStatus::Busy,
            });
        }
        if let Some(prompt) = get(src, &["prompt"]) {
            // The subagent's task, addressed to it, as opencode's task prompt is.
            let mid = format!("msg_{}", self.ev.id);
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
            if let Some(agent) = agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(info);
        }
        let pid = part_id.unwrap_or_else(|| self.ev.id.clone());
        let fields = json!({"type": "text", "text": text});
        if let Some(part) = build_part(fields.as_object().unwrap_or(&Map::new()), &pid, mid, sid) {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    /// A message's info as JSON: announced by this event, else stored.
    fn message_info(&self, sid: &str, mid: &str) -> Option<Value> {
        if let Some(v) = self
            .messages
            .iter()
            .rev()
            .find(|v| v["sessionID"] == sid && v["id"] == mid)
        {
            return Some(v.clone());
        }
        let message = self
            .store
            .session(sid)?
            .message(mid)
            .filter(|m| !m.placeholder)?;
        serde_json::from_str(message.info.raw.as_ref()?.get()).ok()
    }

    fn message_known(&self, sid: &str, mid: &str) -> bool {
        self.messages
            .iter()
            .any(|v| v["sessionID"] == sid && v["id"] == mid)
            || self
                .store
                .session(sid)
                .and_then(|s| s.message(mid))
                .is_some_and(|m| !m.placeholder)
    }

    fn announce_message(&mut self, info: Value) {
        if let Some(parsed) = to_raw_value(&info)
            .ok()
            .and_then(|r| MessageInfo::from_raw(&r).ok())
        {
            self.push(Event::MessageUpdated(Box::new(parsed)));
            self.messages.push(info);
        }
    }

    /// The ids of a session's messages with `role`, newest first, this
    /// event's announcements before the stored ones.
    fn message_ids(&self, sid: &str, role: &str) -> Vec<String> {
        let announced = self
            .messages
            .iter()
            .rev()
            .filter(|v| v["sessionID"] == sid && v["role"] == role);
        let mut ids: Vec<String> = announced
            .filter_map(|v| v["id"].as_str().map(str::to_string))
            .collect();
        if let Some(session) = self.store.session(sid) {
            let user = role == "user";
            let stored = session
                .messages
                .iter()
                .rev()
                .filter(|m| m.info.is_user() == user);
            ids.extend(stored.map(|m| m.info.id.clone()));
        }
        ids
    }

    /// The assistant message this event's part belongs to, announced when new.
    fn assistant(&mut self, sid: &str, explicit: Option<String>) -> String {
        let user = self.message_ids(sid, "user").into_iter().next();
        let run = self
            .ev
            .correlation_id
            .clone()
            .unwrap_or_else(|| self.ev.stream_id.clone());
        // The message the run already has here; else a new one answering the
        // newest user message and sorting right after it (`.` sorts before
        // any ULID digit, so a run before the first input stays before it).
        let suffix = format!(".{run}");
        let mid = explicit
            .or_else(|| {
                self.message_ids(sid, "assistant")
                    .into_iter()
                    .find(|id| id.ends_with(&suffix))
            })
            .unwrap_or_else(|| format!("{}{suffix}", user.as_deref().unwrap_or("msg_")));
        if !self.message_known(sid, &mid) {
            let mut info = json!({"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": self.now()}});
            if let Some(user) = user {
                info["parentID"] = json!(user);
            }
            if let Some(agent) = &self.agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(info);
        }
        mid
    }

    /// A tool part of the session with `part_id`, else holding `call_id`.
    fn find_tool(
        &self,
        sid: &str,
        part_id: Option<&str>,
        call_id: Option<&str>,
    ) -> Option<&'s Part> {
        let session = self.store.session(sid)?;
        let mut tools = session
            .messages
            .iter()
            .rev()
            .flat_map(|m| m.parts.iter().rev());
        let by_id = |p: &&Part| p.tool().is_some() && Some(p.id.as_str()) == part_id;
        let by_call = |p: &&Part| {
            p.tool()
                .is_some_and(|t| Some(t.call_id.as_str()) == call_id && !t.call_id.is_empty())
        };
        tools.clone().find(by_id).or_else(|| tools.find(by_call))
    }

    fn part(
        &mut self,
        message_id: Option<String>,
        part_id: Option<String>,
        fields: Map<String, Value>,
    ) {
        let sid = self.ev.session_id.clone();
        let kind = fields["type"].as_str().unwrap_or("").to_string();
        // A tool reported again (pending → running → completed) without a
        // part id updates the part its call already has.
        let call = fields
            .get("callID")
            .and_then(Value::as_str)
            .filter(|_| kind == "tool" && part_id.is_none());
        let earlier = call.and_then(|c| self.find_tool(&sid, None, Some(c)));
        let (mid, pid) = match earlier.map(|p| (p.message_id.clone(), p.id.clone())) {
            Some(found) => found,
            None => (
                self.assistant(&sid, message_id),
                part_id.unwrap_or_else(|| self.ev.id.clone()),
            ),
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
        let stored = self
            .store
            .session(&sid)
            .and_then(|s| s.message(&mid)?.part(&pid))
            .is_some();
        let step = match &part.body {
            PartBody::StepFinish(step) if !stored => Some(step.clone()),
            _ => None,
        };
        self.push(Event::PartUpdated(Box::new(part)));
        if let Some(step) = step {
            // The bus reports message and session totals; here only steps do.
            if let Some(mut info) = self.message_info(&sid, &mid) {
                add_usage(&mut info, step.cost, &step.tokens);
                info["finish"] = json!(step.reason);
                // A step that asked for tools is followed by another one.
                if step.reason != "tool-calls" {
                    info["time"]["completed"] = json!(self.now());
                }
                self.announce_message(info);
            }
            if let Some(mut info) = self.session_info(&sid) {
                add_usage(&mut info, step.cost, &step.tokens);
                info["time"]["updated"] = json!(
                    info["time"]["updated"]
                        .as_i64()
                        .unwrap_or(0)
                        .max(self.now())
                );
                self.announce_session(info, false);
            }
        }
    }

    /// `execution.tool_result`: the tool part named by the payload, by the
    /// causing event (the `tool_use`, whose id the part took) or holding the
    /// same call, completed with the result; a new one when there is none.
    fn tool_result(&mut self, mut p: Map<String, Value>) {
        let sid = self.ev.session_id.clone();
        let (pid, call) = (get(&p, &["partID", "part_id", "id"]), get(&p, &["callID"]));
        let named = pid.clone().or_else(|| self.ev.causation_id.clone());
        let found = self.find_tool(&sid, named.as_deref(), call.as_deref());
        let (mid, pid, mut part) = match found
            .map(|t| (t.message_id.clone(), t.id.clone(), t.to_value()))
        {
            Some(found) => found,
            None => {
                let tool = get(&p, &["tool"]).unwrap_or_else(|| "tool".into());
                let part = json!({"type": "tool", "tool": tool, "callID": call.unwrap_or_default(), "state": {"input": {}}});
                let mid = self.assistant(&sid, get(&p, &["messageID", "message_id"]));
                (mid, pid.unwrap_or_else(|| self.ev.id.clone()), part)
            }
        };
        let mut state = part["state"].as_object().cloned().unwrap_or_default();
        let given = p
            .remove("state")
            .and_then(|s| s.as_object().cloned())
            .unwrap_or_default();
        let explicit = given.contains_key("status");
        state.extend(given);
        for key in ["input", "output", "title", "metadata", "error"] {
            if let Some(v) = p.remove(key).filter(|v| !v.is_null()) {
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
        let mut time = state
            .get("time")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        time.entry("start").or_insert(json!(self.now()));
        time.entry("end").or_insert(json!(self.now()));
        state.insert("time".into(), Value::Object(time));
        part["state"] = Value::Object(state);
        if let Some(part) = part
            .as_object()
            .and_then(|f| build_part(f, &pid, &mid, &sid))
        {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    /// `checkpoint.approved|rejected`: the reply to the request the payload
    /// names, else the causing event does (the request's id, or the event
    /// that asked when the request had an id of its own).
    fn reply(&mut self, named: Option<String>, reply: &str) {
        let by_cause = || {
            let cause = self.ev.causation_id.clone()?;
            let asked = self.store.prompts().iter().find(|p| match &p.request {
                PromptRequest::Permission(r) => {
                    r.metadata.get(CHECKPOINT_EVENT) == Some(&json!(cause))
                }
                PromptRequest::Question(_) => false,
            });
            Some(asked.map_or(cause, |p| p.request.id().to_string()))
        };
        // With nothing to name the request, the reducer counts an orphan.
        let request_id = named
            .or_else(by_cause)
            .unwrap_or_else(|| self.ev.id.clone());
        let session_id = match self.store.prompt(&request_id) {
            Some(p) => p.request.session_id().to_string(),
            None => self.ev.session_id.clone(),
        };
        self.push(Event::PermissionReplied {
            session_id,
            request_id,
            reply: reply.into(),
        });
    }
}

/// Add a step's cost and tokens to a message's or session's info (JSON).
fn add_usage(info: &mut Value, cost: f64, step: &Tokens) {
    info["cost"] = json!(info["cost"].as_f64().unwrap_or(0.0) + cost);
    let old = Tokens::deserialize(&info["tokens"]).unwrap_or_default();
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
    use crate::model::{NoObserver, Resolution};

    fn line(kind: &str, id: &str, payload: &str) -> String {
        format!(
            r#"{{"id":"{id}","type":"{kind}","stream_id":"ses_root","correlation_id":"01RUN","actor":"build","timestamp":1000,"payload":{payload}}}"#
        )
    }

    fn apply(store: &mut Store, text: &str) {
        let Ok(Decoded::Durable(ev)) = super::super::record::decode(text) else {
            panic!("not a durable event: {text}");
        };
        for env in durable_events(*ev, store) {
            assert_eq!(store.apply(env, &mut NoObserver).orphan, None, "{text}");
        }
    }

    #[test]
    fn a_run_is_one_assistant_message_after_its_user_turn() {
        let mut store = Store::new();
        let tool = r#"{"tool":"read","call_id":"c1","state":{"status":"running","input":{}}}"#;
        let finish = r#"{"reason":"stop","cost":0.5,"tokens":{"input":10,"output":5}}"#;
        apply(&mut store, &line("user.input", "01A", r#"{"text":"hi"}"#));
        apply(&mut store, &line("execution.step_start", "01B", "{}"));
        apply(&mut store, &line("execution.tool_use", "01C", tool));
        apply(
            &mut store,
            &line(
                "execution.tool_result",
                "01D",
                r#"{"callID":"c1","output":"text"}"#,
            ),
        );
        apply(&mut store, &line("execution.step_finish", "01E", finish));
        let session = store.session("ses_root").unwrap();
        let ids: Vec<&str> = session.messages.iter().map(|m| m.id()).collect();
        assert_eq!(ids, ["msg_01A", "msg_01A.01RUN"]);
        assert_eq!(session.turns().len(), 1);
        let answer = &session.messages[1];
        assert_eq!(answer.parts.len(), 3, "step-start, one tool, step-finish");
        let tool = answer.parts[1].tool().unwrap();
        assert_eq!(
            (tool.call_id.as_str(), tool.state.output.as_deref()),
            ("c1", Some("text"))
        );
        assert!(tool.state.status.is_terminal());
        assert_eq!((answer.info.cost, session.info.tokens.sum()), (0.5, 15));
    }

    #[test]
    fn a_checkpoint_reply_finds_its_request_through_the_causing_event() {
        let mut store = Store::new();
        let ask = r#"{"id":"per_x","permission":"edit","patterns":["a.rs"]}"#;
        apply(&mut store, &line("checkpoint.requested", "01A", ask));
        let reply = r#"{"id":"01B","type":"checkpoint.rejected","stream_id":"ses_root","causation_id":"01A","payload":{}}"#;
        apply(&mut store, reply);
        let resolution = &store.prompt("per_x").unwrap().resolution;
        assert_eq!(resolution, &Some(Resolution::Replied("reject".into())));
        // A payload of the wrong shape is an error naming the type.
        let bad = line(
            "checkpoint.requested",
            "01C",
            r#"{"patterns":"x","always":3}"#,
        );
        let err = super::super::record::decode(&bad).unwrap_err();
        assert!(err.0.contains("checkpoint.requested"), "{err}");
    }
}
