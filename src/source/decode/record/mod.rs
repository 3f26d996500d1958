//! Turning one JSON record of a recording into an event envelope.
//!
//! Accepted shapes, told apart by their keys (never by a file name):
//! - a bare bus event `{"id","type","properties"}`;
//! - a wrapped one `{"t"|"ts": …, "event": {…}}` (the fixtures' event.jsonl);
//! - the `/global/event` form `{directory, project, payload}`, bare or wrapped
//!   (its `sync` twins are skipped);
//! - a line of `opencode run --format json` `{type, timestamp, sessionID, part}`;
//! - a Durable Stream event `{id, type, stream_id, …, payload}` (seed 004),
//!   decoded by [`super::durable`].

pub mod durable;

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::model::event_mark::event_tag;
use crate::model::ids::event_seq;
use crate::model::wire::event::{Envelope, Event};

/// What one record turned out to be.
#[derive(Debug)]
pub enum Decoded {
    Event(Envelope),
    /// A line of `opencode run --format json` (seed 002): a finished part,
    /// or an error, of one session.
    Run(Box<RunLine>),
    /// A Durable Stream event (seed 004): one step of an agent workflow.
    Durable(Box<crate::source::decode::record::durable::DurableEvent>),
    /// A message of a saved message list (`GET /session/:id/message`); its
    /// parts follow as events of their own.
    Message(Box<crate::model::MessageInfo>),
    /// A record that is fine but carries nothing for the store.
    Skip(&'static str),
}

#[derive(Debug, Clone)]
pub struct RunLine {
    pub session_id: String,
    pub timestamp: Option<i64>,
    pub part: Option<crate::model::Part>,
    pub error: Option<crate::model::ErrorInfo>,
}

/// The line types `opencode run --format json` prints.
const RUN_TYPES: [&str; 6] = [
    "step_start",
    "text",
    "reasoning",
    "tool_use",
    "step_finish",
    "error",
];

/// Why a record could not be used: what kind of fault, and the detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", self.fault.prefix(), self.message)]
pub struct RecordError {
    pub fault: Fault,
    pub message: String,
    /// The record's own text (its start, at most [`RAW_KEPT`] bytes), to
    /// show on request; untrusted, sanitised where shown.
    pub raw: Option<String>,
    /// In a fleet, the server whose stream carried it.
    pub server: Option<String>,
    /// Read from a database, not a stream: the row it came from (session
    /// and message or part id), named where a file's line would be.
    pub row: Option<String>,
}

/// How much of a bad record's text is kept to show.
pub const RAW_KEPT: usize = 4096;

/// The kinds of fault a record can have; the ignored records are counted
/// by these (see [`RecordError::reason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The bytes are not JSON (or are cut short).
    NotJson,
    /// JSON, but not of any shape a record can have.
    Shape,
    /// The file ends inside the record.
    Truncated,
    /// Longer than the limit, skipped unread.
    TooLong,
}

impl Fault {
    fn prefix(self) -> &'static str {
        match self {
            Fault::NotJson => "not valid JSON: ",
            Fault::Shape => "valid JSON of an unexpected shape: ",
            Fault::Truncated => "",
            Fault::TooLong => "",
        }
    }
}

impl RecordError {
    pub fn not_json(message: impl Into<String>) -> Self {
        RecordError {
            fault: Fault::NotJson,
            message: message.into(),
            raw: None,
            server: None,
            row: None,
        }
    }

    pub fn shape(message: impl Into<String>) -> Self {
        RecordError {
            fault: Fault::Shape,
            message: message.into(),
            raw: None,
            server: None,
            row: None,
        }
    }

    pub fn truncated(message: impl Into<String>) -> Self {
        RecordError {
            fault: Fault::Truncated,
            message: message.into(),
            raw: None,
            server: None,
            row: None,
        }
    }

    pub fn too_long(message: impl Into<String>) -> Self {
        RecordError {
            fault: Fault::TooLong,
            message: message.into(),
            raw: None,
            server: None,
            row: None,
        }
    }

    /// From a serde error: a syntax error is not JSON, a data error a shape.
    pub fn from_json(e: &serde_json::Error) -> Self {
        if e.is_data() {
            RecordError::shape(e.to_string())
        } else if e.is_eof() {
            RecordError::truncated(format!("truncated: {}", json_error(e)))
        } else {
            RecordError::not_json(json_error(e))
        }
    }

    /// The reason the record is counted under: the fault, and for a shape
    /// the field that was missing. Field names come from our own types
    /// (serde's "missing field `x`"), never from the data, so the reasons
    /// stay few.
    pub fn reason(&self) -> String {
        match self.fault {
            Fault::NotJson => "not valid JSON".into(),
            Fault::Truncated => "truncated".into(),
            Fault::TooLong => "too long".into(),
            Fault::Shape => match missing_field(&self.message) {
                Some(field) => format!("missing field `{field}`"),
                None => "unexpected shape".into(),
            },
        }
    }
}

/// The field a serde "missing field `x`" message names.
fn missing_field(message: &str) -> Option<&str> {
    let rest = &message[message.find("missing field `")? + "missing field `".len()..];
    let field = &rest[..rest.find('`')?];
    (field.len() <= 40
        && field
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
    .then_some(field)
}

/// A record's top level, read in one pass: wrappers (`event`, `payload`)
/// nest, and `properties` is parsed straight into a typed event when `type`
/// came first (opencode always writes it first), else kept raw for later.
/// A wrapper's inner record is folded into its fields as it is read, so the
/// result is flat whatever the nesting.
#[derive(Default)]
struct Wire<'a> {
    received_ms: Option<i64>,
    /// The project directory of a `/global/event` payload.
    directory: Option<Cow<'a, str>>,
    own_directory: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    kind: Option<Cow<'a, str>>,
    properties: Properties<'a>,
    /// An inner record was read; this level's own event keys are ignored.
    nested: bool,
    /// An ocview recording's header line.
    header: bool,
    /// The fleet server a recorded line came from.
    server: Option<Cow<'a, str>>,
    /// A recorded event that was not JSON.
    raw: bool,
    /// `opencode run --format json` fields.
    run_session: Option<Cow<'a, str>>,
    run_part: Option<&'a RawValue>,
    run_error: Option<&'a RawValue>,
    payload: bool,
    /// A key only a Durable Stream envelope has was seen at the top level:
    /// the line is decoded again by `durable::decode` (rare, so the bus
    /// events' single pass stays as it is).
    durable: bool,
}

#[derive(Default)]
enum Properties<'a> {
    #[default]
    Missing,
    Raw(&'a RawValue),
    Parsed(Event),
}

/// How deep wrappers may nest: `{t, event: {directory, payload: {…}}}` is 2.
const MAX_DEPTH: u8 = 3;

struct WireSeed {
    depth: u8,
}

impl<'de> DeserializeSeed<'de> for WireSeed {
    type Value = Wire<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for WireSeed {
    type Value = Wire<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut wire = Wire::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            // The keys of every bus event first: they are by far the most common.
            match key.as_ref() {
                "id" if !wire.nested => wire.id = map.next_value()?,
                "type" if !wire.nested => wire.kind = Some(map.next_value()?),
                "properties" if !wire.nested => {
                    wire.properties = match &wire.kind {
                        Some(kind) => {
                            Properties::Parsed(map.next_value_seed(PropertiesSeed(kind))?)
                        }
                        None => Properties::Raw(map.next_value()?),
                    }
                }
                // Marks of a Durable Stream envelope. Its `payload` is skipped
                // here, not read as a `/global/event` wrapper; writers that sort
                // keys put `correlation_id` before it.
                "stream_id" | "correlation_id" | "causation_id" if self.depth == 0 => {
                    map.next_value::<IgnoredAny>()?;
                    wire.durable = true;
                }
                "payload"
                    if self.depth == 0
                        && (wire.durable
                            || wire.kind.as_deref().is_some_and(
                                crate::source::decode::record::durable::is_durable_type,
                            )) =>
                {
                    map.next_value::<IgnoredAny>()?;
                    wire.durable = true;
                }
                "t" | "ts" => {
                    let v: serde_json::Value = map.next_value()?;
                    wire.received_ms = v.as_f64().map(|f| f as i64);
                }
                "event" | "payload" if self.depth < MAX_DEPTH => {
                    let inner = map.next_value_seed(WireSeed {
                        depth: self.depth + 1,
                    })?;
                    wire.received_ms = wire.received_ms.or(inner.received_ms);
                    wire.directory = inner.directory;
                    wire.id = inner.id;
                    wire.kind = inner.kind;
                    wire.properties = inner.properties;
                    wire.nested = true;
                    wire.payload = key == "payload";
                }
                "directory" => wire.own_directory = map.next_value()?,
                "ocview_recording" if self.depth == 0 => {
                    map.next_value::<IgnoredAny>()?;
                    wire.header = true;
                }
                "server" if self.depth == 0 => {
                    // A header's `server` is a URL; a line's, a fleet key.
                    wire.server = map.next_value::<Option<Cow<'de, str>>>()?;
                }
                "sessionID" if self.depth == 0 => wire.run_session = map.next_value()?,
                "part" if self.depth == 0 => wire.run_part = Some(map.next_value()?),
                "error" if self.depth == 0 => wire.run_error = Some(map.next_value()?),
                "timestamp" if self.depth == 0 => {
                    let v: serde_json::Value = map.next_value()?;
                    wire.received_ms = wire.received_ms.or(v.as_f64().map(|f| f as i64));
                }
                "raw" if self.depth == 0 => {
                    map.next_value::<IgnoredAny>()?;
                    wire.raw = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if wire.payload {
            wire.directory = wire.own_directory.take();
        }
        Ok(wire)
    }
}

struct PropertiesSeed<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for PropertiesSeed<'_> {
    type Value = Event;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Event, D::Error> {
        Event::from_properties(self.0, d)
    }
}

/// Decode one JSON record.
pub fn decode(text: &str) -> Result<Decoded, RecordError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let wire = WireSeed { depth: 0 }
        .deserialize(&mut de)
        .and_then(|w| de.end().map(|()| w));
    match wire {
        Ok(wire) => finish(wire, text),
        // A Durable Stream envelope whose `payload` came before the keys that
        // mark it was read as a wrapper and may have failed as one; or a key
        // the two forms share had the wrong type: its own decoder says which.
        Err(e) if e.is_data() && text.contains("\"stream_id\"") => {
            crate::source::decode::record::durable::decode(text)
        }
        Err(e) => Err(RecordError::from_json(&e)),
    }
}

fn finish(wire: Wire<'_>, text: &str) -> Result<Decoded, RecordError> {
    if wire.header {
        return Ok(Decoded::Skip("recording header"));
    }
    if wire.durable
        || (matches!(wire.properties, Properties::Missing)
            && wire
                .kind
                .as_deref()
                .is_some_and(crate::source::decode::record::durable::is_durable_type))
    {
        return crate::source::decode::record::durable::decode(text);
    }
    if wire.raw && wire.kind.is_none() {
        return Err(RecordError::not_json("the recorded event was not JSON"));
    }
    let Some(kind) = wire.kind else {
        return Err(RecordError::shape(
            "not an opencode record: missing field `type`",
        ));
    };
    if kind == "sync" {
        return Ok(Decoded::Skip("sync"));
    }
    if RUN_TYPES.contains(&kind.as_ref())
        && matches!(wire.properties, Properties::Missing)
        && (wire.run_session.is_some() || wire.run_part.is_some() || wire.run_error.is_some())
    {
        let part = match wire.run_part {
            Some(raw) => Some(run_part(raw, &kind, wire.received_ms)?),
            None => None,
        };
        let error = wire.run_error.map(crate::model::ErrorInfo::from_raw);
        if part.is_none() && error.is_none() {
            return Err(RecordError::shape(format!(
                "a run `{kind}` line without a part or an error: missing field `part`"
            )));
        }
        return Ok(Decoded::Run(Box::new(RunLine {
            // Empty when the line names none: placed by its message then.
            session_id: wire.run_session.map(Cow::into_owned).unwrap_or_default(),
            timestamp: wire.received_ms,
            part,
            error,
        })));
    }
    let mut event = match wire.properties {
        Properties::Parsed(event) => Ok(event),
        Properties::Raw(raw) => Event::parse(&kind, Some(raw)),
        Properties::Missing => Event::parse(&kind, None),
    }
    .map_err(|e| RecordError::shape(e.to_string()))?;
    if let Some(key) = wire.server.as_deref().filter(|k| !k.is_empty()) {
        crate::model::store::fleet::scope_event(&mut event, key);
    }
    Ok(Decoded::Event(Envelope {
        seq: wire.id.as_deref().map(event_seq).unwrap_or(0),
        tag: wire.id.as_deref().map(event_tag).unwrap_or(0),
        received_ms: wire.received_ms,
        directory: wire.directory.map(Cow::into_owned),
        event,
    }))
}

/// The part of a run line. Older versions (and some tools re-writing the
/// stream) leave out the part's `id`: such a part gets a stable id made of
/// its message, its time and its type, so that it sorts by time within its
/// message and the same line read twice is the same part.
fn run_part(
    raw: &RawValue,
    kind: &str,
    timestamp: Option<i64>,
) -> Result<crate::model::Part, RecordError> {
    use serde_json::Value;
    let first = match crate::model::Part::from_raw(raw) {
        Ok(part) => return Ok(part),
        Err(e) => e,
    };
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(raw.get()) else {
        return Err(RecordError::shape(first.to_string()));
    };
    let has = |map: &serde_json::Map<String, Value>, key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !has(&map, "messageID") {
        return Err(RecordError::shape(format!(
            "{first}: missing field `messageID`"
        )));
    }
    if has(&map, "id") {
        return Err(RecordError::shape(first.to_string()));
    }
    let message = map["messageID"].as_str().unwrap_or_default().to_string();
    let time = map
        .get("time")
        .and_then(|t| t.get("start").or_else(|| t.get("end")))
        .and_then(Value::as_i64)
        .or(timestamp)
        .unwrap_or(0)
        .max(0);
    // Within one millisecond, the order a step prints its parts in.
    let rank = ["step_start", "reasoning", "text", "tool_use", "step_finish"]
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(5);
    let id = format!("prt_run_{message}_{time:016}_{rank}");
    map.insert("id".into(), Value::String(id));
    let raw =
        serde_json::value::to_raw_value(&map).map_err(|e| RecordError::shape(e.to_string()))?;
    crate::model::Part::from_raw(&raw).map_err(|e| RecordError::shape(e.to_string()))
}

fn json_error(e: &serde_json::Error) -> String {
    e.to_string()
}

/// Whether an error could be cured by [`repair_surrogates`].
pub fn is_surrogate_error(e: &RecordError) -> bool {
    e.message.contains("surrogate") || e.message.contains("hex escape")
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
mod tests;
