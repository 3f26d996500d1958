//! Every session in opencode's database, for the list, as one more member
//! of the fleet (`HISTORY_KEY`): a thread of its own opens the file, sends
//! the newest page of sessions at once and the rest a page at a time in
//! the background, answers the app's `Open`/`Older` with pages of a
//! session's messages (as a live server's pages are), and every `POLL`
//! looks at `PRAGMA data_version`: when another connection committed, it
//! reads only the sessions, messages and parts written since it last read,
//! so a session still being written is followed. Every read is one short
//! statement; everything reaches the app as source messages, ids scoped by
//! the history's key as a fleet server's are.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use tokio::sync::mpsc as tokio_mpsc;

use super::rows::{ContentRow, MessageCursor};
use super::sessions::{SessionCursor, SessionRow};
use super::{Db, DbError, convert};
use crate::model::store::fleet::{ServerReport, ServerState};
use crate::model::{Envelope, Event};
use crate::source::decode::apply::Record;
use crate::source::list_member::{self, ListMember};
use crate::source::live::LiveCommand;
use crate::source::live::fleet::scope_msg;
use crate::source::msg::SourceMsg;

/// The key the database's sessions are listed under in the fleet.
pub const HISTORY_KEY: &str = "history";

/// Sessions in the first page: a screen's worth and more.
pub const FIRST_PAGE: usize = 200;
/// Sessions per background page.
pub const PAGE: usize = 1_000;
/// Messages per page of a session (as a live server's pages).
pub const MESSAGE_PAGE: usize = 100;
/// How often the database is asked whether anything was committed.
pub const POLL: Duration = Duration::from_secs(1);

/// The app's end: commands for the reader (bare ids).
#[derive(Clone)]
pub struct HistoryHandle {
    commands: Sender<LiveCommand>,
}

impl HistoryHandle {
    /// Pass a command on; `false` when the reader has stopped.
    pub fn send(&self, cmd: LiveCommand) -> bool {
        self.commands.send(cmd).is_ok()
    }
}

/// Start the reader on the database at `path`; what it reads arrives on
/// `tx`, scoped by [`HISTORY_KEY`].
pub fn spawn(path: PathBuf, tx: tokio_mpsc::Sender<SourceMsg>) -> HistoryHandle {
    let (commands, rx) = channel();
    let spawned = std::thread::Builder::new()
        .name("ocview-db-history".into())
        .spawn(move || {
            let mut reader = Reader::new(path, tx);
            reader.report(ServerState::Connecting);
            list_member::run(&mut reader, &rx)
        });
    if let Err(e) = spawned {
        tracing::warn!("history: no thread: {e}");
    }
    HistoryHandle { commands }
}

/// A session the app opened: where its pages are, and what was read.
struct Opened {
    /// The oldest message loaded (`None`: none yet).
    oldest: Option<MessageCursor>,
    /// The newest `time_updated` of its rows read so far.
    seen: i64,
    /// The rows read with exactly `seen`, by id, with a hash of their data:
    /// the next read starts at `seen` (a row committed later in that same
    /// millisecond has it too) and skips these unless they changed.
    edge: HashMap<String, u64>,
}

impl Opened {
    fn new(oldest: Option<MessageCursor>, messages: &[ContentRow], parts: &[ContentRow]) -> Opened {
        let mut o = Opened {
            oldest,
            seen: i64::MIN,
            edge: HashMap::new(),
        };
        o.keep_new(messages, parts);
        o
    }

    /// The rows not read before (or changed since), and remember them.
    fn keep_new(
        &mut self,
        messages: &[ContentRow],
        parts: &[ContentRow],
    ) -> (Vec<ContentRow>, Vec<ContentRow>) {
        let fresh = |rows: &[ContentRow]| -> Vec<ContentRow> {
            rows.iter()
                .filter(|r| {
                    r.time_updated > self.seen
                        || (r.time_updated == self.seen
                            && self.edge.get(&r.id) != Some(&data_hash(&r.data)))
                })
                .cloned()
                .collect()
        };
        let (messages, parts) = (fresh(messages), fresh(parts));
        let newest = newest_of(&messages, &parts);
        if newest > self.seen {
            self.seen = newest;
            self.edge.clear();
        }
        for row in messages.iter().chain(&parts) {
            if row.time_updated == self.seen {
                self.edge.insert(row.id.clone(), data_hash(&row.data));
            }
        }
        (messages, parts)
    }
}

fn data_hash(data: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

struct Reader {
    path: PathBuf,
    shown: String,
    tx: tokio_mpsc::Sender<SourceMsg>,
    db: Option<Db>,
    worktrees: HashMap<String, String>,
    /// Where the background listing goes on (`None`: all listed).
    next_page: Option<SessionCursor>,
    listed_all: bool,
    /// The newest `time_updated` of the sessions read.
    newest: i64,
    /// The session table's largest rowid read so far.
    rowid: i64,
    /// Each listed session's `time_updated`.
    updated: HashMap<String, i64>,
    opened: HashMap<String, Opened>,
    version: Option<i64>,
    said: Option<String>,
    closed: bool,
}

impl ListMember for Reader {
    type Input = LiveCommand;

    fn closed(&self) -> bool {
        self.closed
    }

    fn listing(&self) -> bool {
        self.db.is_some() && !self.listed_all
    }

    fn every(&self) -> Duration {
        POLL
    }

    /// What changed since the last poll: first the newest page of
    /// sessions, then sessions written since, and the opened sessions'
    /// new rows.
    fn look(&mut self) {
        if !self.open() {
            return;
        }
        let Some(db) = &self.db else { return };
        let version = match db.data_version() {
            Ok(v) => v,
            Err(e) => return self.failed(e),
        };
        if self.version == Some(version) {
            return;
        }
        let first = self.version.is_none();
        self.version = Some(version);
        if first {
            self.rowid = db.session_rowid_max().unwrap_or(0);
            match db.sessions(FIRST_PAGE, None) {
                Ok(rows) => {
                    self.listed_all = rows.len() < FIRST_PAGE;
                    self.next_page = rows.last().map(cursor);
                    self.list(rows);
                }
                Err(e) => self.failed(e),
            }
            return;
        }
        let mut rows = match db.sessions_updated_since(self.newest, PAGE) {
            Ok(rows) => rows,
            Err(e) => return self.failed(e),
        };
        // Sessions added with old times (an import): found by their rowid.
        if let Ok(upto) = db.session_rowid_max()
            && upto > self.rowid
        {
            match db.sessions_added(self.rowid, upto, PAGE) {
                Ok(added) => {
                    let added: Vec<SessionRow> = added
                        .into_iter()
                        .filter(|r| !rows.iter().any(|o| o.id == r.id))
                        .collect();
                    rows.extend(added);
                }
                Err(e) => return self.failed(e),
            }
            self.rowid = upto;
        }
        if rows.iter().any(|r| {
            r.project_id
                .as_ref()
                .is_some_and(|p| !self.worktrees.contains_key(p))
        }) && let Some(db) = &self.db
        {
            self.worktrees = db.project_worktrees().unwrap_or_default();
        }
        // Every opened session read again, moved or not: one written again
        // within the millisecond last read keeps its `time_updated`.
        let moved: Vec<String> = rows
            .iter()
            .filter(|r| self.opened.contains_key(&r.id))
            .map(|r| r.id.clone())
            .collect();
        self.list(rows);
        for id in moved {
            self.follow(&id);
        }
    }

    /// The next background page of sessions.
    fn list_more(&mut self) {
        let Some(db) = &self.db else { return };
        let Some(after) = self.next_page.clone() else {
            self.listed_all = true;
            return;
        };
        match db.sessions(PAGE, Some(&after)) {
            Ok(rows) => {
                self.listed_all = rows.len() < PAGE;
                self.next_page = rows.last().map(cursor);
                self.list(rows);
            }
            Err(e) => self.failed(e),
        }
    }

    fn input(&mut self, cmd: LiveCommand) {
        self.command(cmd);
    }
}

impl Reader {
    fn new(path: PathBuf, tx: tokio_mpsc::Sender<SourceMsg>) -> Reader {
        let shown = path.display().to_string();
        Reader {
            path,
            shown,
            tx,
            db: None,
            worktrees: HashMap::new(),
            next_page: None,
            listed_all: false,
            newest: i64::MIN,
            rowid: 0,
            updated: HashMap::new(),
            opened: HashMap::new(),
            version: None,
            said: None,
            closed: false,
        }
    }

    fn send(&mut self, msg: SourceMsg) {
        if self.tx.blocking_send(scope_msg(msg, HISTORY_KEY)).is_err() {
            self.closed = true;
        }
    }

    fn send_event(&mut self, env: Envelope) {
        self.send(SourceMsg::Record(Box::new(convert::record(env))));
    }

    fn report(&mut self, state: ServerState) {
        let props = ServerReport::properties(&self.shown, None, &state);
        let report = ServerReport {
            key: HISTORY_KEY.into(),
            url: props["url"].as_str().unwrap_or_default().to_string(),
            directory: None,
            state,
        };
        let env = Envelope::new(Event::Server(Box::new(report)));
        // Not through `send`: a report's key is set here, not scoped.
        let record = Record {
            line: 0,
            repaired: None,
            item: Ok(crate::source::decode::record::Decoded::Event(env)),
        };
        if self
            .tx
            .blocking_send(SourceMsg::Record(Box::new(record)))
            .is_err()
        {
            self.closed = true;
        }
    }

    /// A read failed: say why once (the list keeps what it has), and open
    /// the file again at the next poll.
    fn failed(&mut self, e: DbError) {
        let why = crate::model::wire::sanitize::line(&e.to_string()).into_owned();
        self.db = None;
        if self.said.as_deref() != Some(why.as_str()) {
            tracing::info!("history: {why}");
            self.said = Some(why.clone());
            self.report(ServerState::Failed {
                reason: why.clone(),
            });
            self.send(SourceMsg::Notice(format!("opencode's database: {why}")));
        }
    }

    fn open(&mut self) -> bool {
        if self.db.is_some() {
            return true;
        }
        match Db::open(&self.path) {
            Ok(db) => {
                self.worktrees = db.project_worktrees().unwrap_or_default();
                // A schema this version does not fully know: say what is
                // not shown rather than leave it silently blank.
                if !db.schema().unreadable().is_empty() || db.schema().is_newer() {
                    let summary = db.schema().summary();
                    self.send(SourceMsg::Notice(format!("opencode's database: {summary}")));
                }
                self.db = Some(db);
                if self.said.take().is_some() || self.version.is_none() {
                    self.report(ServerState::Live);
                }
                true
            }
            Err(e) => {
                self.failed(e);
                false
            }
        }
    }

    fn list(&mut self, rows: Vec<SessionRow>) {
        for row in rows {
            let t = row.time_updated.unwrap_or(0);
            self.newest = self.newest.max(t);
            self.updated.insert(row.id.clone(), t);
            let worktree = row
                .project_id
                .as_ref()
                .and_then(|p| self.worktrees.get(p))
                .cloned();
            if let Some(env) = convert::session_event(&row, worktree.as_deref()) {
                self.send_event(env);
            }
        }
    }

    fn command(&mut self, cmd: LiveCommand) {
        match cmd {
            LiveCommand::Open(id) => self.open_session(id),
            LiveCommand::Older(id) => {
                self.older(id);
            }
            // Page after page (each its own answer), to the first message.
            LiveCommand::AllOlder(id) => while !self.older(id.clone()) && !self.closed {},
            // opencode's database is the archive's to import, not a
            // server's to page through.
            LiveCommand::ArchivePage { session, .. } => self.send(SourceMsg::ArchivePage {
                session_id: session,
                messages: Vec::new(),
                next: None,
                failed: None,
            }),
        }
    }

    fn open_session(&mut self, id: String) {
        if !self.open() {
            return;
        }
        let Some(db) = &self.db else { return };
        let page = db
            .message_page(&id, MESSAGE_PAGE, None)
            .and_then(|messages| {
                let ids: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
                let parts = db.parts_of(&ids)?;
                let todos = db.todos(&id)?;
                let total = db.message_count(&id).ok().flatten();
                Ok((messages, parts, todos, total))
            });
        let (messages, parts, todos, total) = match page {
            Ok(p) => p,
            Err(e) => return self.failed(e),
        };
        let opened = Opened::new(messages.first().map(message_cursor), &messages, &parts);
        let complete = messages.len() < MESSAGE_PAGE;
        self.opened.insert(id.clone(), opened);
        self.send_page(&id, &messages, &parts, false, complete);
        if let Some(total) = total {
            // The page gives no total: the turn view counts in the whole session.
            let msg = SourceMsg::MessageTotal {
                session_id: crate::model::store::fleet::scoped(&id, HISTORY_KEY),
                total,
            };
            if self.tx.blocking_send(msg).is_err() {
                self.closed = true;
            }
        }
        if !todos.is_empty()
            && let Some(env) = convert::todo_event(&id, &todos)
        {
            self.send_event(env);
        }
    }

    /// The page before the oldest loaded; true when no page comes after
    /// it (the first message was reached, or nothing could be read).
    fn older(&mut self, id: String) -> bool {
        let before = self.opened.get(&id).and_then(|o| o.oldest.clone());
        let read = match (&self.db, &before) {
            (Some(db), Some(before)) => db
                .message_page(&id, MESSAGE_PAGE, Some(before))
                .and_then(|m| {
                    let ids: Vec<&str> = m.iter().map(|m| m.id.as_str()).collect();
                    Ok((db.parts_of(&ids)?, m))
                })
                .map(Some),
            (Some(_), None) => Ok(None),
            (None, _) => Err(DbError::Other("the database is not open".into())),
        };
        match read {
            Ok(Some((parts, messages))) => {
                let complete = messages.len() < MESSAGE_PAGE;
                if let Some(o) = self.opened.get_mut(&id)
                    && let Some(first) = messages.first()
                {
                    o.oldest = Some(message_cursor(first));
                }
                self.send_page(&id, &messages, &parts, true, complete);
                complete
            }
            // Nothing loaded before, or nothing readable: an empty, final
            // answer (the app waits for exactly one).
            Ok(None) => {
                self.send_page(&id, &[], &[], true, true);
                true
            }
            Err(e) => {
                self.send_page(&id, &[], &[], true, false);
                self.failed(e);
                true
            }
        }
    }

    fn send_page(
        &mut self,
        id: &str,
        messages: &[ContentRow],
        parts: &[ContentRow],
        older: bool,
        complete: bool,
    ) {
        let (page, bad) = convert::page(messages, parts);
        for e in bad {
            self.send(SourceMsg::Record(Box::new(convert::bad_record(e))));
        }
        self.send(SourceMsg::Messages {
            session_id: id.to_string(),
            messages: page,
            older,
            complete,
        });
    }

    /// An opened session was written: its rows since the last read, as
    /// the events a server would have sent.
    fn follow(&mut self, id: &str) {
        let Some(since) = self.opened.get(id).map(|o| o.seen) else {
            return;
        };
        let Some(db) = &self.db else { return };
        let read = db.changed_since(id, since).and_then(|(m, p)| {
            let todos = db.todos(id)?;
            Ok((m, p, todos))
        });
        let (messages, parts, todos) = match read {
            Ok(r) => r,
            Err(e) => return self.failed(e),
        };
        let Some(o) = self.opened.get_mut(id) else {
            return;
        };
        // The edge's rows come back each time: only what is new goes on.
        let (messages, parts) = o.keep_new(&messages, &parts);
        if o.oldest.is_none() {
            o.oldest = messages.first().map(message_cursor);
        }
        for m in &messages {
            match convert::message(m) {
                Ok(info) => self.send_event(Envelope::new(Event::MessageUpdated(Box::new(info)))),
                Err(e) => self.send(SourceMsg::Record(Box::new(convert::bad_record(e)))),
            }
        }
        for p in &parts {
            match convert::part(p) {
                Ok(part) => self.send_event(Envelope::new(Event::PartUpdated(Box::new(part)))),
                Err(e) => self.send(SourceMsg::Record(Box::new(convert::bad_record(e)))),
            }
        }
        if let Some(env) = convert::todo_event(id, &todos) {
            self.send_event(env);
        }
    }
}

fn cursor(row: &SessionRow) -> SessionCursor {
    SessionCursor {
        time_updated: row.time_updated.unwrap_or(0),
        id: row.id.clone(),
    }
}

fn message_cursor(row: &ContentRow) -> MessageCursor {
    MessageCursor {
        time_created: row.time_created,
        id: row.id.clone(),
    }
}

fn newest_of(messages: &[ContentRow], parts: &[ContentRow]) -> i64 {
    messages
        .iter()
        .chain(parts)
        .map(|r| r.time_updated)
        .max()
        .unwrap_or(0)
}
