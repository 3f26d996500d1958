//! Messages: user prompts and assistant steps, each holding ordered parts.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::part::Part;
use super::session::{ErrorInfo, Tokens};
use crate::model::lenient;

/// One file's change: in a user message's `summary.diffs` and in `session.diff`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FileDiff {
    pub file: String,
    pub patch: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub additions: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub deletions: u64,
    pub status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Role {
    User,
    Assistant,
    /// A role this version does not know, as the record names it: shown
    /// as what it claims, never as the assistant's.
    Other(String),
    /// No role at all, or a message known only from its parts.
    #[default]
    Unknown,
}

impl Role {
    /// The role as a reader is told it: "user", "assistant", the role the
    /// record claims, or "unknown role".
    pub fn label(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Other(claimed) => claimed,
            Role::Unknown => "unknown role",
        }
    }
}

/// Provider and model of a message, normalised from the user and assistant shapes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelRef {
    #[serde(rename = "providerID")]
    pub provider_id: String,
    #[serde(rename = "modelID")]
    pub model_id: String,
}

#[derive(Debug, Clone, Default)]
pub struct MessageInfo {
    pub id: String,
    pub session_id: String,
    pub role: Role,
    /// For an assistant message: the user message it answers.
    pub parent_id: Option<String>,
    pub agent: Option<String>,
    pub mode: Option<String>,
    pub model: Option<ModelRef>,
    pub cost: f64,
    pub tokens: Tokens,
    pub finish: Option<String>,
    pub error: Option<ErrorInfo>,
    pub created: Option<i64>,
    pub completed: Option<i64>,
    /// A user message's per-turn file changes (`summary.diffs`).
    pub diffs: Vec<FileDiff>,
    /// An assistant message that is a compaction summary.
    pub is_summary: bool,
    /// The last object the server sent, for fields we do not model.
    pub raw: Option<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MessageWire<'a> {
    id: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    role: Option<String>,
    #[serde(rename = "parentID")]
    parent_id: Option<String>,
    agent: Option<String>,
    mode: Option<String>,
    model: Option<ModelRef>,
    #[serde(rename = "providerID")]
    provider_id: Option<String>,
    #[serde(rename = "modelID")]
    model_id: Option<String>,
    #[serde(deserialize_with = "lenient::f64_or_zero")]
    cost: f64,
    tokens: Tokens,
    finish: Option<String>,
    error: Option<ErrorInfo>,
    time: MessageTime,
    #[serde(borrow)]
    summary: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MessageTime {
    #[serde(deserialize_with = "lenient::opt_i64")]
    created: Option<i64>,
    #[serde(deserialize_with = "lenient::opt_i64")]
    completed: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct UserSummary {
    diffs: Vec<FileDiff>,
}

impl MessageInfo {
    pub fn from_raw(raw: &RawValue) -> serde_json::Result<Self> {
        let w: MessageWire = serde_json::from_str(raw.get())?;
        let role = match w.role.as_deref() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some(other) if !other.trim().is_empty() => Role::Other(other.to_string()),
            _ => Role::Unknown,
        };
        let model = w.model.or(match (w.provider_id, w.model_id) {
            (Some(provider_id), Some(model_id)) => Some(ModelRef {
                provider_id,
                model_id,
            }),
            _ => None,
        });
        // `summary` is an object with diffs on user messages and `true` on compaction summaries.
        let (diffs, is_summary) = match w.summary {
            Some(s) if s.get().starts_with('{') => (
                serde_json::from_str::<UserSummary>(s.get())
                    .map(|u| u.diffs)
                    .unwrap_or_default(),
                false,
            ),
            Some(s) => (Vec::new(), s.get() == "true"),
            None => (Vec::new(), false),
        };
        Ok(MessageInfo {
            id: w.id,
            session_id: w.session_id,
            role,
            parent_id: w.parent_id,
            agent: w.agent,
            mode: w.mode,
            model,
            cost: w.cost,
            tokens: w.tokens,
            finish: w.finish,
            error: w.error,
            created: w.time.created,
            completed: w.time.completed,
            diffs,
            is_summary,
            raw: Some(raw.to_owned()),
        })
    }

    pub fn placeholder(session_id: &str, id: &str) -> Self {
        MessageInfo {
            id: id.to_string(),
            session_id: session_id.to_string(),
            ..Default::default()
        }
    }

    pub fn is_user(&self) -> bool {
        self.role == Role::User
    }

    pub fn is_assistant(&self) -> bool {
        self.role == Role::Assistant
    }
}

/// Up to how many parts a message's list grows one at a time.
const TIGHT_PARTS: usize = 8;

#[derive(Debug, Clone, Default)]
pub struct Message {
    pub info: MessageInfo,
    /// Parts ordered by id (display order).
    pub parts: Vec<Part>,
    /// True while the message is known only from its parts.
    pub placeholder: bool,
    pub revision: u64,
    pub(crate) last_event: crate::model::event_mark::EventMark,
    /// What this message adds to its session's summed totals, as last counted.
    pub(crate) counted: super::totals::Usage,
}

impl Message {
    pub fn new(info: MessageInfo) -> Self {
        Message {
            info,
            ..Default::default()
        }
    }

    pub fn id(&self) -> &str {
        &self.info.id
    }

    /// Put a part at `at`. Most messages hold one to three parts, and a
    /// `Vec`'s first growth makes room for four (a part is some 300
    /// bytes): while small it grows by one, as a long session's tens of
    /// thousands of messages would otherwise hold three empty parts each.
    pub(crate) fn insert_part(&mut self, at: usize, part: Part) {
        if self.parts.len() == self.parts.capacity() && self.parts.len() < TIGHT_PARTS {
            self.parts.reserve_exact(1);
        }
        self.parts.insert(at, part);
    }

    pub fn part_index(&self, id: &str) -> Result<usize, usize> {
        crate::model::ids::find_by_id(&self.parts, id, |p| &p.id)
    }

    pub fn part(&self, id: &str) -> Option<&Part> {
        self.part_index(id).ok().map(|i| &self.parts[i])
    }
}
