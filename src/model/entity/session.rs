//! Sessions: their info, live status and errors.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::message::{FileDiff, Message};
use super::prompt::Todo;
use crate::model::lenient;

/// Token usage, as opencode reports it for sessions, messages and steps.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Tokens {
    #[serde(deserialize_with = "lenient::opt_u64")]
    pub total: Option<u64>,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub input: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub output: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub reasoning: u64,
    pub cache: CacheTokens,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CacheTokens {
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub read: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub write: u64,
}

impl Tokens {
    /// The total opencode reports, or the sum of the parts when it gave none.
    pub fn sum(&self) -> u64 {
        // Saturating: hostile figures must not overflow.
        self.total.unwrap_or_else(|| {
            [
                self.output,
                self.reasoning,
                self.cache.read,
                self.cache.write,
            ]
            .into_iter()
            .fold(self.input, u64::saturating_add)
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Times {
    #[serde(deserialize_with = "lenient::opt_i64")]
    pub created: Option<i64>,
    #[serde(deserialize_with = "lenient::opt_i64")]
    pub updated: Option<i64>,
}

/// Line counts of a session's changes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionSummary {
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub additions: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub deletions: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub files: u64,
}

/// Where a session was reverted to (set by `POST /session/{id}/revert`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Revert {
    #[serde(rename = "messageID")]
    pub message_id: String,
    #[serde(rename = "partID")]
    pub part_id: Option<String>,
    pub snapshot: Option<String>,
    pub diff: Option<String>,
}

/// `session.*` info as the server sends it. Fields it does not name stay in `raw`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionInfo {
    pub id: String,
    #[serde(rename = "parentID")]
    pub parent_id: Option<String>,
    pub title: String,
    pub slug: Option<String>,
    pub directory: Option<String>,
    #[serde(rename = "projectID")]
    pub project_id: Option<String>,
    pub version: Option<String>,
    pub agent: Option<String>,
    #[serde(deserialize_with = "lenient::f64_or_zero")]
    pub cost: f64,
    pub tokens: Tokens,
    pub time: Times,
    pub summary: Option<SessionSummary>,
    pub revert: Option<Revert>,
    #[serde(skip)]
    pub raw: Option<Box<RawValue>>,
}

impl SessionInfo {
    /// Parse from the raw JSON object, keeping that object for fields we do not model.
    pub fn from_raw(raw: &RawValue) -> serde_json::Result<Self> {
        let mut info: SessionInfo = serde_json::from_str(raw.get())?;
        info.raw = Some(raw.to_owned());
        Ok(info)
    }
}

/// Live status of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SessionStatus {
    #[default]
    Idle,
    Busy,
    Retry {
        attempt: Option<u64>,
        message: String,
        /// Epoch milliseconds of the next attempt.
        next: Option<i64>,
    },
    /// A status type this version of ocview does not know.
    Other(String),
}

#[derive(Deserialize)]
struct StatusWire {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default, deserialize_with = "lenient::opt_u64")]
    attempt: Option<u64>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    next: Option<i64>,
}

impl<'de> Deserialize<'de> for SessionStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = StatusWire::deserialize(d)?;
        Ok(match w.kind.as_str() {
            "idle" => SessionStatus::Idle,
            "busy" => SessionStatus::Busy,
            "retry" => SessionStatus::Retry {
                attempt: w.attempt,
                message: w.message.unwrap_or_default(),
                next: w.next,
            },
            other => SessionStatus::Other(other.to_string()),
        })
    }
}

impl SessionStatus {
    pub fn label(&self) -> &str {
        match self {
            SessionStatus::Idle => "idle",
            SessionStatus::Busy => "busy",
            SessionStatus::Retry { .. } => "retry",
            SessionStatus::Other(s) => s,
        }
    }
}

/// A session-level or message-level error: `{name, data:{message, …}}`.
#[derive(Debug, Clone, Default)]
pub struct ErrorInfo {
    pub name: String,
    pub message: Option<String>,
    pub raw: Option<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorWire {
    name: Option<String>,
    data: Option<ErrorData>,
    message: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorData {
    message: Option<String>,
}

impl ErrorInfo {
    pub fn from_raw(raw: &RawValue) -> Self {
        // Some producers send the error as a bare string: it is the message.
        if let Ok(text) = serde_json::from_str::<String>(raw.get()) {
            return ErrorInfo {
                name: "Error".into(),
                message: Some(text),
                raw: Some(raw.to_owned()),
            };
        }
        let wire: ErrorWire = serde_json::from_str(raw.get()).unwrap_or_default();
        ErrorInfo {
            name: wire.name.unwrap_or_else(|| "UnknownError".into()),
            message: wire.data.and_then(|d| d.message).or(wire.message),
            raw: Some(raw.to_owned()),
        }
    }

    /// "Name: message", the one-line form used in lists and transcripts.
    pub fn summary(&self) -> String {
        match &self.message {
            Some(m) if !m.is_empty() => format!("{}: {}", self.name, m),
            _ => self.name.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for ErrorInfo {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(ErrorInfo::from_raw(&raw))
    }
}

/// How many distinct session errors are kept: hostile input must not grow
/// a session without bound.
const MAX_SESSION_ERRORS: usize = 256;

/// A session in the store: its info plus everything the stream told us about it.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub info: SessionInfo,
    pub status: SessionStatus,
    /// The latest error of the whole session (`session.error`).
    pub error: Option<ErrorInfo>,
    /// Every distinct error of the whole session, oldest first (bounded).
    pub errors: Vec<ErrorInfo>,
    /// Messages ordered by id (oldest first).
    pub messages: Vec<Message>,
    pub todos: Vec<Todo>,
    /// The last `session.diff` (non-empty only after a revert in 1.18.33).
    pub diff: Vec<FileDiff>,
    pub compactions: u32,
    /// The project directory from a `/global/event` wrapper, when known.
    pub project_directory: Option<String>,
    /// True while we only know the session from events that referenced it.
    pub placeholder: bool,
    /// Bumped on every change to the session or anything in it.
    pub revision: u64,
    pub(crate) last_event: crate::model::event_mark::EventMark,
    /// The part the stream last named in a `message.part.updated`
    /// (applied or not): (message id, part id).
    pub(crate) last_streamed_part: Option<(String, String)>,
    /// The sum of its messages' usage, kept as events apply (`totals`).
    pub(crate) tally: super::totals::Tally,
}

impl Session {
    /// Files a session changed, with +/− counts: the user messages' summary
    /// diffs (the latest count per file wins), or the session diff after a revert.
    pub fn modified_files(&self) -> Vec<(String, u64, u64)> {
        let mut files: std::collections::BTreeMap<String, (u64, u64)> =
            std::collections::BTreeMap::new();
        let mut add = |d: &FileDiff| {
            files.insert(d.file.clone(), (d.additions, d.deletions));
        };
        for m in &self.messages {
            m.info.diffs.iter().for_each(&mut add);
        }
        let from_summaries = !self.messages.iter().all(|m| m.info.diffs.is_empty());
        if self.info.revert.is_some() || !from_summaries {
            self.diff.iter().for_each(&mut add);
        }
        files.into_iter().map(|(f, (a, d))| (f, a, d)).collect()
    }

    /// A `session.error`: the latest one shown, every distinct one kept
    /// (the same error sent again, on a reconnect, is kept once).
    pub(crate) fn note_error(&mut self, error: ErrorInfo) {
        let raw = |e: &ErrorInfo| e.raw.as_ref().map(|r| r.get().to_string());
        let seen = self
            .errors
            .iter()
            .any(|e| raw(e) == raw(&error) && e.summary() == error.summary());
        if !seen && self.errors.len() < MAX_SESSION_ERRORS {
            self.errors.push(error.clone());
        }
        self.error = Some(error);
    }

    pub fn placeholder(id: &str) -> Self {
        Session {
            info: SessionInfo {
                id: id.to_string(),
                title: String::new(),
                ..Default::default()
            },
            placeholder: true,
            ..Default::default()
        }
    }

    pub fn id(&self) -> &str {
        &self.info.id
    }

    pub fn title(&self) -> &str {
        if self.info.title.is_empty() {
            &self.info.id
        } else {
            &self.info.title
        }
    }

    pub fn message_index(&self, id: &str) -> Result<usize, usize> {
        crate::model::ids::find_by_id(&self.messages, id, |m| &m.info.id)
    }

    pub fn message(&self, id: &str) -> Option<&Message> {
        self.message_index(id).ok().map(|i| &self.messages[i])
    }

    /// Where a todo list the stream sends goes, in stream order: right
    /// after the part the stream last named, when that part belongs to an
    /// assistant message (the `todowrite` call that caused it, in
    /// opencode's order); else after the last part of the newest assistant
    /// message. The message's index, and the id of the part to follow.
    pub(crate) fn todo_place(&self) -> Option<(usize, String)> {
        if let Some((message, part)) = &self.last_streamed_part
            && let Ok(mi) = self.message_index(message)
            && self.messages[mi].info.is_assistant()
        {
            return Some((mi, part.clone()));
        }
        let mi = self.messages.iter().rposition(|m| m.info.is_assistant())?;
        let last = self.messages[mi].parts.last();
        Some((mi, last.map_or("prt_", |p| p.id.as_str()).to_string()))
    }

    /// Remember the part a streamed `message.part.updated` named.
    pub(crate) fn note_streamed_part(&mut self, message: &str, part: &str) {
        let same = self
            .last_streamed_part
            .as_ref()
            .is_some_and(|(m, p)| m == message && p == part);
        if !same {
            self.last_streamed_part = Some((message.to_string(), part.to_string()));
        }
    }

    /// Whether a tool part of `message` that is still pending or running
    /// was left unfinished: its turn is over (the message completed or
    /// failed, the session is idle) or the source that told it ended
    /// (`source_ended`). It will never finish, so it is shown as
    /// unfinished, not as running.
    pub fn left_unfinished(
        &self,
        message: &Message,
        part_index: usize,
        source_ended: bool,
    ) -> bool {
        let open = message.parts.get(part_index).is_some_and(|p| {
            matches!(
                &p.body,
                super::part::PartBody::Tool(t) if !t.state.status.is_terminal()
            )
        });
        open && (source_ended
            || self.status == SessionStatus::Idle
            || message.info.completed.is_some()
            || message.info.error.is_some())
    }

    /// Turns in order: each user message with the assistant messages answering it.
    pub fn turns(&self) -> Vec<super::turn::Turn<'_>> {
        super::turn::group_turns(&self.messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_read_from_its_object_or_a_bare_string() {
        let raw = |s: &str| RawValue::from_string(s.to_string()).unwrap();
        let typed = ErrorInfo::from_raw(&raw(r#"{"name":"APIError","data":{"message":"x"}}"#));
        assert_eq!(typed.summary(), "APIError: x");
        assert_eq!(
            ErrorInfo::from_raw(&raw(r#""overloaded""#)).summary(),
            "Error: overloaded"
        );
        assert_eq!(ErrorInfo::from_raw(&raw("42")).summary(), "UnknownError");
    }
}
