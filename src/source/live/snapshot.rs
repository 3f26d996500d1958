//! Loading the server's state over REST and turning it into what the app
//! applies: bus events (through the same parser and reducer as the stream)
//! and whole message lists (for finalisation, which replaces streamed parts
//! by the stored ones).

use std::collections::HashSet;

use serde_json::{Value, json};

use super::client::{ApiError, Client};
use crate::model::{Envelope, Event, MessageInfo, Part};

/// Messages per page.
pub const PAGE: usize = 100;

/// Messages per page when loading whole sessions (headless dumps).
pub const PAGE_ALL: usize = 1_000;

/// A REST answer as an event, parsed exactly like one from the stream.
pub fn event(kind: &str, props: Value) -> Option<Envelope> {
    let raw = serde_json::value::to_raw_value(&props).ok()?;
    match Event::parse(kind, Some(&raw)) {
        Ok(event) => Some(Envelope::new(event)),
        Err(e) => {
            tracing::warn!("snapshot {kind}: {e}");
            None
        }
    }
}

/// `GET /session/{id}/message` items as (info, parts), oldest first.
pub fn messages(list: &[Value]) -> Vec<(MessageInfo, Vec<Part>)> {
    let mut out = Vec::new();
    for m in list {
        let Some(info) = m
            .get("info")
            .and_then(|i| serde_json::value::to_raw_value(i).ok())
        else {
            continue;
        };
        let Ok(info) = MessageInfo::from_raw(&info) else {
            continue;
        };
        if info.id.is_empty() {
            continue;
        }
        let parts = m
            .get("parts")
            .and_then(Value::as_array)
            .map(|ps| {
                let mut parts = Vec::with_capacity(ps.len());
                parts.extend(
                    ps.iter()
                        .filter_map(|p| serde_json::value::to_raw_value(p).ok())
                        .filter_map(|raw| Part::from_raw(&raw).ok()),
                );
                parts
            })
            .unwrap_or_default();
        out.push((info, parts));
    }
    out.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    out
}

/// A REST answer as the bus event JSON a recording keeps (in the
/// `/global/event` form when it is of another project's `dir`).
pub fn wire(kind: &str, props: &Value, dir: Option<&str>) -> Value {
    let event = json!({"type": kind, "properties": props});
    match dir {
        Some(d) => json!({"directory": d, "payload": event}),
        None => event,
    }
}

/// `GET /session/{id}/message` items as the events that announce them:
/// each message, then its parts.
pub fn message_events(list: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in list {
        let Some(info) = m.get("info") else { continue };
        out.push(wire("message.updated", &json!({"info": info}), None));
        for part in m
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push(wire("message.part.updated", &json!({"part": part}), None));
        }
    }
    out
}

/// Everything a fresh attach loads, except messages.
pub struct Snapshot {
    pub events: Vec<Envelope>,
    /// The same, as bus event JSON, for a recording.
    pub wire: Vec<Value>,
    pub session_ids: HashSet<String>,
    pub pending_prompts: HashSet<String>,
}

/// Sessions, their statuses, pending permissions and questions: of the
/// server's current project, or of every project. (Messages and todos are
/// loaded per session, by the sync.)
pub async fn load(client: &Client, all_projects: bool) -> Result<Snapshot, ApiError> {
    let mut dirs: Vec<Option<String>> = vec![None];
    if all_projects {
        dirs = client
            .projects()
            .await?
            .iter()
            .filter_map(|p| {
                p.get("worktree")
                    .and_then(Value::as_str)
                    .map(|w| Some(w.to_string()))
            })
            .collect();
        if dirs.is_empty() {
            dirs.push(None);
        }
    }
    let mut snap = Snapshot {
        events: Vec::new(),
        wire: Vec::new(),
        session_ids: HashSet::new(),
        pending_prompts: HashSet::new(),
    };
    for dir in &dirs {
        load_project(client, dir.as_deref(), &mut snap).await?;
    }
    // The models' context limits, for the context gauge. Not worth failing
    // the attach for: without them the gauge shows tokens only.
    match client.providers().await {
        Ok(answer) => {
            let models = crate::model::entity::context::limits_of_providers(&answer);
            snap.push(
                crate::model::entity::context::MODEL_LIMITS_EVENT,
                json!({ "models": models }),
                None,
            );
        }
        Err(e) => tracing::warn!("model limits: {e}"),
    }
    Ok(snap)
}

impl Snapshot {
    /// Add a REST answer as an event (of the project `dir`, when not the
    /// server's current one), and as its JSON for a recording.
    fn push(&mut self, kind: &str, props: Value, dir: Option<&str>) {
        let wire = wire(kind, &props, dir);
        if let Some(mut env) = event(kind, props) {
            env.directory = dir.map(str::to_string);
            self.events.push(env);
            self.wire.push(wire);
        }
    }
}

async fn load_project(
    client: &Client,
    dir: Option<&str>,
    snap: &mut Snapshot,
) -> Result<(), ApiError> {
    let (sessions, statuses, permissions, questions) = tokio::try_join!(
        client.sessions(dir),
        client.statuses(dir),
        client.permissions(dir),
        client.questions(dir)
    )?;
    for info in &sessions {
        let Some(id) = info.get("id").and_then(Value::as_str) else {
            continue;
        };
        snap.session_ids.insert(id.to_string());
        snap.push(
            "session.updated",
            json!({"sessionID": id, "info": info}),
            dir,
        );
        // Absent from the status map means idle: this also clears a busy
        // state left over from before a disconnect.
        let status = statuses
            .get(id)
            .cloned()
            .unwrap_or_else(|| json!({"type": "idle"}));
        snap.push(
            "session.status",
            json!({"sessionID": id, "status": status}),
            dir,
        );
    }
    for p in &permissions {
        if let Some(id) = p.get("id").and_then(Value::as_str) {
            snap.pending_prompts.insert(id.to_string());
            snap.push("permission.asked", p.clone(), dir);
        }
    }
    for q in &questions {
        if let Some(id) = q.get("id").and_then(Value::as_str) {
            snap.pending_prompts.insert(id.to_string());
            snap.push("question.asked", q.clone(), dir);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_messages_become_typed_and_sorted() {
        let list = vec![
            json!({"info": {"id": "msg_2", "sessionID": "s", "role": "assistant", "parentID": "msg_1"}, "parts": [{"id": "prt_1", "messageID": "msg_2", "sessionID": "s", "type": "text", "text": "hi"}]}),
            json!({"info": {"id": "msg_1", "sessionID": "s", "role": "user"}, "parts": []}),
            json!({"broken": true}),
        ];
        let m = messages(&list);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0.id, "msg_1");
        assert_eq!(m[1].1[0].text(), Some("hi"));
    }

    #[test]
    fn rest_answers_parse_as_events() {
        let e = event(
            "session.status",
            json!({"sessionID": "s", "status": {"type": "busy"}}),
        )
        .unwrap();
        assert_eq!(e.event.kind(), "session.status");
        assert_eq!(e.seq, 0, "a snapshot has no event position");
        assert!(event("session.status", json!({"nope": 1})).is_none());
    }
}
