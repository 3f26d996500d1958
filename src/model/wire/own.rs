//! ocview's own event types: what a source adds to the bus events so that a
//! recording keeps it and a replay shows it as it was.

use std::collections::HashSet;

/// The event type of a server report: ocview's own, recorded like any
/// other so a replay shows the fleet as it was.
pub const SERVER_EVENT: &str = "ocview.server";

/// The event type that lists the prompts a (re)load found pending.
pub const PENDING_PROMPTS_EVENT: &str = "ocview.pending-prompts";

/// The event type that lists every session a (re)load found.
pub const SESSIONS_EVENT: &str = "ocview.sessions";

/// The `ocview.sessions` event for a recording (ids sorted).
pub fn sessions_event(listed: &HashSet<String>) -> serde_json::Value {
    let mut ids: Vec<&String> = listed.iter().collect();
    ids.sort();
    serde_json::json!({"type": SESSIONS_EVENT, "properties": {"ids": ids}})
}

/// The `ocview.pending-prompts` event for a recording (ids sorted, so a
/// recording does not depend on a hash order).
pub fn pending_prompts_event(pending: &HashSet<String>) -> serde_json::Value {
    let mut ids: Vec<&String> = pending.iter().collect();
    ids.sort();
    serde_json::json!({"type": PENDING_PROMPTS_EVENT, "properties": {"ids": ids}})
}
