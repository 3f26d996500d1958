//! The app's messages: what key handlers ask the loop to do (`Request`) and
//! what comes back to the loop from work done off it (`AppMsg`). Panes,
//! overlays, verbs and job control all speak these, so none of them needs
//! another's module to talk to the loop.

use crate::archive::Hit;
use crate::headless::content::Content;

/// Work for the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Bytes for the terminal (an OSC 52 copy).
    Write(Vec<u8>),
    /// Run a clipboard program with the content on its input.
    Clipboard { argv: Vec<String>, content: Content },
    /// Hand the terminal to the pager or the editor.
    Open(Program, Content),
    /// Hand the terminal to a program of ocview's own (a history session
    /// replayed in the player): its arguments, and what it is, in words.
    Run {
        argv: Vec<std::ffi::OsString>,
        what: String,
    },
    /// Job control: give the terminal back and stop, or take it again.
    Suspend(Job),
}

/// What comes back to the loop from work done off it: the clipboard
/// program, job control, the archive's threads.
#[derive(Debug)]
pub enum AppMsg {
    Clipboard {
        via: String,
        content: Content,
        result: Result<(), String>,
    },
    /// A job-control signal (SIGTSTP, SIGCONT) for the loop.
    Job(Job),
    /// What the archive's threads answer.
    Archive(ArchiveReply),
    /// The answers on record the audit view asked for (`overlays::audit`).
    Answers(Result<Vec<crate::archive::rows::AnswerRow>, String>),
    /// The failures by model and tool, or a row's failed calls, for the
    /// question of this number.
    Insights(u64, InsightsReply),
}

/// Which program opens the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `$PAGER` (default `less -R`), the content on its standard input.
    Pager,
    /// `$VISUAL` or `$EDITOR` (default `vi`), on the file.
    Editor,
}

/// What the loop is asked to do with the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Give the terminal back and stop (Ctrl-Z, SIGTSTP).
    Stop,
    /// Continued without having given the terminal back: take it again.
    Continued,
}

/// What the archive's threads tell the loop.
#[derive(Debug)]
pub enum ArchiveReply {
    /// A one-line message for the status line (a bad archive, a write
    /// that failed).
    Said(String),
    /// How far a file's import has come ("archive: indexing big.jsonl
    /// 45 %"), or `None` when it is done: it replaces only a notice of its
    /// own kind, and is not logged.
    Progress(Option<String>),
    /// The answer to query number `generation`.
    Found {
        generation: u64,
        result: Result<crate::archive::query::Searched, String>,
    },
    /// A session's latest state, as bus events, to open at a hit.
    Opened {
        hit: Box<Hit>,
        result: Result<Vec<String>, String>,
    },
}

/// What the insights' thread answers (`overlays::insights`).
#[derive(Debug)]
pub enum InsightsReply {
    Counts(Result<Vec<crate::archive::tool_calls::CallCount>, String>),
    Failed(Result<Vec<crate::archive::tool_calls::FailedCall>, String>),
    Waits(Result<Box<crate::insights::waits::Waits>, String>),
    Cost(Result<Box<crate::insights::cost::Cost>, String>),
}
