//! The one interface both engines give, and how what goes wrong is said.

use crate::archive::listing::{ListCursor, ListedSession};
use crate::archive::query::{Hit, Query, Searched};
use crate::archive::resume::Checkpoint;
use crate::archive::rows::{Batch, Written};

/// What kind of trouble an archive is in: each is said in one line, and
/// ocview goes on without the archive (or, read-only, without writing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// Not a database, or a damaged one.
    Corrupt,
    /// Another program holds it.
    Locked,
    /// The disk (or the server's) is full.
    Full,
    /// It may be read but not written (a file's mode, a database role, a
    /// schema newer than this ocview).
    ReadOnly,
    /// The server cannot be reached or refused us.
    Unreachable,
    /// Anything else.
    Failed,
}

/// One line: what went wrong with which archive, never a password (URLs
/// are redacted before they get here).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("archive {place}: {message}")]
pub struct ArchiveError {
    pub trouble: Trouble,
    /// The file or the redacted server URL.
    pub place: String,
    pub message: String,
}

impl ArchiveError {
    pub fn new(trouble: Trouble, place: &str, message: impl Into<String>) -> Self {
        let message: String = message.into();
        ArchiveError {
            trouble,
            place: crate::model::wire::sanitize::line(place).into_owned(),
            message: crate::model::wire::sanitize::line(&message.replace('\n', " ")).into_owned(),
        }
    }
}

/// How many things the archive holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub sessions: u64,
    pub messages: u64,
    pub parts: u64,
    pub events: u64,
}

/// An archive: SQLite or PostgreSQL. Calls block; callers keep them off
/// the UI's thread (`super::writer`, `super::reader`).
pub trait Engine: Send {
    /// The file or the redacted server, for messages.
    fn place(&self) -> &str;
    /// Why it cannot be written, when it cannot.
    fn read_only(&self) -> Option<&str>;
    /// Whether it is shared (a team's PostgreSQL, redacted by default)
    /// rather than this machine's own file.
    fn shared(&self) -> bool;
    /// Add a batch in one transaction: new events, newer states.
    fn write(&mut self, batch: &Batch) -> Result<Written, ArchiveError>;
    /// How far the import of `file` (its canonical path) was committed.
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, ArchiveError>;
    /// The hits of `query`, and how far back they were looked for.
    fn find(&mut self, query: &Query) -> Result<Searched, ArchiveError>;
    /// The hits of `query`, newest first.
    fn search(&mut self, query: &Query) -> Result<Vec<Hit>, ArchiveError> {
        self.find(query).map(|s| s.hits)
    }
    /// A session's event log in the order it was written: bus events'
    /// JSON, one a line, for the player.
    fn events(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError>;
    /// A session's latest state as bus events (the session, then each
    /// message and its parts): opening it does not replay its log.
    fn snapshot(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError>;
    /// Sessions whose id is `id` or starts with it (at most a few).
    fn find_sessions(&mut self, id: &str) -> Result<Vec<String>, ArchiveError>;
    fn counts(&mut self) -> Result<Counts, ArchiveError>;
    /// Bytes the archive holds now (SQLite: its pages in use; PostgreSQL:
    /// the rows of its tables): what the size cap is measured against, so
    /// it drops as soon as sessions are deleted.
    fn size(&mut self) -> Result<u64, ArchiveError>;
    /// Sessions, least recently updated first, at most `limit`; only those
    /// last updated before `before` when it is given: (id, updated ms).
    fn oldest_sessions(
        &mut self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, ArchiveError>;
    /// Sessions the event log holds that have no row of their own (events
    /// of a session the store never made, e.g. deltas alone), by id.
    fn unlisted_sessions(&mut self) -> Result<Vec<String>, ArchiveError>;
    /// The oldest and newest session's last update, if any.
    fn span(&mut self) -> Result<Option<(i64, i64)>, ArchiveError>;
    /// Whole sessions gone, in one transaction: their events, latest
    /// state and index rows. How many sessions went.
    fn delete_sessions(&mut self, ids: &[String]) -> Result<u64, ArchiveError>;
    /// Start (`true`) or end (`false`) a rehearsal: until its end, every
    /// delete is seen by this connection alone, and its end undoes them
    /// all. A dry run is the run itself, rehearsed.
    fn rehearse(&mut self, on: bool) -> Result<(), ArchiveError>;
    /// Give freed space back (SQLite VACUUM, PostgreSQL VACUUM).
    fn vacuum(&mut self) -> Result<(), ArchiveError>;
    /// Give the disk back what writing left free where it is a large
    /// share of the file: SQLite keeps the pages its index's merges freed
    /// for later writes, a tenth of the file after a first import.
    /// Whether it did. PostgreSQL reuses its own.
    fn reclaim(&mut self) -> Result<bool, ArchiveError> {
        Ok(false)
    }
    /// How far an opencode database (`source`: its path) was imported.
    fn import_mark(&mut self, source: &str) -> Result<Option<ImportMark>, ArchiveError>;
    /// Remember how far `source` was imported.
    fn set_import_mark(&mut self, source: &str, mark: ImportMark) -> Result<(), ArchiveError>;
    /// Let go of the pages cached for the writes and reads so far (after a
    /// burst; the next ones are read again from the file).
    fn release_memory(&mut self) {}
    /// A bulk write (an import) starts (`true`) or has ended (`false`):
    /// the engine may put off work until its end and do it at once then.
    fn bulk(&mut self, _on: bool) {}
    /// The work of `write` on a part's row that another thread may do
    /// ahead of it (an import's reading stage): its `prepared`. `None`:
    /// the write does it all.
    fn rows_ahead(&self) -> Option<fn(&mut crate::archive::rows::PartRow)> {
        None
    }

    /// Sessions newest first, after `after` (the last of the page before).
    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError>;
    /// Sessions updated at or after `since` ms, newest first.
    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError>;
    /// One session, if the archive has it.
    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError>;
    /// A number that changes when another connection commits (SQLite's
    /// `data_version`); `None` where a writer says so itself (PostgreSQL's
    /// NOTIFY, `postgres::notify`).
    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError>;
    /// How many secrets were redacted out of a session (every session's
    /// with `None`), by rule, most first: never the values.
    fn redactions(&mut self, session_id: Option<&str>) -> Result<Vec<(String, u64)>, ArchiveError>;
    /// Tool calls counted by model, tool and outcome
    /// (`crate::archive::tool_calls`). The errors of calls written before
    /// they were kept in their rows are read first, once, when the archive
    /// can be written.
    fn tool_calls(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
    ) -> Result<Vec<crate::archive::tool_calls::CallCount>, ArchiveError>;
    /// The failed calls of `model` and `tool`, newest first, at most `limit`.
    fn failed_calls(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
        model: &str,
        tool: &str,
        limit: u32,
    ) -> Result<Vec<crate::archive::tool_calls::FailedCall>, ArchiveError>;
    /// Every prompt asked in the filter's range (by when it was asked),
    /// with who answered it, newest first (`crate::archive::prompt_waits`).
    fn prompt_waits(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
    ) -> Result<Vec<crate::archive::prompt_waits::PromptWait>, ArchiveError>;
    /// What the assistant messages in the filter's range cost, by model and
    /// day (days cut at `day_offset_ms` from UTC); the costliest sessions;
    /// the steps that made a failed call; the retries
    /// (`crate::archive::spend`).
    fn spending(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
        day_offset_ms: i64,
    ) -> Result<crate::archive::spend::Spending, ArchiveError>;
    /// While the word index is built again (SQLite, `sqlite::reindex`), up
    /// to `budget` rows more into it: how far it is (done, all), `None`
    /// when there is nothing to do.
    fn reindex(&mut self, budget: usize) -> Result<Option<(u64, u64)>, ArchiveError>;
    /// The answers given to prompts, newest first (`super::rows::AnswerRow`).
    fn answers(
        &mut self,
        filter: &AnswerFilter,
    ) -> Result<Vec<crate::archive::rows::AnswerRow>, ArchiveError>;
    /// The pinned sessions: a prune never takes them.
    fn pins(&mut self) -> Result<Vec<String>, ArchiveError>;
    /// Pin or unpin a session (from the machine `host`): whether that
    /// changed anything.
    fn set_pin(&mut self, id: &str, pinned: bool, host: &str) -> Result<bool, ArchiveError>;
    /// A team archive's limits, one for every writer (`None`: a file's
    /// come from its machine's config).
    fn policy(&mut self) -> Result<Option<crate::archive::limits::Limits>, ArchiveError> {
        Ok(None)
    }
    /// Set a team archive's limits (as `by`): refused for a file, whose
    /// limits are its machine's, and for a user who may not write them.
    fn set_policy(
        &mut self,
        limits: &crate::archive::limits::Limits,
        by: &str,
    ) -> Result<(), ArchiveError> {
        let _ = (limits, by);
        Err(ArchiveError::new(
            Trouble::Failed,
            self.place(),
            "a file's limits are its machine's: archive_max_mb and archive_max_age_days in the config",
        ))
    }
}

/// Which answers `Engine::answers` lists: a session's, a machine's (part
/// of its name), a kind's (`permission`, `question`); the newest `limit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerFilter {
    pub session: Option<String>,
    pub machine: Option<String>,
    pub kind: Option<String>,
    pub limit: u32,
}

/// How far an opencode database was imported: every session updated before
/// `updated` (ms) and every row up to `rowid_max` is in the archive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportMark {
    /// The newest `time_updated` imported: the next import reads sessions
    /// updated at or after it (one updated in the same millisecond is not
    /// missed; reading it again adds nothing).
    pub updated: i64,
    /// The session table's largest rowid imported: a session added with old
    /// times (`opencode import`) is found by its rowid.
    pub rowid_max: i64,
}

/// The error a read-only archive gives to a write.
pub fn refuse_write(place: &str, why: &str) -> ArchiveError {
    ArchiveError::new(Trouble::ReadOnly, place, format!("not written: {why}"))
}
