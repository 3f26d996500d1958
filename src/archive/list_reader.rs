//! The archive as members of the list, beside the live servers and
//! opencode's database: a thread of its own sends every archived session,
//! newest first (the first page at once, the rest a page at a time in the
//! background), as `session.updated` events under a fleet key per origin
//! (`origin_key`: the machine and the server, or the file, it was first
//! seen at). Opening one sends its latest state from the archive's
//! snapshot, as the search's enter does, through the one reducer.
//!
//! New sessions: on PostgreSQL the writers NOTIFY (`postgres::notify`) and
//! this reader re-reads just the sessions it hears of; on SQLite (one
//! machine) it asks `PRAGMA data_version` every `SQLITE_POLL` and reads the
//! sessions updated since the newest it listed, one statement.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use tokio::sync::mpsc as tokio_mpsc;

use crate::archive::engine::Engine;
use crate::archive::listing::{Heard, ListCursor, ListedSession};
use crate::archive::place::Setting;
use crate::model::store::fleet::{self, ServerReport, ServerState};
use crate::model::{Envelope, Event};
use crate::source::decode::apply::{Record, decode_record};
use crate::source::list_member::{self, ListMember};
use crate::source::live::LiveCommand;
use crate::source::live::address;
use crate::source::live::fleet::scope_msg;
use crate::source::msg::SourceMsg;

/// Every archive origin's fleet key begins so.
pub const ARCHIVE_PREFIX: &str = "archive · ";

/// Sessions in the first page.
pub const FIRST_PAGE: u32 = 200;
/// Sessions per background page, and at most per catch-up.
pub const PAGE: u32 = 1_000;
/// How often SQLite is asked whether another process wrote.
pub const SQLITE_POLL: Duration = Duration::from_secs(2);
/// How often a failed archive is tried again.
const REOPEN: Duration = Duration::from_secs(5);

/// Whether a fleet key is an archive origin's.
pub fn is_archive_key(key: &str) -> bool {
    key.starts_with(ARCHIVE_PREFIX)
}

/// An archive origin's heading: its machine and server, or file.
pub fn origin_heading(key: &str) -> Option<&str> {
    key.strip_prefix(ARCHIVE_PREFIX)
}

/// The fleet key of an origin: `archive · host · server address`,
/// `archive · host · file` (its heading: the key without `archive · `).
/// Without `@`, which ends a scoped id.
pub fn origin_key(host: Option<&str>, server: Option<&str>, file: Option<&str>) -> String {
    let host = host.filter(|h| !h.is_empty()).unwrap_or("unknown machine");
    // A server by its address: the scheme says nothing here.
    let server = server.map(|s| {
        let s = s.split_once("://").map_or(s, |(_, rest)| rest);
        s.strip_suffix('/').unwrap_or(s)
    });
    let place = server.or(file).filter(|p| !p.is_empty());
    let key = match place {
        Some(p) => format!("{ARCHIVE_PREFIX}{host} · {p}"),
        None => format!("{ARCHIVE_PREFIX}{host}"),
    };
    crate::model::wire::sanitize::line(&key.replace('@', "＠")).into_owned()
}

/// The archived sessions a viewer of some servers lists: those servers'
/// own (the same address; for a loopback address, on this machine too),
/// not every archived server's and file's.
#[derive(Debug, Clone)]
pub struct Scope {
    servers: HashSet<String>,
    machine: String,
}

impl Scope {
    /// The servers at `urls`, as this machine reaches them.
    pub fn of(urls: &[&str]) -> Scope {
        Scope {
            servers: urls.iter().map(|u| address::canonical(u)).collect(),
            machine: crate::archive::origin::hostname(),
        }
    }

    fn admits(&self, row: &ListedSession) -> bool {
        let Some(server) = row.server.as_deref() else {
            return false;
        };
        let server = address::canonical(server);
        self.servers.contains(&server)
            && (!address::is_loopback(&server)
                || row.host.as_deref().is_none_or(|h| h == self.machine))
    }
}

/// What the reader waits for.
pub enum Input {
    /// The app's page requests (scoped ids).
    Command(LiveCommand),
    Heard(Heard),
}

/// The app's end.
#[derive(Clone)]
pub struct ArchiveListHandle {
    tx: Sender<Input>,
}

impl ArchiveListHandle {
    /// Pass a request on; `false` when the reader has stopped.
    pub fn send(&self, cmd: LiveCommand) -> bool {
        self.tx.send(Input::Command(cmd)).is_ok()
    }
}

/// Start listing the archive at `setting` (with `scope`, only those
/// servers' sessions); what is read arrives on `tx`.
pub fn spawn(
    setting: Setting,
    scope: Option<Scope>,
    tx: tokio_mpsc::Sender<SourceMsg>,
) -> ArchiveListHandle {
    let (input, rx) = channel();
    let handle = ArchiveListHandle { tx: input.clone() };
    let spawned = std::thread::Builder::new()
        .name("archive-list".into())
        .spawn(move || {
            let mut reader = Reader::new(setting, tx, input);
            reader.scope = scope;
            list_member::run(&mut reader, &rx)
        });
    if let Err(e) = spawned {
        tracing::warn!("archive list: no thread: {e}");
    }
    handle
}

struct Reader {
    setting: Setting,
    /// Only these servers' sessions (`None`: all).
    scope: Option<Scope>,
    tx: tokio_mpsc::Sender<SourceMsg>,
    /// For the listener, once the archive is open.
    input: Sender<Input>,
    engine: Option<Box<dyn Engine>>,
    next_page: Option<ListCursor>,
    listed_all: bool,
    /// The newest `updated` listed.
    newest: i64,
    mark: Option<i64>,
    /// Origins already reported as members of the fleet.
    reported: HashSet<String>,
    /// Opened sessions (bare id): a change sends what is new of them.
    opened: HashMap<String, Opened>,
    /// What each listed session's row was when sent (key and id →
    /// fingerprint): a row heard of again unchanged is not sent again.
    listed_rows: HashMap<(String, String), u64>,
    /// Something was written that is not listed yet (the listener came
    /// back, or a read failed): read what is new once the archive answers.
    behind: bool,
    said: Option<String>,
    said_read_only: bool,
    listening: bool,
    closed: bool,
    /// The pins last sent.
    pins: Option<Vec<String>>,
}

impl ListMember for Reader {
    type Input = Input;

    fn closed(&self) -> bool {
        self.closed
    }

    fn listing(&self) -> bool {
        self.engine.is_some() && !self.listed_all
    }

    fn every(&self) -> Duration {
        if self.engine.is_none() {
            REOPEN
        } else if self.mark.is_some() {
            SQLITE_POLL
        } else {
            // PostgreSQL: the listener says when.
            Duration::from_secs(3600)
        }
    }

    /// The first page, or (SQLite) what was written since the last look.
    fn look(&mut self) {
        if !self.open() {
            return;
        }
        let Some(engine) = self.engine.as_mut() else {
            return;
        };
        let mark = match engine.change_mark() {
            Ok(m) => m,
            Err(e) => return self.failed(e.to_string()),
        };
        let first = self.newest == i64::MIN && self.next_page.is_none() && !self.listed_all;
        if !first && !self.behind && (mark.is_none() || mark == self.mark) {
            return;
        }
        self.mark = mark;
        if first {
            match engine.list_page(None, FIRST_PAGE) {
                Ok(rows) => {
                    self.listed_all = rows.len() < FIRST_PAGE as usize;
                    self.next_page = rows.last().map(ListedSession::cursor);
                    self.list(rows);
                    self.read_pins();
                }
                Err(e) => self.failed(e.to_string()),
            }
        } else {
            self.catch_up();
        }
    }

    fn list_more(&mut self) {
        let Some(engine) = self.engine.as_mut() else {
            return;
        };
        let Some(after) = self.next_page.clone() else {
            self.listed_all = true;
            return;
        };
        match engine.list_page(Some(&after), PAGE) {
            Ok(rows) => {
                self.listed_all = rows.len() < PAGE as usize;
                self.next_page = rows.last().map(ListedSession::cursor);
                self.list(rows);
            }
            Err(e) => self.failed(e.to_string()),
        }
    }

    fn input(&mut self, input: Input) {
        match input {
            Input::Command(cmd) => self.command(cmd),
            Input::Heard(heard) => self.heard(heard),
        }
    }
}

impl Reader {
    fn new(setting: Setting, tx: tokio_mpsc::Sender<SourceMsg>, input: Sender<Input>) -> Reader {
        Reader {
            setting,
            scope: None,
            tx,
            input,
            engine: None,
            next_page: None,
            listed_all: false,
            newest: i64::MIN,
            mark: None,
            reported: HashSet::new(),
            opened: HashMap::new(),
            listed_rows: HashMap::new(),
            behind: false,
            said: None,
            said_read_only: false,
            listening: false,
            closed: false,
            // As the app starts: none (an archive without pins says nothing).
            pins: Some(Vec::new()),
        }
    }

    fn send(&mut self, msg: SourceMsg) {
        if self.tx.blocking_send(msg).is_err() {
            self.closed = true;
        }
    }

    /// Open the archive when it is not; say why once when it cannot be.
    fn open(&mut self) -> bool {
        if self.engine.is_some() {
            return true;
        }
        match self.setting.open() {
            Ok(Some(engine)) => {
                if let Some(why) = engine.read_only()
                    && !self.said_read_only
                {
                    self.said_read_only = true;
                    let why = crate::model::wire::sanitize::line(why).into_owned();
                    self.send(SourceMsg::Notice(format!("archive: read-only ({why})")));
                }
                if self.said.take().is_some() {
                    self.send(SourceMsg::ArchiveTrouble(None));
                }
                self.engine = Some(engine);
                if !self.listening {
                    let input = self.input.clone();
                    self.listening = self.setting.listen(Box::new(move |heard| {
                        input.send(Input::Heard(heard)).is_ok()
                    }));
                }
                true
            }
            Ok(None) => {
                self.closed = true;
                false
            }
            Err(e) => {
                self.failed(e.to_string());
                false
            }
        }
    }

    fn failed(&mut self, why: String) {
        self.engine = None;
        if self.said.as_deref() != Some(why.as_str()) {
            tracing::info!("archive list: {why}");
            self.said = Some(why.clone());
            self.send(SourceMsg::ArchiveTrouble(Some(why.clone())));
            self.send(SourceMsg::Notice(why));
        }
    }

    /// Sessions updated since the newest listed. A connection that broke
    /// (PostgreSQL restarted) is made again once before it is said.
    fn catch_up(&mut self) {
        self.behind = true;
        for attempt in 0..2 {
            if !self.open() {
                return;
            }
            let Some(engine) = self.engine.as_mut() else {
                return;
            };
            match engine.list_since(self.newest, PAGE) {
                Ok(rows) => {
                    self.behind = false;
                    self.list(rows);
                    return self.read_pins();
                }
                Err(e) if attempt == 0 => {
                    tracing::info!("archive list: {e}; connecting again");
                    self.engine = None;
                }
                Err(e) => self.failed(e.to_string()),
            }
        }
    }

    fn heard(&mut self, heard: Heard) {
        if !self.open() {
            return;
        }
        match heard {
            Heard::Session(id) => {
                let Some(engine) = self.engine.as_mut() else {
                    return;
                };
                match engine.listed(&id) {
                    Ok(Some(row)) => self.list(vec![row]),
                    Ok(None) => {}
                    // Read with what else is new (a broken connection is
                    // made again there).
                    Err(e) => {
                        tracing::info!("archive list: {e}");
                        self.catch_up();
                    }
                }
            }
            // Listening again (what was written meanwhile was announced to
            // no one), or too many to name: what is new since, once.
            Heard::Connected | Heard::Many => {
                if self.newest > i64::MIN {
                    self.catch_up();
                }
            }
            Heard::Lost(why) => tracing::info!("archive list: not listening: {why}"),
        }
    }

    /// Send listed rows (not one already sent as it is), and what is new
    /// of any of them that is open.
    fn list(&mut self, rows: Vec<ListedSession>) {
        let mut open = Vec::new();
        for row in rows {
            self.newest = self.newest.max(row.updated);
            if self.scope.as_ref().is_some_and(|s| !s.admits(&row)) {
                continue;
            }
            let key = origin_key(
                row.host.as_deref(),
                row.server.as_deref(),
                row.file.as_deref(),
            );
            if self.reported.insert(key.clone()) {
                let url = row
                    .server
                    .as_deref()
                    .or(row.file.as_deref())
                    .or(row.host.as_deref())
                    .unwrap_or_default()
                    .to_string();
                self.report(&key, &url);
            }
            if self.opened.contains_key(&row.id) {
                open.push(row.id.clone());
            }
            let print = fingerprint(&row.raw);
            if self.listed_rows.insert((key.clone(), row.id), print) == Some(print) {
                continue;
            }
            let line = crate::archive::snapshot::session_event(&row.raw);
            self.send_line(&line, &key);
        }
        for id in open {
            self.send_new(&id);
        }
    }

    /// The archive's pins, sent when they changed since last sent (a pin
    /// is no session's write: read whenever anything new is).
    fn read_pins(&mut self) {
        let Some(engine) = self.engine.as_mut() else {
            return;
        };
        match engine.pins() {
            Ok(pins) if self.pins.as_ref() != Some(&pins) => {
                self.pins = Some(pins.clone());
                self.send(SourceMsg::ArchivePins(pins));
            }
            Ok(_) => {}
            Err(e) => tracing::info!("archive list: pins: {e}"),
        }
    }

    fn report(&mut self, key: &str, url: &str) {
        let url = crate::model::wire::sanitize::line(url).into_owned();
        let report = ServerReport {
            key: key.to_string(),
            url,
            directory: None,
            state: ServerState::Live,
        };
        let env = Envelope::new(Event::Server(Box::new(report)));
        let record = Record {
            line: 0,
            repaired: None,
            item: Ok(crate::source::decode::record::Decoded::Event(env)),
        };
        self.send(SourceMsg::Record(Box::new(record)));
    }

    /// One bus event's JSON, scoped by `key`, through the reducer.
    fn send_line(&mut self, line: &str, key: &str) {
        let record = decode_record(line.as_bytes(), 0, true);
        self.send(scope_msg(SourceMsg::Record(Box::new(record)), key));
    }

    fn command(&mut self, cmd: LiveCommand) {
        match cmd {
            LiveCommand::Open(id) => {
                let key = fleet::server_of(&id).unwrap_or_default().to_string();
                let bare = fleet::bare(&id).to_string();
                // Opened (again): all of it, whatever was sent before.
                let opened = Opened {
                    key,
                    sent: HashSet::new(),
                };
                self.opened.insert(bare.clone(), opened);
                if self.send_new(&bare) {
                    self.send(SourceMsg::Messages {
                        session_id: id,
                        messages: Vec::new(),
                        older: false,
                        complete: true,
                    });
                }
            }
            // Kept already: nothing to fetch for the archive.
            LiveCommand::ArchivePage { session, .. } => self.send(SourceMsg::ArchivePage {
                session_id: session,
                messages: Vec::new(),
                next: None,
                failed: None,
            }),
            // The whole session came with its opening: no older page.
            LiveCommand::Older(id) | LiveCommand::AllOlder(id) => {
                self.send(SourceMsg::Messages {
                    session_id: id,
                    messages: Vec::new(),
                    older: true,
                    complete: true,
                });
            }
        }
    }

    /// What an open session's latest state in the archive holds that was
    /// not sent yet (all of it, when just opened): each line says a whole
    /// session, message or part, so a changed one is sent whole and an
    /// unchanged one not at all. Whether the archive answered.
    fn send_new(&mut self, bare: &str) -> bool {
        if !self.open() {
            return false;
        }
        let Some(engine) = self.engine.as_mut() else {
            return false;
        };
        let lines = match engine.snapshot(bare) {
            Ok(lines) => lines,
            Err(e) => {
                self.failed(e.to_string());
                return false;
            }
        };
        let Some(opened) = self.opened.get_mut(bare) else {
            return false;
        };
        let key = opened.key.clone();
        let new: Vec<String> = lines
            .into_iter()
            .filter(|line| opened.sent.insert(fingerprint(line)))
            .collect();
        for line in &new {
            self.send_line(line, &key);
        }
        true
    }
}

/// An open session: its origin's key, and what of it was sent.
struct Opened {
    key: String,
    /// The fingerprints of the lines sent.
    sent: HashSet<u64>,
}

/// A line's fingerprint, to tell a line already sent.
fn fingerprint(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_name_the_machine_and_the_server_or_file() {
        assert_eq!(
            origin_key(Some("box"), Some("http://10.0.0.5:4096"), None),
            "archive · box · 10.0.0.5:4096"
        );
        assert_eq!(
            origin_key(Some("box"), None, Some("/r/me@x.jsonl")),
            "archive · box · /r/me＠x.jsonl"
        );
        assert_eq!(origin_key(None, None, None), "archive · unknown machine");
        let key = origin_key(Some("b@x"), None, None);
        assert_eq!(
            fleet::server_of(&fleet::scoped("ses_1", &key)),
            Some(key.as_str())
        );
    }
}
