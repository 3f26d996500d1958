//! Turning one JSON record of a recording into an event envelope.
//!
//! Accepted shapes, told apart by their keys (never by a file name):
//! - a bare bus event `{"id","type","properties"}`;
//! - a wrapped one `{"t"|"ts": …, "event": {…}}` (the fixtures' event.jsonl);
//! - the `/global/event` form `{directory, project, payload}`, bare or wrapped
//!   (its `sync` twins are skipped).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::event::{BusEventWire, Envelope, Event};

/// What one record turned out to be.
#[derive(Debug)]
pub enum Decoded {
    Event(Envelope),
    /// A record that is fine but carries nothing for the store.
    Skip(&'static str),
}

/// Why a record could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(pub String);

/// The keys any accepted record may have at its top level.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    t: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(borrow, default)]
    directory: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    properties: Option<&'a RawValue>,
}

/// Decode one JSON record.
pub fn decode(text: &str) -> Result<Decoded, RecordError> {
    decode_at(text, 0, None)
}

fn decode_at(text: &str, depth: u8, received_ms: Option<i64>) -> Result<Decoded, RecordError> {
    let top: Top = serde_json::from_str(text).map_err(|e| RecordError(json_error(&e)))?;
    let received_ms = received_ms.or_else(|| top.t.or(top.ts).and_then(time_ms));
    if let Some(inner) = top.event
        && depth == 0
    {
        return decode_at(inner.get(), depth + 1, received_ms);
    }
    if let Some(payload) = top.payload {
        let directory = top.directory.map(Cow::into_owned);
        return match decode_at(payload.get(), depth + 1, received_ms)? {
            Decoded::Event(mut env) => {
                env.directory = directory;
                Ok(Decoded::Event(env))
            }
            skip => Ok(skip),
        };
    }
    let Some(kind) = top.kind else {
        return Err(RecordError("not an opencode event: no \"type\"".into()));
    };
    if kind == "sync" {
        return Ok(Decoded::Skip("sync"));
    }
    let wire = BusEventWire {
        id: top.id,
        kind,
        properties: top.properties,
    };
    let mut env = wire
        .into_envelope()
        .map_err(|e| RecordError(e.to_string()))?;
    env.received_ms = received_ms;
    Ok(Decoded::Event(env))
}

fn time_ms(raw: &RawValue) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(raw.get()).ok()?;
    v.as_f64().map(|f| f as i64)
}

fn json_error(e: &serde_json::Error) -> String {
    format!("invalid JSON at column {}: {}", e.column(), e)
}

/// Whether an error could be cured by [`repair_surrogates`].
pub fn is_surrogate_error(e: &RecordError) -> bool {
    e.0.contains("surrogate") || e.0.contains("hex escape")
}

/// Replace lone UTF-16 surrogate escapes (`\ud83d` without its partner, as
/// JavaScript writes when it cuts a string mid-emoji) by `\ufffd`, so the
/// record parses and loses one character instead of everything.
pub fn repair_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape, including an escaped backslash
            continue;
        }
        let Some(unit) = hex4(bytes, i + 2) else {
            i += 2;
            continue;
        };
        match unit {
            0xD800..=0xDBFF => {
                let paired = bytes.get(i + 6) == Some(&b'\\')
                    && bytes.get(i + 7) == Some(&b'u')
                    && matches!(hex4(bytes, i + 8), Some(0xDC00..=0xDFFF));
                if paired {
                    i += 12;
                } else {
                    out.push_str(&text[last..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                    changed = true;
                }
            }
            0xDC00..=0xDFFF => {
                out.push_str(&text[last..i]);
                out.push_str("\\ufffd");
                i += 6;
                last = i;
                changed = true;
            }
            _ => i += 6,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let s = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Whether the event is one the reducer handles (for counting).
pub fn is_known(event: &Event) -> bool {
    !matches!(event, Event::Other(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> String {
        match decode(text).unwrap() {
            Decoded::Event(e) => e.event.kind().to_string(),
            Decoded::Skip(why) => format!("skip:{why}"),
        }
    }

    #[test]
    fn accepts_every_shape() {
        let bare = r#"{"id":"evt_2028fa41b001x","type":"server.connected","properties":{}}"#;
        assert_eq!(kind(bare), "server.connected");
        let wrapped = format!(r#"{{"t":5,"event":{bare}}}"#);
        assert_eq!(kind(&wrapped), "server.connected");
        let global =
            format!(r#"{{"t":5,"event":{{"directory":"/p","project":"x","payload":{bare}}}}}"#);
        assert_eq!(kind(&global), "server.connected");
        assert_eq!(
            kind(r#"{"payload":{"type":"sync","syncEvent":{}}}"#),
            "skip:sync"
        );
        assert_eq!(
            kind(r#"{"type":"brand.new","properties":{"x":1}}"#),
            "brand.new"
        );
        match decode(&wrapped).unwrap() {
            Decoded::Event(e) => {
                assert_eq!(e.received_ms, Some(5));
                assert!(e.seq > 0);
            }
            _ => panic!(),
        }
    }

    #[test]
    fn rejects_non_events() {
        assert!(decode("[1,2]").is_err());
        assert!(decode(r#"{"hello":1}"#).is_err());
        assert!(decode(r#"{"type":"session.status","properties":{}}"#).is_err());
    }

    #[test]
    fn repairs_lone_surrogates_only() {
        let good = r#"{"a":"\ud83d\ude00 \\ud800 \u00e9"}"#;
        assert_eq!(repair_surrogates(good), None);
        let bad = r#"{"a":"cut \ud83d","b":"\udc00x"}"#;
        let fixed = repair_surrogates(bad).unwrap();
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "cut \u{fffd}");
        assert_eq!(v["b"], "\u{fffd}x");
    }
}
