//! `opencode export <session>` output: one JSON document `{info, messages}`
//! (each message `{info, parts}`), or an array of them (`ocview export` of
//! several sessions), read as the events that would have built
//! it, through the same parser and reducer as everything else.

use serde_json::{Value, json};

use super::record::{Decoded, RecordError};
use super::replay::Record;
use crate::model::{Envelope, Event};

fn event(kind: &str, props: Value) -> Result<Envelope, RecordError> {
    let raw = serde_json::value::to_raw_value(&props).map_err(|e| RecordError(e.to_string()))?;
    Event::parse(kind, Some(&raw))
        .map(Envelope::new)
        .map_err(|e| RecordError(e.to_string()))
}

/// The records of an export document; one error record when it is not one.
pub fn records(doc: &[u8]) -> Vec<Record> {
    let record = |item| Record {
        line: 1,
        repaired: None,
        item,
    };
    let value: Value = match serde_json::from_slice(doc) {
        Ok(v) => v,
        Err(e) => {
            return vec![record(Err(RecordError(format!(
                "not a JSON document: {e}"
            ))))];
        }
    };
    match &value {
        // `ocview export --format json` of several sessions.
        Value::Array(docs) => docs.iter().flat_map(document).collect(),
        one => document(one),
    }
}

fn document(value: &Value) -> Vec<Record> {
    let record = |item| Record {
        line: 1,
        repaired: None,
        item,
    };
    let (Some(info), Some(messages)) = (
        value.get("info"),
        value.get("messages").and_then(Value::as_array),
    ) else {
        return vec![record(Err(RecordError(
            "a JSON document without info and messages".into(),
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
            out.push(record(Err(RecordError("a message without info".into()))));
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
