//! A collected session, message or part as the row the archive keeps: its
//! latest state from the collector's store, its indexed text, and whether
//! its raw object is the one an event logged (then stored once).

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::archive::encode;
use crate::archive::rows::{MessageRow, PartRow, SessionRow};
use crate::model::store::fleet::bare;
use crate::model::{Message, Part, PartBody};

/// The most text of one part the index keeps (a tool output of megabytes is
/// found by its start).
const INDEXED_TEXT_MAX: usize = 64 * 1024;

/// `text` cut to what the index keeps of it, at a character's boundary.
pub fn cap_indexed(text: &mut String) {
    if text.len() > INDEXED_TEXT_MAX {
        let mut end = INDEXED_TEXT_MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

pub(super) fn session_row(s: &crate::model::Session, server: Option<String>) -> SessionRow {
    let info = &s.info;
    SessionRow {
        id: bare(&info.id).to_string(),
        parent_id: info.parent_id.as_deref().map(|p| bare(p).to_string()),
        title: info.title.clone(),
        directory: info
            .directory
            .clone()
            .or_else(|| s.project_directory.clone()),
        created: info.time.created.unwrap_or(0),
        updated: info.time.updated.or(info.time.created).unwrap_or(0),
        raw: info
            .raw
            .as_ref()
            .map(|r| r.get().to_string())
            .unwrap_or_else(|| {
                serde_json::json!({"id": bare(&info.id), "title": info.title}).to_string()
            }),
        server,
    }
}

fn model_of(m: &Message) -> Option<String> {
    m.info
        .model
        .as_ref()
        .map(|r| format!("{}/{}", r.provider_id, r.model_id))
}

pub(super) fn message_row(m: &Message, clock: i64, update: Option<(&str, u64)>) -> MessageRow {
    let created = m.info.created.unwrap_or(0);
    // A run stream's stand-in for a message it names never replaces the
    // message's real state another file gave (newer state wins).
    let stand_in = m.info.raw.as_ref().is_some_and(|r| {
        serde_json::from_str(r.get()).is_ok_and(|v| crate::archive::export::stand_in_info(&v))
    });
    let raw = m
        .info
        .raw
        .as_ref()
        .map(|r| r.get().to_string())
        .unwrap_or_default();
    MessageRow {
        id: m.info.id.clone(),
        session_id: bare(&m.info.session_id).to_string(),
        role: m.info.role.label().to_string(),
        model: model_of(m),
        agent: m.info.agent.clone(),
        created,
        updated: if stand_in {
            0
        } else {
            clock.max(m.info.completed.unwrap_or(created))
        },
        spend: (m.info.role.label() == "assistant").then(|| {
            let t = &m.info.tokens;
            crate::source::opencode_db::usage::Figures {
                cost: if m.info.cost.is_finite() {
                    m.info.cost
                } else {
                    0.0
                },
                input: t.input,
                output: t.output,
                reasoning: t.reasoning,
                cache_read: t.cache.read,
                cache_write: t.cache.write,
            }
        }),
        raw: raw.clone(),
        // The info the last update carried, unchanged since.
        logged_as: update
            .filter(|(_, hash)| !raw.is_empty() && *hash == encode::quick_hash(raw.as_bytes()))
            .map(|(key, _)| key.to_string()),
    }
}

/// What a part's row needs of its raw object, read without building it as
/// a `Value` (an import spent a third of its reading on building and
/// printing each part's object again).
#[derive(serde::Deserialize)]
struct RawPeek<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    state: Option<StatePeek<'a>>,
}

#[derive(serde::Deserialize)]
struct StatePeek<'a> {
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// What a tool call's row needs of its raw object, its input, read up to
/// the input's end only: the output and metadata after it are most of a
/// call's text (the body has them already).
fn tool_peek(raw: &str) -> Option<RawPeek<'_>> {
    use crate::model::json_peek::{field_from, value};
    let input = match field_from(field_from(raw, "state")??, "input")? {
        Some(input) => Some(serde_json::from_str::<&RawValue>(value(input)?).ok()?),
        None => None,
    };
    Some(RawPeek {
        kind: Some("tool".into()),
        text: None,
        state: Some(StatePeek { input }),
    })
}

/// The part's raw object, built once when it is needed.
fn built<'v>(value: &'v mut Option<Value>, raw: &str) -> &'v mut Value {
    value.get_or_insert_with(|| serde_json::from_str(raw).unwrap_or(Value::Null))
}

/// What a part is indexed by: its kind, its tool and state (a tool call),
/// when it started, and its text (a tool call's: its name, title, output,
/// error and the strings of its input).
fn indexed_fields(
    part: &Part,
    peek: Option<&RawPeek<'_>>,
    value: &mut Option<Value>,
) -> (
    &'static str,
    Option<String>,
    Option<String>,
    Option<i64>,
    String,
) {
    let raw_text = part.raw.get();
    match &part.body {
        PartBody::Text(t) => (
            "text",
            None,
            None,
            t.time.as_ref().and_then(|t| t.start),
            t.text.clone(),
        ),
        PartBody::Reasoning(r) => (
            "reasoning",
            None,
            None,
            r.time.as_ref().and_then(|t| t.start),
            r.text.clone(),
        ),
        PartBody::Tool(t) => {
            let mut text = format!("{}\n", t.tool);
            for s in [&t.state.title, &t.state.output, &t.state.error]
                .into_iter()
                .flatten()
            {
                text.push_str(s);
                text.push('\n');
            }
            match peek {
                Some(p) => {
                    let input = p.state.as_ref().and_then(|s| s.input);
                    if let Some(Ok(input)) = input.map(|i| serde_json::from_str::<Value>(i.get())) {
                        strings(&input, &mut text);
                    }
                }
                None => {
                    if let Some(input) = built(value, raw_text).pointer("/state/input") {
                        strings(input, &mut text);
                    }
                }
            }
            let state = Some(t.state.status.label().to_string());
            (
                "tool",
                Some(t.tool.clone()),
                state,
                t.state.time.start,
                text,
            )
        }
        PartBody::File(f) => {
            let mut text = f.filename.clone().unwrap_or_default();
            if !f.url.starts_with("data:") {
                text.push('\n');
                text.push_str(&f.url);
            }
            ("file", None, None, None, text)
        }
        PartBody::Patch(p) => ("patch", None, None, None, p.files.join("\n")),
        PartBody::Subtask(s) => (
            "subtask",
            None,
            None,
            None,
            format!("{}\n{}", s.description, s.prompt),
        ),
        PartBody::Agent(a) => ("agent", None, None, None, a.name.clone()),
        _ => {
            let kind = match peek {
                Some(p) => kind_of(p.kind.as_deref()),
                None => kind_of(built(value, raw_text).get("type").and_then(Value::as_str)),
            };
            (kind, None, None, None, String::new())
        }
    }
}

pub(super) fn part_row(
    m: &Message,
    part: &Part,
    clock: i64,
    update: Option<(&str, u64)>,
) -> PartRow {
    let raw_text = part.raw.get();
    // An object of the usual shape is peeked at; any other is built.
    let peek: Option<RawPeek<'_>> = match part.body {
        PartBody::Tool(_) => tool_peek(raw_text),
        _ => None,
    }
    .or_else(|| {
        raw_text
            .trim_start()
            .starts_with('{')
            .then(|| serde_json::from_str(raw_text).ok())
            .flatten()
    });
    let mut value: Option<Value> = None;
    let (kind, tool, state, start, mut text) = indexed_fields(part, peek.as_ref(), &mut value);
    // The streamed text lives in the body, not in the raw object: the
    // object kept says the body's text.
    let streamed = matches!(part.body, PartBody::Text(_) | PartBody::Reasoning(_));
    let text_kept = !streamed
        || match &peek {
            Some(p) => p.text.as_deref() == Some(text.as_str()),
            None => match built(&mut value, raw_text) {
                Value::Object(map) => {
                    map.get("text").and_then(Value::as_str) == Some(text.as_str())
                }
                _ => true,
            },
        };
    let id = archived_id(m, part);
    let renamed = id != part.id;
    let raw = if peek.is_some() && text_kept && !renamed {
        raw_text.to_string()
    } else {
        let value = built(&mut value, raw_text);
        if let Value::Object(map) = value {
            if streamed {
                map.insert("text".into(), Value::String(text.clone()));
            }
            if renamed {
                map.insert("id".into(), Value::String(id.clone()));
            }
        }
        value.to_string()
    };
    // A renamed part is not the log's: the logged copy has its old id.
    let as_logged = text_kept && !renamed;
    cap_indexed(&mut text);
    let time = start.or(m.info.created).unwrap_or(0);
    // The raw object is the one the last update carried, unchanged since.
    let logged_as = update
        .filter(|(_, hash)| as_logged && *hash == encode::quick_hash(raw_text.as_bytes()))
        .map(|(key, _)| key.to_string());
    PartRow {
        id,
        message_id: part.message_id.clone(),
        session_id: bare(&part.session_id).to_string(),
        kind: kind.to_string(),
        tool,
        state,
        model: model_of(m),
        agent: m.info.agent.clone(),
        time,
        updated: clock.max(time),
        text,
        prepared: None,
        raw,
        logged_as,
        error: match &part.body {
            // A call OpenCode could not make says why in its output.
            PartBody::Tool(t) if t.tool == "invalid" => t.state.output.as_deref(),
            // A command the run's abort stopped ends `completed`.
            PartBody::Tool(t) if t.state.status == crate::model::ToolStatus::Completed => {
                crate::archive::tool_calls::stopped(t.state.output.as_deref())
            }
            PartBody::Tool(t) => t.state.error.as_deref(),
            _ => None,
        }
        .map(crate::archive::tool_calls::kept_error),
    }
}

/// The id a part is archived by. A todo list the store made a part of is
/// named by the store's count of events (which heartbeats and other
/// sessions move on, so two forms of one stream named it differently):
/// archived, it is named by its place among the lists after the same part
/// instead, the same in every form and after an export read back.
fn archived_id(m: &Message, part: &Part) -> String {
    fn after(p: &Part) -> Option<&str> {
        p.source
            .is_some()
            .then(|| p.id.split_once("~todo").map(|(after, _)| after))
            .flatten()
    }
    let Some(mine) = after(part) else {
        return part.id.clone();
    };
    let place = m
        .parts
        .iter()
        .filter(|p| after(p) == Some(mine))
        .take_while(|p| p.id != part.id)
        .count();
    format!("{mine}~todo{place:016x}")
}

fn kind_of(kind: Option<&str>) -> &'static str {
    match kind {
        Some("step-start") => "step-start",
        Some("step-finish") => "step-finish",
        Some("snapshot") => "snapshot",
        Some("retry") => "retry",
        Some("compaction") => "compaction",
        _ => "other",
    }
}

/// Every string inside a JSON value (a tool's input: paths, commands,
/// patterns, todos), one a line.
pub(super) fn strings(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
