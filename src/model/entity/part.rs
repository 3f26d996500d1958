//! Parts: the content of messages, one typed body per opencode part type.
//!
//! Ingest keeps this cheap: only the fields a viewer reads on every frame are
//! typed here; the whole object the server sent stays in `raw`, so unknown
//! fields and the big free-form payloads (tool input and metadata) are kept
//! without being parsed until something wants them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::part_source::PartSource;
use super::session::{ErrorInfo, Tokens};
use crate::model::lenient;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PartTime {
    #[serde(deserialize_with = "lenient::opt_i64")]
    pub start: Option<i64>,
    #[serde(deserialize_with = "lenient::opt_i64")]
    pub end: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TextPart {
    pub text: String,
    pub synthetic: bool,
    pub ignored: bool,
    pub time: Option<PartTime>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReasoningPart {
    pub text: String,
    pub time: Option<PartTime>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolStatus {
    #[default]
    Pending,
    Running,
    Completed,
    Error,
    Other(String),
}

impl ToolStatus {
    fn parse(s: &str) -> Self {
        match s {
            "pending" => ToolStatus::Pending,
            "running" => ToolStatus::Running,
            "completed" => ToolStatus::Completed,
            "error" => ToolStatus::Error,
            other => ToolStatus::Other(other.to_string()),
        }
    }

    pub fn label(&self) -> &str {
        match self {
            ToolStatus::Pending => "pending",
            ToolStatus::Running => "running",
            ToolStatus::Completed => "completed",
            ToolStatus::Error => "error",
            ToolStatus::Other(s) => s,
        }
    }

    /// Position in the state machine pending → running → completed | error.
    /// A tool never moves back to a lower rank.
    pub fn rank(&self) -> u8 {
        match self {
            ToolStatus::Pending | ToolStatus::Other(_) => 0,
            ToolStatus::Running => 1,
            ToolStatus::Completed | ToolStatus::Error => 2,
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.rank() == 2
    }
}

/// The typed head of a tool's state; `input` and `metadata` stay in the part's raw JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolState {
    pub status: ToolStatus,
    pub title: Option<String>,
    pub output: Option<String>,
    pub error: Option<String>,
    pub time: PartTime,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolStateWire {
    status: String,
    title: Option<String>,
    output: Option<String>,
    error: Option<String>,
    time: PartTime,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolPart {
    pub call_id: String,
    pub tool: String,
    pub state: ToolState,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolWire {
    #[serde(rename = "callID")]
    call_id: String,
    tool: String,
    state: ToolStateWire,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FilePart {
    pub mime: String,
    pub filename: Option<String>,
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AgentPart {
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SubtaskPart {
    pub prompt: String,
    pub description: String,
    pub agent: String,
    pub command: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StepFinishPart {
    pub reason: String,
    #[serde(deserialize_with = "lenient::f64_or_zero")]
    pub cost: f64,
    pub tokens: Tokens,
    pub snapshot: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PatchPart {
    pub hash: String,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct RetryPart {
    pub attempt: Option<u64>,
    pub error: Option<ErrorInfo>,
    pub created: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RetryWire {
    #[serde(deserialize_with = "lenient::opt_u64")]
    attempt: Option<u64>,
    error: Option<ErrorInfo>,
    time: RetryTime,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RetryTime {
    #[serde(deserialize_with = "lenient::opt_i64")]
    created: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CompactionPart {
    pub auto: bool,
    pub overflow: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SnapshotRef {
    pub snapshot: Option<String>,
}

/// The typed content of a part, one variant per opencode 1.18.33 part type.
#[derive(Debug, Clone)]
pub enum PartBody {
    Text(TextPart),
    Reasoning(ReasoningPart),
    File(FilePart),
    Agent(AgentPart),
    Tool(ToolPart),
    Subtask(SubtaskPart),
    StepStart(SnapshotRef),
    StepFinish(StepFinishPart),
    Snapshot(SnapshotRef),
    Patch(PatchPart),
    Retry(RetryPart),
    Compaction(CompactionPart),
    /// A part type this version does not know (or a known type whose fields
    /// did not have the expected shape): kept, shown generically from `raw`.
    Unknown {
        kind: String,
    },
}

#[derive(Debug, Clone)]
pub struct Part {
    pub id: String,
    pub message_id: String,
    pub session_id: String,
    pub body: PartBody,
    /// The last object the server sent for this part. For text and reasoning,
    /// streamed deltas are appended to the typed text, not to this, and a
    /// viewer's store drops the text from it: `to_value` is the part whole.
    pub raw: Box<RawValue>,
    /// Set for stream-only parts materialised from bus events (seed 000).
    pub source: Option<PartSource>,
    /// Bumped on every change, so renderers can cache by (id, revision, width).
    pub revision: u64,
    pub(crate) last_event: crate::model::event_mark::EventMark,
    /// The ids (position, tag) of the deltas applied to it while it
    /// streams: one said again later, adjacent or not, is not appended
    /// twice. Let go of once the part is final. Boxed: 8 bytes on every
    /// part, most of which never stream, not a set's 48.
    #[allow(clippy::box_collection)]
    pub(crate) deltas_applied: Option<Box<std::collections::HashSet<(u64, u64)>>>,
}

#[derive(Deserialize)]
struct PartHead {
    #[serde(default)]
    id: String,
    #[serde(rename = "messageID", default)]
    message_id: String,
    #[serde(rename = "sessionID", default)]
    session_id: String,
    #[serde(rename = "type", default)]
    kind: String,
}

/// Why a part object could not be used at all.
#[derive(Debug, thiserror::Error)]
#[error("part: {0}")]
pub struct PartError(String);

impl Part {
    /// Parse a part object. Only a part without `id`/`messageID` is an error;
    /// an unknown type or unexpected field shapes give `PartBody::Unknown`.
    pub fn from_raw(raw: &RawValue) -> Result<Self, PartError> {
        let text = raw.get();
        let head = match crate::model::json_peek::leading_strings(
            text,
            ["id", "messageID", "sessionID", "type"],
        ) {
            // The fast path: all four up front, as opencode writes them.
            Some([Some(id), Some(mid), sid, Some(kind)]) => PartHead {
                id: id.to_string(),
                message_id: mid.to_string(),
                session_id: sid.unwrap_or_default().to_string(),
                kind: kind.to_string(),
            },
            _ => {
                serde_json::from_str(text).map_err(|e| PartError(format!("not an object: {e}")))?
            }
        };
        if head.id.is_empty() || head.message_id.is_empty() {
            return Err(PartError("missing id or messageID".into()));
        }
        let body = parse_body(&head.kind, text).unwrap_or(PartBody::Unknown { kind: head.kind });
        Ok(Part {
            id: head.id,
            message_id: head.message_id,
            session_id: head.session_id,
            body,
            raw: raw.to_owned(),
            source: None,
            revision: 0,
            last_event: Default::default(),
            deltas_applied: None,
        })
    }

    /// Whether the delta marked `mark` was applied to this part already.
    pub(crate) fn has_delta(&self, mark: crate::model::event_mark::EventMark) -> bool {
        mark.seq != 0
            && self
                .deltas_applied
                .as_ref()
                .is_some_and(|d| d.contains(&(mark.seq, mark.tag)))
    }

    /// Remember the delta marked `mark` as applied.
    pub(crate) fn note_delta(&mut self, mark: crate::model::event_mark::EventMark) {
        if mark.seq != 0 {
            self.deltas_applied
                .get_or_insert_with(Default::default)
                .insert((mark.seq, mark.tag));
        }
    }

    pub fn kind(&self) -> &str {
        match &self.body {
            PartBody::Text(_) => "text",
            PartBody::Reasoning(_) => "reasoning",
            PartBody::File(_) => "file",
            PartBody::Agent(_) => "agent",
            PartBody::Tool(_) => "tool",
            PartBody::Subtask(_) => "subtask",
            PartBody::StepStart(_) => "step-start",
            PartBody::StepFinish(_) => "step-finish",
            PartBody::Snapshot(_) => "snapshot",
            PartBody::Patch(_) => "patch",
            PartBody::Retry(_) => "retry",
            PartBody::Compaction(_) => "compaction",
            PartBody::Unknown { kind } => kind,
        }
    }

    /// The streamed text of a text or reasoning part.
    pub fn text(&self) -> Option<&str> {
        match &self.body {
            PartBody::Text(t) => Some(&t.text),
            PartBody::Reasoning(r) => Some(&r.text),
            _ => None,
        }
    }

    pub fn tool(&self) -> Option<&ToolPart> {
        match &self.body {
            PartBody::Tool(t) => Some(t),
            _ => None,
        }
    }

    /// True once the server marked the part finished (`time.end` or a terminal tool state).
    pub fn is_final(&self) -> bool {
        match &self.body {
            PartBody::Text(t) => t.time.as_ref().is_some_and(|t| t.end.is_some()),
            PartBody::Reasoning(r) => r.time.as_ref().is_some_and(|t| t.end.is_some()),
            PartBody::Tool(t) => t.state.status.is_terminal(),
            _ => true,
        }
    }

    pub fn is_stream_only(&self) -> bool {
        self.source.is_some_and(|s| s.is_stream_only())
    }

    /// The part as JSON: the server's object with the streamed text applied.
    pub fn to_value(&self) -> Value {
        let mut v: Value = serde_json::from_str(self.raw.get()).unwrap_or(Value::Null);
        if let (Some(text), Value::Object(map)) = (self.text(), &mut v) {
            map.insert("text".into(), Value::String(text.to_string()));
        }
        v
    }

    /// Drop the text from the raw object of a text or reasoning part: the
    /// body holds it, and `to_value` puts it back. A long session's text
    /// is then held once, not twice (a third of a viewer's memory).
    pub(crate) fn shed_text_from_raw(&mut self) {
        if !matches!(self.body, PartBody::Text(_) | PartBody::Reasoning(_)) {
            return;
        }
        // Values borrowed: only the keys are copied to rebuild the object.
        let Ok(mut map) = serde_json::from_str::<BTreeMap<String, &RawValue>>(self.raw.get())
        else {
            return;
        };
        if map.remove("text").is_none_or(|t| t.get().len() <= 2) {
            return;
        }
        if let Ok(raw) = serde_json::value::to_raw_value(&map) {
            self.raw = raw;
        }
    }

    /// A field of the tool state that is kept raw (`input`, `metadata`, `attachments`).
    pub fn tool_state_field(&self, name: &str) -> Option<Value> {
        #[derive(Deserialize)]
        struct Outer<'a> {
            #[serde(borrow)]
            state: Option<&'a RawValue>,
        }
        let outer: Outer = serde_json::from_str(self.raw.get()).ok()?;
        let state: serde_json::Map<String, Value> =
            serde_json::from_str(outer.state?.get()).ok()?;
        state.get(name).cloned()
    }

    /// The tool's input, parsed alone (the output and metadata beside it
    /// are skipped, not built).
    pub fn tool_input(&self) -> Option<Value> {
        #[derive(Deserialize)]
        struct Outer<'a> {
            #[serde(borrow)]
            state: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct State<'a> {
            #[serde(borrow)]
            input: Option<&'a RawValue>,
        }
        let outer: Outer = serde_json::from_str(self.raw.get()).ok()?;
        let state: State = serde_json::from_str(outer.state?.get()).ok()?;
        serde_json::from_str(state.input?.get()).ok()
    }

    /// Append a streamed delta to `field`. Text and reasoning grow in place; any
    /// other field is rewritten in the raw object (rare, so the cost is fine).
    pub(crate) fn append_delta(&mut self, field: &str, delta: &str) -> bool {
        match (&mut self.body, field) {
            (PartBody::Text(t), "text") => t.text.push_str(delta),
            (PartBody::Reasoning(r), "text") => r.text.push_str(delta),
            _ => {
                let mut v = self.to_value();
                let Some(map) = v.as_object_mut() else {
                    return false;
                };
                let current = map.get(field).and_then(Value::as_str).unwrap_or("");
                let grown = format!("{current}{delta}");
                map.insert(field.to_string(), Value::String(grown));
                match serde_json::value::to_raw_value(&v) {
                    Ok(raw) => self.raw = raw,
                    Err(_) => return false,
                }
            }
        }
        true
    }
}

fn parse_body(kind: &str, text: &str) -> Option<PartBody> {
    Some(match kind {
        "text" => PartBody::Text(serde_json::from_str(text).ok()?),
        "reasoning" => PartBody::Reasoning(serde_json::from_str(text).ok()?),
        "file" => PartBody::File(serde_json::from_str(text).ok()?),
        "agent" => PartBody::Agent(serde_json::from_str(text).ok()?),
        "subtask" => PartBody::Subtask(serde_json::from_str(text).ok()?),
        "step-start" => PartBody::StepStart(serde_json::from_str(text).ok()?),
        "step-finish" => PartBody::StepFinish(serde_json::from_str(text).ok()?),
        "snapshot" => PartBody::Snapshot(serde_json::from_str(text).ok()?),
        "patch" => PartBody::Patch(serde_json::from_str(text).ok()?),
        "compaction" => PartBody::Compaction(serde_json::from_str(text).ok()?),
        "retry" => {
            let w: RetryWire = serde_json::from_str(text).ok()?;
            PartBody::Retry(RetryPart {
                attempt: w.attempt,
                error: w.error,
                created: w.time.created,
            })
        }
        "tool" => {
            let w: ToolWire = serde_json::from_str(text).ok()?;
            PartBody::Tool(ToolPart {
                call_id: w.call_id,
                tool: w.tool,
                state: ToolState {
                    status: ToolStatus::parse(&w.state.status),
                    title: w.state.title,
                    output: w.state.output,
                    error: w.state.error,
                    time: w.state.time,
                },
            })
        }
        _ => return None,
    })
}
