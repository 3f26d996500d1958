//! A session's latest state as the bus events that say it: what opening an
//! archived session applies, without replaying its log.

use serde_json::json;

/// `session.updated` with the session's info as last kept.
pub fn session_event(info: &str) -> String {
    format!("{{\"type\":\"session.updated\",\"properties\":{{\"info\":{info}}}}}")
}

/// A message (`kind` "m") or a part ("p") of `session_id`, as last kept.
pub fn item_event(kind: &str, session_id: &str, raw: &str) -> String {
    let (event, field) = if kind == "m" {
        ("message.updated", "info")
    } else {
        ("message.part.updated", "part")
    };
    format!(
        "{{\"type\":\"{event}\",\"properties\":{{\"sessionID\":{},\"{field}\":{raw}}}}}",
        json!(session_id)
    )
}

/// The last `todo.updated` of a session's log as a list to show (no
/// position in a stream: it sets the session's todos and makes no part, the
/// parts table holds those already).
pub fn todo_event(session_id: &str, logged: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(logged).ok()?;
    let event = v.get("payload").unwrap_or(&v);
    if event.get("type")?.as_str()? != "todo.updated" {
        return None;
    }
    let todos = event.pointer("/properties/todos")?;
    Some(
        json!({"type": "todo.updated", "properties": {"sessionID": session_id, "todos": todos}})
            .to_string(),
    )
}

/// What finds a session's todo events in its log.
pub const TODO_LIKE: &str = "%\"type\":\"todo.updated\"%";
