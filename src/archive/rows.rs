//! What one write to the archive holds: new events for the log, and the
//! latest state of the sessions, messages and parts they touched. Both
//! engines take the same batch, in one transaction.

/// Where a session was seen: never a credential (URLs lose their userinfo
/// before they get here, `postgres_url::redact`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    /// The server it streamed from, without credentials.
    pub server: Option<String>,
    /// The machine ocview ran on.
    pub host: String,
    /// The file it was read from.
    pub file: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EventRow {
    /// Unique in the log: the same event imported twice is one row.
    pub key: String,
    pub session_id: String,
    /// When it was received or happened (ms), 0 when unknown.
    pub time_ms: i64,
    /// The bus event's JSON (`super::encode`).
    pub json: String,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: String,
    pub directory: Option<String>,
    pub created: i64,
    pub updated: i64,
    /// The session's info object as last sent.
    pub raw: String,
    /// The server it came from when the batch's origin does not say (a
    /// fleet's member), without credentials.
    pub server: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MessageRow {
    pub id: String,
    pub session_id: String,
    pub role: String,
    pub model: Option<String>,
    pub agent: Option<String>,
    pub created: i64,
    /// Newer state wins: the time of the last event that changed it.
    pub updated: i64,
    pub raw: String,
    /// The key of this batch's `message.updated` whose info is `raw` as it
    /// is: PostgreSQL keeps its place in the log, not a second copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logged_as: Option<String>,
    /// An assistant message's cost and tokens (`super::spend`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<crate::source::opencode_db::usage::Figures>,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PartRow {
    pub id: String,
    pub message_id: String,
    pub session_id: String,
    /// The part's type (`text`, `tool`, …).
    pub kind: String,
    pub tool: Option<String>,
    /// A tool's state (`completed`, `error`, …).
    pub state: Option<String>,
    pub model: Option<String>,
    pub agent: Option<String>,
    /// When it happened (ms): its start, else its message's creation.
    pub time: i64,
    /// Newer state wins: the time of the last event that changed it.
    pub updated: i64,
    /// What search finds it by.
    pub text: String,
    /// What the engine's write would make of this row, made ahead by an
    /// import's reading stage (`Engine::rows_ahead`), after any redaction;
    /// `None`: the write makes it.
    #[serde(skip)]
    pub prepared: Option<Prepared>,
    /// The part object with its streamed text, as the store holds it.
    pub raw: String,
    /// The key of this batch's event whose part object is `raw` as it is
    /// (no delta after it): the archive may keep a reference to that event
    /// in its log rather than a second copy (`sqlite::event_log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logged_as: Option<String>,
    /// A tool call's error, as its row keeps it (`tool_calls::error_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A part's row as an engine writes it, made on another thread.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// The text its word index is given.
    pub document: String,
    /// What tells this state of the part from another.
    pub hash: i64,
}

/// Serialized as it is: the local spool keeps batches as JSON lines.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Batch {
    pub origin: Origin,
    pub events: Vec<EventRow>,
    pub sessions: Vec<SessionRow>,
    pub messages: Vec<MessageRow>,
    pub parts: Vec<PartRow>,
    /// How far a file's import has come with this batch: written in the
    /// batch's own transaction, so a crash never separates the two.
    pub checkpoint: Option<crate::archive::resume::Checkpoint>,
    /// Answers to prompts, on record (`super::answers`).
    #[serde(default)]
    pub answers: Vec<AnswerRow>,
    /// Redacted already (an import's reading stage did it, beside the
    /// writing): what was found. `None`: the engine redacts it as its
    /// policy says.
    #[serde(default)]
    pub redacted: Option<Vec<Found>>,
    /// Prompts seen asked or settled (`super::prompt_waits`).
    #[serde(default)]
    pub prompts: Vec<crate::archive::prompt_waits::PromptRow>,
    /// Retries sessions waited through (`super::spend`).
    #[serde(default)]
    pub retries: Vec<crate::archive::spend::RetryRow>,
    /// Models' prices a server said (`super::spend`).
    #[serde(default)]
    pub prices: Vec<crate::archive::spend::PriceRow>,
    /// Its log's blocks packed ahead (an import's preparing stage); made
    /// again where the events changed or some were logged before.
    #[serde(skip)]
    pub packed: Option<Packed>,
}

/// A batch's blocks of the log packed ahead of its write (an import's
/// preparing stage, beside the writer), as `blocks::group` packs them when
/// every event of the batch is new to the archive, an import's usual case
/// (made and taken in `blocks`).
#[derive(Debug, Clone, Default)]
pub struct Packed {
    /// How many events it was packed of.
    pub(in crate::archive) events: usize,
    pub(in crate::archive) data: Vec<Vec<u8>>,
}

/// One answer to a prompt, as the audit keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AnswerRow {
    /// The request's and its session's own ids.
    pub request_id: String,
    pub session_id: String,
    /// `permission` or `question`.
    pub kind: String,
    /// What asked: `permission · bash`, `question`.
    pub prompt: String,
    /// What the prompt showed: the command, the file and its diff, the
    /// question.
    pub shown: String,
    /// `once`, `always`, `reject`, a question's answers, `dismissed`.
    pub answer: String,
    /// What `always` allows from now on.
    pub patterns: Vec<String>,
    /// A rejection's message.
    pub message: Option<String>,
    /// `ocview` (this machine's, `machine`), or `another client` (seen
    /// answered by someone else: OpenCode's TUI, another ocview).
    pub by: String,
    pub machine: String,
    /// The OS user who answered (`by` ocview).
    pub user: String,
    /// The server it went to (without credentials).
    pub server: Option<String>,
    /// When (ms since 1970).
    pub time: i64,
    /// What the server said: `sent`, `already answered`, `failed: …`, or
    /// `seen` for another client's.
    pub outcome: String,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.sessions.is_empty()
            && self.messages.is_empty()
            && self.parts.is_empty()
            && self.checkpoint.is_none()
            && self.answers.is_empty()
            && self.prompts.is_empty()
            && self.retries.is_empty()
            && self.prices.is_empty()
    }
}

/// What a write added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Events new to the log (a duplicate adds none).
    pub events: u64,
    pub parts: u64,
}

/// Secrets redacted out of one item (a part, a message, a session's
/// title): how many, by which rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Found {
    pub session_id: String,
    /// The part's, message's or session's id.
    pub item: String,
    pub rule: String,
    pub count: u64,
}
