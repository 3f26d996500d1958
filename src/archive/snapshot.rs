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
