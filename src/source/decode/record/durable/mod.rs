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

use crate::source::decode::record::{Decoded, RecordError};

mod map;
use crate::model::entity::part::PartBody;
use crate::model::{FileDiff, Part, PermissionRequest};
pub use map::durable_events;

/// The type namespaces of seed 004 (§3.1, plus `user.`/`human.` of §2.3/§3.2).
#[rustfmt::skip]
const NAMESPACES: [&str; 7] =
    ["lifecycle.", "execution.", "agent.", "checkpoint.", "files.", "user.", "human."];

/// Whether `kind` is in a Durable Stream namespace (no opencode bus event is).
pub fn is_durable_type(kind: &str) -> bool {
    NAMESPACES.iter().any(|ns| kind.starts_with(ns))
}

/// One Durable Stream event, checked and ready to map.
#[derive(Debug, Clone)]
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
        if e.is_data() {
            RecordError::shape(format!("not a Durable Stream envelope: {e}"))
        } else {
            RecordError::from_json(&e)
        }
    })?;
    let kind = w.kind.unwrap_or_default();
    let bad = |why: String| RecordError::shape(format!("durable event {kind:?}: {why}"));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NoObserver, Resolution, Store};

    fn line(kind: &str, id: &str, payload: &str) -> String {
        format!(
            r#"{{"id":"{id}","type":"{kind}","stream_id":"ses_root","correlation_id":"01RUN","actor":"build","timestamp":1000,"payload":{payload}}}"#
        )
    }

    fn apply(store: &mut Store, text: &str) {
        let Ok(Decoded::Durable(ev)) = crate::source::decode::record::decode(text) else {
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
        let err = crate::source::decode::record::decode(&bad).unwrap_err();
        assert!(err.message.contains("checkpoint.requested"), "{err}");
    }

    #[test]
    fn an_agent_error_is_the_session_error_in_either_form() {
        let mut store = Store::new();
        apply(&mut store, &line("user.input", "01A", r#"{"text":"hi"}"#));
        apply(
            &mut store,
            &line("agent.error", "01B", r#"{"error":"overloaded"}"#),
        );
        let error = store.session("ses_root").unwrap().error.clone().unwrap();
        assert_eq!(error.name, "AgentError");
        assert_eq!(error.message.as_deref(), Some("overloaded"));
        let typed = r#"{"error":{"name":"APIError","data":{"message":"rate limited"}}}"#;
        apply(&mut store, &line("agent.error", "01C", typed));
        let session = store.session("ses_root").unwrap();
        let error = session.error.clone().unwrap();
        assert_eq!(error.name, "APIError");
        assert_eq!(error.message.as_deref(), Some("rate limited"));
        assert!(store.ignored_counts().is_empty());
    }
}
