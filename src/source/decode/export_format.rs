//! The saved forms of whole messages, read as the events that would have
//! built them, through the same parser and reducer as everything else:
//! - `opencode export <session>`: one JSON document `{info, messages}`
//!   (each message `{info, parts}`), or an array of them (`ocview export`
//!   of several sessions);
//! - `GET /session/:id/message`: an array of `{info, parts}`, one message
//!   per element (the replay reader hands them over one at a time).

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::model::{Envelope, Event, MessageInfo, Part};
use crate::source::decode::apply::Record;
use crate::source::decode::record::{Decoded, RecordError};

/// Which saved form a value was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// `{info, parts}`: one message.
    Message,
    /// `{info, messages}`: a whole session.
    Export,
}

fn event(kind: &str, props: Value) -> Result<Envelope, RecordError> {
    let raw =
        serde_json::value::to_raw_value(&props).map_err(|e| RecordError::shape(e.to_string()))?;
    Event::parse(kind, Some(&raw))
        .map(Envelope::new)
        .map_err(|e| RecordError::shape(e.to_string()))
}

#[derive(serde::Deserialize)]
struct SavedWire<'a> {
    #[serde(borrow)]
    info: Option<&'a RawValue>,
    #[serde(borrow)]
    parts: Option<Vec<&'a RawValue>>,
    messages: Option<Value>,
}

/// The records of a value that is a saved message or session, starting on
/// `line`; `None` when it is neither (the caller reports why it is not a
/// record).
pub fn saved_records(text: &[u8], line: u64) -> Option<(Saved, Vec<Record>)> {
    let wire: SavedWire = serde_json::from_slice(text).ok()?;
    let info = wire.info?;
    let record = |item| Record {
        line,
        repaired: None,
        item,
    };
    if let Some(messages) = &wire.messages {
        let info: Value = serde_json::from_str(info.get()).ok()?;
        let doc = json!({"info": info, "messages": messages});
        return Some((Saved::Export, document(&doc, line)));
    }
    let parts = wire.parts?;
    let mut out = Vec::with_capacity(parts.len() + 1);
    match MessageInfo::from_raw(info) {
        Ok(info) if info.id.is_empty() => out.push(record(Err(RecordError::shape(
            "a message's info: missing field `id`",
        )))),
        Ok(info) if info.session_id.is_empty() => out.push(record(Err(RecordError::shape(
            "a message's info: missing field `sessionID`",
        )))),
        Ok(info) => out.push(record(Ok(Decoded::Message(Box::new(info))))),
        Err(e) => out.push(record(Err(RecordError::shape(format!(
            "a message's info: {e}"
        ))))),
    }
    for raw in parts {
        out.push(record(match Part::from_raw(raw) {
            Ok(part) => Ok(Decoded::Event(Envelope::new(Event::PartUpdated(Box::new(
                part,
            ))))),
            Err(e) => Err(RecordError::shape(e.to_string())),
        }));
    }
    Some((Saved::Message, out))
}

fn document(value: &Value, line: u64) -> Vec<Record> {
    let record = |item| Record {
        line,
        repaired: None,
        item,
    };
    let (Some(info), Some(messages)) = (
        value.get("info"),
        value.get("messages").and_then(Value::as_array),
    ) else {
        return vec![record(Err(RecordError::shape(
            "an export document: missing field `messages`",
        )))];
    };
    let session = info
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut out = vec![record(
        event(
            "session.updated",
            json!({"sessionID": session, "info": info}),
        )
        .map(Decoded::Event),
    )];
    for m in messages {
        let Some(mi) = m.get("info") else {
            out.push(record(Err(RecordError::shape(
                "a message: missing field `info`",
            ))));
            continue;
        };
        out.push(record(
            event("message.updated", json!({"sessionID": session, "info": mi})).map(Decoded::Event),
        ));
        for p in m
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push(record(
                event(
                    "message.part.updated",
                    json!({"sessionID": session, "part": p}),
                )
                .map(Decoded::Event),
            ));
        }
    }
    out
}
