//! Database rows as what the reducer already knows: a `session` row as
//! `session.updated`, `message` and `part` rows (whose `data` JSON lacks
//! the ids) as typed messages and parts with their ids put back, todos as
//! `todo.updated`. A row that cannot be one becomes a bad record naming
//! the row and why, counted like any other; never a panic.

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::rows::{ContentRow, TodoRow};
use super::sessions::SessionRow;
use crate::model::{Envelope, Event, MessageInfo, Part};
use crate::source::decode::apply::Record;
use crate::source::decode::record::{Decoded, RecordError};

/// A session row as the `session.updated` event a server would send; the
/// envelope carries the project's worktree, which the list groups by.
pub fn session_event(row: &SessionRow, worktree: Option<&str>) -> Option<Envelope> {
    let mut info = json!({
        "id": row.id,
        "title": row.title.clone().unwrap_or_default(),
        "time": {"created": row.time_created.unwrap_or(0), "updated": row.time_updated.unwrap_or(0)},
    });
    let set = |info: &mut Value, k: &str, v: &Option<String>| {
        if let Some(v) = v {
            info[k] = v.clone().into();
        }
    };
    set(&mut info, "parentID", &row.parent_id);
    set(&mut info, "projectID", &row.project_id);
    set(&mut info, "directory", &row.directory);
    set(&mut info, "version", &row.version);
    if let Some(t) = row.time_archived {
        info["time"]["archived"] = t.into();
    }
    if let Some(t) = &row.totals {
        info["cost"] = t.cost.into();
        info["tokens"] = json!({
            "input": t.input, "output": t.output, "reasoning": t.reasoning,
            "cache": {"read": t.cache_read, "write": t.cache_write},
        });
    }
    let props = json!({"sessionID": row.id, "info": info});
    let mut env = parse("session.updated", &props)?;
    env.directory = worktree.map(str::to_string);
    env.received_ms = row.time_updated;
    Some(env)
}

/// A session's todos as the `todo.updated` event (always the full list).
pub fn todo_event(session: &str, todos: &[TodoRow]) -> Option<Envelope> {
    let list: Vec<Value> = todos
        .iter()
        .map(|t| json!({"content": t.content, "status": t.status, "priority": t.priority}))
        .collect();
    parse(
        "todo.updated",
        &json!({"sessionID": session, "todos": list}),
    )
}

fn parse(kind: &str, props: &Value) -> Option<Envelope> {
    let raw = serde_json::value::to_raw_value(props).ok()?;
    Event::parse(kind, Some(&raw)).ok().map(Envelope::new)
}

/// The row's `data` with its ids in front, as the server sends the object;
/// an error when `data` is not a JSON object.
fn with_ids(kind: &str, row: &ContentRow, ids: &[(&str, &str)]) -> Result<Box<RawValue>, String> {
    let data = row.data.trim_start();
    let Some(rest) = data.strip_prefix('{') else {
        let what = match data.chars().next() {
            None => "empty".to_string(),
            Some('[') => "an array".to_string(),
            Some('"') => "a string".to_string(),
            Some(_) => "not a JSON object".to_string(),
        };
        return Err(format!("{kind} {}: its data is {what}", row.id));
    };
    let mut text = String::with_capacity(data.len() + 128);
    text.push('{');
    for (k, v) in ids {
        text.push_str(&serde_json::to_string(k).unwrap_or_default());
        text.push(':');
        text.push_str(&serde_json::to_string(v).unwrap_or_default());
        text.push(',');
    }
    let rest = rest.trim_start();
    if rest.starts_with('}') {
        text.pop();
    }
    text.push_str(rest);
    RawValue::from_string(text)
        .map_err(|e| format!("{kind} {}: its data is not JSON ({e})", row.id))
}

/// A `message` row as a message's info.
pub fn message(row: &ContentRow) -> Result<MessageInfo, RecordError> {
    let raw = with_ids(
        "message",
        row,
        &[("id", &row.id), ("sessionID", &row.session_id)],
    )
    .map_err(|e| bad(e, row))?;
    MessageInfo::from_raw(&raw).map_err(|e| bad(format!("message {}: {e}", row.id), row))
}

/// A `part` row as a part.
pub fn part(row: &ContentRow) -> Result<Part, RecordError> {
    let raw = with_ids(
        "part",
        row,
        &[
            ("id", &row.id),
            ("messageID", &row.message_id),
            ("sessionID", &row.session_id),
        ],
    )
    .map_err(|e| bad(e, row))?;
    Part::from_raw(&raw).map_err(|e| bad(format!("part {}: {e:?}", row.id), row))
}

fn bad(message: String, row: &ContentRow) -> RecordError {
    let mut e = RecordError::shape(message);
    e.row = Some(row_place(row));
    e.raw = Some(
        row.data
            .chars()
            .take(crate::source::decode::record::RAW_KEPT)
            .collect(),
    );
    e
}

/// Which row: its session and its own id (a part's message too), in
/// place of the line a file's record would name.
fn row_place(row: &ContentRow) -> String {
    if row.message_id.is_empty() {
        format!("session {}, message {}", row.session_id, row.id)
    } else {
        format!(
            "session {}, message {}, part {}",
            row.session_id, row.message_id, row.id
        )
    }
}

/// A bad row as the record the app counts and names.
pub fn bad_record(e: RecordError) -> Record {
    Record {
        line: 0,
        repaired: None,
        item: Err(e),
    }
}

/// An event as a record.
pub fn record(env: Envelope) -> Record {
    Record {
        line: 0,
        repaired: None,
        item: Ok(Decoded::Event(env)),
    }
}

/// Messages (oldest first) and the parts of them, paired as the app's
/// pages are; bad rows come back apart.
pub fn page(
    messages: &[ContentRow],
    parts: &[ContentRow],
) -> (Vec<(MessageInfo, Vec<Part>)>, Vec<RecordError>) {
    let mut out: Vec<(MessageInfo, Vec<Part>)> = Vec::with_capacity(messages.len());
    let mut bad = Vec::new();
    let mut at = std::collections::HashMap::new();
    for m in messages {
        match message(m) {
            Ok(info) => {
                at.insert(m.id.as_str(), out.len());
                out.push((info, Vec::new()));
            }
            Err(e) => bad.push(e),
        }
    }
    for p in parts {
        let Some(&i) = at.get(p.message_id.as_str()) else {
            continue;
        };
        match part(p) {
            Ok(part) => out[i].1.push(part),
            Err(e) => bad.push(e),
        }
    }
    (out, bad)
}

/// The time an `evt_`/`msg_`/`prt_` id was made, in ms: its first 12 hex
/// digits hold ms × 0x1000 modulo 2^48 (the time modulo 2^36 ms), placed
/// in the 2^36 ms window nearest `near` (the session's own time).
pub fn id_time(id: &str, near: i64) -> Option<i64> {
    let (_, rest) = id.split_once('_')?;
    let hex = rest.get(..12)?;
    let v = u64::from_str_radix(hex, 16).ok()?;
    let low = (v >> 12) as i64;
    const WINDOW: i64 = 1 << 36;
    let base = near - near.rem_euclid(WINDOW);
    [base - WINDOW, base, base + WINDOW]
        .into_iter()
        .map(|b| b + low)
        .min_by_key(|t| (t - near).abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, data: &str) -> ContentRow {
        ContentRow {
            id: id.into(),
            message_id: "msg_1".into(),
            session_id: "ses_1".into(),
            data: data.into(),
            ..Default::default()
        }
    }

    #[test]
    fn rows_get_their_ids_back() {
        let info = message(&ContentRow {
            message_id: String::new(),
            ..row("msg_1", r#"{"role":"user","time":{"created":5}}"#)
        })
        .unwrap();
        assert_eq!(
            (info.id.as_str(), info.session_id.as_str()),
            ("msg_1", "ses_1")
        );
        let part = part(&row("prt_1", r#"{"type":"text","text":"hi"}"#)).unwrap();
        assert_eq!(
            (
                part.id.as_str(),
                part.message_id.as_str(),
                part.session_id.as_str()
            ),
            ("prt_1", "msg_1", "ses_1")
        );
        assert!(super::part(&row("prt_2", "{}")).is_ok());
    }

    #[test]
    fn data_that_is_not_an_object_is_named() {
        for (data, why) in [
            ("[1,2]", "an array"),
            ("\"x\"", "a string"),
            ("", "empty"),
            ("42", "not a JSON object"),
        ] {
            let e = part(&row("prt_9", data)).unwrap_err();
            assert!(
                e.message.contains("part prt_9") && e.message.contains(why),
                "{}",
                e.message
            );
        }
        let e = part(&row("prt_9", "{\"type\":")).unwrap_err();
        assert!(e.message.contains("not JSON"), "{}", e.message);
    }

    #[test]
    fn id_times_resolve_near_the_session() {
        // Seen in a real 1.18.33 database: the user message made at
        // 1795547214438 ms has the event id below.
        let t = id_time("evt_20ef432710018u3Y5oV8i4uoNR", 1_795_547_214_334).unwrap();
        assert!((t - 1_795_547_214_438).abs() < 50, "{t}");
        let m = id_time("msg_20ef43265001ukwO7nr2jT1OvO", 1_795_547_214_334).unwrap();
        assert!((m - 1_795_547_214_438).abs() <= 2, "{m}");
        assert_eq!(id_time("evt_zz", 0), None);
    }
}
