//! A session's durable event log (`event` table) as a recording the
//! player plays: each `*.updated.N` event (its version suffix dropped) at
//! the time its `evt_` id holds, resolved against the session's own times.
//! Where the log is incomplete (older sessions, imports: messages or parts
//! with no event), the stored rows fill it in at their own times (a part's
//! `time.start`, else its message's creation), so the end state is what
//! opening the session shows. The session's row and todos close it.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::rows::ContentRow;
use super::{Db, DbError, convert};

/// Messages read per statement while filling the log in.
const FILL_PAGE: usize = 1_000;

/// The recording (JSON lines, `{"t", "event"}`) of `session`.
pub fn recording(db: &Db, session: &str) -> Result<Vec<u8>, DbError> {
    let lines = timeline(db, session)?;
    let start = lines.first().map_or(0, |l| l.0);
    let mut out = Vec::new();
    for (t, event) in lines {
        let line = json!({"t": t - start, "event": event});
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}

/// The events of `session` in the order the recording plays them, each
/// with its time (ms since 1970): the log, the rows it lacks, the session
/// row and todos last.
pub fn timeline(db: &Db, session: &str) -> Result<Vec<(i64, Value)>, DbError> {
    let Some(row) = db.session(session)? else {
        return Err(DbError::Other(format!(
            "no session {session} in {}",
            db.path().display()
        )));
    };
    let near = row.time_created.or(row.time_updated).unwrap_or(0);
    // (time, order, event): the log's events in their order, fills after.
    let mut lines: Vec<(i64, usize, Value)> = Vec::new();
    let mut messages_seen = HashSet::new();
    let mut parts_seen = HashSet::new();
    let events = if db.schema().has_table("event") {
        db.events_of(session)?
    } else {
        Vec::new()
    };
    for e in &events {
        let Ok(props) = serde_json::from_str::<Value>(&e.data) else {
            continue;
        };
        let kind = unversioned(&e.kind);
        if let Some(id) = props["info"]["id"].as_str()
            && kind == "message.updated"
        {
            messages_seen.insert(id.to_string());
        }
        if let Some(id) = props["part"]["id"].as_str() {
            parts_seen.insert(id.to_string());
        }
        let t = convert::id_time(&e.id, near).unwrap_or(near);
        let n = lines.len();
        lines.push((t, n, json!({"id": e.id, "type": kind, "properties": props})));
    }
    if !lines.iter().any(|(_, _, v)| v["type"] == "session.created") {
        let t = row.time_created.unwrap_or(near);
        let info = session_info(&row);
        let n = lines.len();
        lines.push((
            t - 1,
            n,
            json!({"type": "session.created", "properties": {"sessionID": session, "info": info}}),
        ));
    }
    fill(db, session, &messages_seen, &parts_seen, &mut lines)?;
    // The stored row and todos last: totals and the list as they are now.
    let end = lines.iter().map(|l| l.0).max().unwrap_or(near);
    let mut closing = vec![
        json!({"type": "session.updated", "properties": {"sessionID": session, "info": session_info(&row)}}),
    ];
    let todos = db.todos(session)?;
    if !todos.is_empty() {
        let list: Vec<Value> = todos
            .iter()
            .map(|t| json!({"content": t.content, "status": t.status, "priority": t.priority}))
            .collect();
        closing.push(
            json!({"type": "todo.updated", "properties": {"sessionID": session, "todos": list}}),
        );
    }
    for event in closing {
        let n = lines.len();
        lines.push((end, n, event));
    }
    lines.sort_by_key(|(t, n, _)| (*t, *n));
    Ok(lines.into_iter().map(|(t, _, event)| (t, event)).collect())
}

/// `message.updated.1` → `message.updated`.
fn unversioned(kind: &str) -> &str {
    match kind.rsplit_once('.') {
        Some((head, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => kind,
    }
}

fn session_info(row: &super::SessionRow) -> Value {
    convert::session_event(row, None)
        .and_then(|env| match env.event {
            crate::model::Event::SessionUpdated(info) => {
                info.raw.as_ref().map(|r| r.get().to_string())
            }
            _ => None,
        })
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| json!({"id": row.id}))
}

/// Messages and parts the log does not hold, at their own times.
fn fill(
    db: &Db,
    session: &str,
    messages_seen: &HashSet<String>,
    parts_seen: &HashSet<String>,
    lines: &mut Vec<(i64, usize, Value)>,
) -> Result<(), DbError> {
    let mut before = None;
    loop {
        let page = db.message_page(session, FILL_PAGE, before.as_ref())?;
        let Some(first) = page.first() else { break };
        before = Some(super::rows::MessageCursor {
            time_created: first.time_created,
            id: first.id.clone(),
        });
        let ids: Vec<&str> = page.iter().map(|m| m.id.as_str()).collect();
        let parts = db.parts_of(&ids)?;
        for m in &page {
            if !messages_seen.contains(&m.id)
                && let Some(info) = with_ids(m, &[("id", &m.id), ("sessionID", &m.session_id)])
            {
                let t = info["time"]["created"].as_i64().unwrap_or(m.time_created);
                let n = lines.len();
                lines.push((t, n, json!({"type": "message.updated", "properties": {"sessionID": session, "info": info}})));
            }
        }
        for p in &parts {
            if parts_seen.contains(&p.id) {
                continue;
            }
            let Some(part) = with_ids(
                p,
                &[
                    ("id", &p.id),
                    ("messageID", &p.message_id),
                    ("sessionID", &p.session_id),
                ],
            ) else {
                continue;
            };
            let owner = page
                .iter()
                .find(|m| m.id == p.message_id)
                .map_or(0, |m| m.time_created);
            let t = part["time"]["start"]
                .as_i64()
                .or_else(|| part["state"]["time"]["start"].as_i64())
                .unwrap_or(p.time_created)
                .max(owner);
            let n = lines.len();
            lines.push((t, n, json!({"type": "message.part.updated", "properties": {"sessionID": session, "part": part}})));
        }
        if page.len() < FILL_PAGE {
            break;
        }
    }
    Ok(())
}

/// A row's data object with its ids put back; `None` for data that is
/// not an object (the viewer names such rows when it opens the session).
fn with_ids(row: &ContentRow, ids: &[(&str, &str)]) -> Option<Value> {
    let mut v: Value = serde_json::from_str(&row.data).ok()?;
    let obj = v.as_object_mut()?;
    for (k, id) in ids {
        obj.insert((*k).to_string(), Value::String((*id).to_string()));
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::unversioned;

    #[test]
    fn the_version_suffix_is_dropped() {
        assert_eq!(
            unversioned("message.part.updated.1"),
            "message.part.updated"
        );
        assert_eq!(unversioned("session.updated.12"), "session.updated");
        assert_eq!(unversioned("session.updated"), "session.updated");
    }
}
