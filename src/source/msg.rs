//! What every source sends the app: records for the reducer, whole message
//! lists to finalise, reconciliation after a gap, and its own state.

use std::collections::HashSet;

use crate::model::{MessageInfo, Part};
use crate::source::decode::apply::Record;

/// What became of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyOutcome {
    Sent,
    /// 404: someone answered first (or the run ended).
    AlreadyGone,
    Failed(String),
}

/// Where a source is at, for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    /// A recording file is being indexed for seeking.
    Indexing,
    /// A recording's records are flowing.
    Playing,
    /// The source reached its end.
    Ended,
    /// The source failed for good; the message says why.
    Failed(String),
    /// Connecting to a server for the first time.
    Connecting,
    /// Attached and in sync.
    Live,
    /// The stream broke; trying again.
    Reconnecting { attempt: u32, reason: String },
}

impl SourceState {
    pub fn label(&self) -> String {
        match self {
            SourceState::Indexing => "indexing…".into(),
            SourceState::Playing => "playing".into(),
            SourceState::Ended => "ended".into(),
            SourceState::Failed(e) => format!("failed: {e}"),
            SourceState::Connecting => "connecting…".into(),
            SourceState::Live => "live".into(),
            SourceState::Reconnecting { attempt, reason } => {
                format!("reconnecting (attempt {attempt}): {reason}")
            }
        }
    }
}

#[derive(Debug)]
pub enum SourceMsg {
    Record(Box<Record>),
    /// What form a recording was read as, and how many lines were read:
    /// sent when the form is known or refined, and at the end.
    Form {
        form: crate::source::decode::form::Format,
        lines: u64,
    },
    /// A recording file, indexed: the viewer plays it from here on.
    Indexed(Box<crate::source::timeline::Opened>),
    State(SourceState),
    /// The server's stored messages of a session (newest page, or an older
    /// page): they replace what streamed, stream-only parts kept.
    Messages {
        session_id: String,
        messages: Vec<(MessageInfo, Vec<Part>)>,
        /// An older page (the answer to `LiveCommand::Older`, possibly
        /// empty when it failed): it covers only up to its own newest
        /// message. Otherwise the newest page, which covers to the end.
        older: bool,
        /// The session's first message is loaded: there is nothing older.
        complete: bool,
    },
    /// After a (re)load: the sessions and pending prompts the server has.
    Reconcile {
        /// In a fleet, the server whose sessions these are.
        server: Option<String>,
        sessions: HashSet<String>,
        pending_prompts: HashSet<String>,
    },
    /// A request failed without breaking the stream (shown, not fatal).
    Notice(String),
    /// The archive's list cannot be read (why), or can again (`None`): the
    /// status line keeps a mark meanwhile.
    ArchiveTrouble(Option<String>),
    /// The archive's pinned sessions (bare ids), as read now.
    ArchivePins(Vec<String>),
    /// `attach --record` could not write: the viewer goes on unrecorded.
    RecordingStopped(String),
    /// The recording's file grew (its size is in the shared counter).
    RecordingGrew,
    /// What became of an abort the user asked for.
    Aborted {
        session_id: String,
        outcome: ReplyOutcome,
    },
    /// What became of an answer the user sent.
    Replied {
        request_id: String,
        outcome: ReplyOutcome,
    },
    /// How many messages a session has in opencode's database on this
    /// machine (the server's pages give no total).
    MessageTotal {
        session_id: String,
        total: u64,
    },
    /// A page of a session's stored messages for the archive alone (the
    /// answer to `LiveCommand::ArchivePage`): what the view shows is not
    /// touched.
    ArchivePage {
        session_id: String,
        messages: Vec<(crate::model::MessageInfo, Vec<crate::model::Part>)>,
        /// The cursor of the page before; `None`: the first message is in
        /// (or the page failed).
        next: Option<String>,
        /// Why the server gave no page.
        failed: Option<String>,
    },
}
