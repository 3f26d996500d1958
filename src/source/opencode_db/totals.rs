//! A live session's message count from the local database, for the turn
//! view's "msg 5,691 of 5,700 (100 loaded)": the server's pages give no
//! total. A thread of its own opens the database (lazily, and again after
//! a failure), counts the watched session's messages when it is chosen and
//! then, while opencode commits, at most every `REFRESH`, and sends the
//! count to the app as a source message when it changed. The session must
//! be in this database (its id is looked up, never assumed). In a fleet,
//! only sessions of the servers on this machine are looked up, by the id
//! their server knows them by.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use tokio::sync::mpsc as tokio_mpsc;

use super::Db;
use crate::model::store::fleet;
use crate::source::msg::SourceMsg;

/// At most this often a watched session is counted again.
pub const REFRESH: Duration = Duration::from_secs(2);

/// The app's side: the counts received, and the reader to tell which
/// session is on screen.
#[derive(Debug, Default)]
pub struct MessageTotals {
    counts: HashMap<String, u64>,
    reader: Option<Sender<String>>,
    watching: Option<String>,
    /// In a fleet, the keys of the servers on this machine (`None`: one
    /// server, on this machine).
    local_servers: Option<HashSet<String>>,
}

impl MessageTotals {
    /// Start the reader thread on the database at `path`; counts arrive as
    /// `SourceMsg::MessageTotal` on `tx`.
    pub fn spawn(path: PathBuf, tx: tokio_mpsc::Sender<SourceMsg>) -> MessageTotals {
        let (watch_tx, watch_rx) = channel();
        let spawned = std::thread::Builder::new()
            .name("ocview-db-totals".into())
            .spawn(move || run(path, watch_rx, tx));
        if let Err(e) = spawned {
            tracing::warn!("message totals: no thread: {e}");
            return MessageTotals::default();
        }
        MessageTotals {
            reader: Some(watch_tx),
            ..Default::default()
        }
    }

    /// The same for a fleet: only sessions of the servers `local` (their
    /// keys) are counted; the others may be in no database here.
    pub fn spawn_for_fleet(
        path: PathBuf,
        tx: tokio_mpsc::Sender<SourceMsg>,
        local: HashSet<String>,
    ) -> MessageTotals {
        MessageTotals {
            local_servers: Some(local),
            ..MessageTotals::spawn(path, tx)
        }
    }

    /// The session on screen (called each frame; sends only on a change,
    /// never waits).
    pub fn watch(&mut self, session: &str) {
        if self.watching.as_deref() == Some(session) {
            return;
        }
        self.watching = Some(session.to_string());
        if let Some(local) = &self.local_servers
            && !fleet::server_of(session).is_some_and(|key| local.contains(key))
        {
            return;
        }
        if let Some(reader) = &self.reader
            && reader.send(session.to_string()).is_err()
        {
            self.reader = None;
        }
    }

    pub fn set(&mut self, session: String, total: u64) {
        self.counts.insert(session, total);
    }

    /// The session's message count in the database, once known.
    pub fn total(&self, session: &str) -> Option<u64> {
        self.counts.get(session).copied()
    }
}

fn run(path: PathBuf, watch: Receiver<String>, tx: tokio_mpsc::Sender<SourceMsg>) {
    let mut db: Option<Db> = None;
    let mut session: Option<String> = None;
    let mut counted: Option<(String, i64)> = None;
    let mut sent: HashMap<String, u64> = HashMap::new();
    let mut said_why = false;
    loop {
        match watch.recv_timeout(REFRESH) {
            Ok(id) => session = Some(id),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        // Only the latest choice matters.
        while let Ok(id) = watch.try_recv() {
            session = Some(id);
        }
        let Some(id) = session.clone() else { continue };
        if db.is_none() {
            match Db::open(&path) {
                Ok(opened) => db = Some(opened),
                Err(e) => {
                    if !said_why {
                        tracing::info!("message totals: {e}");
                        said_why = true;
                    }
                    continue;
                }
            }
        }
        let Some(open) = &db else { continue };
        // Nothing committed since the last count of this session: no read.
        let version = match open.data_version() {
            Ok(v) => v,
            Err(e) => {
                tracing::info!("message totals: {e}");
                db = None;
                continue;
            }
        };
        if counted.as_ref() == Some(&(id.clone(), version)) {
            continue;
        }
        // A fleet's id names its server too; the database knows it bare.
        match open.message_count(fleet::bare(&id)) {
            Ok(Some(n)) => {
                counted = Some((id.clone(), version));
                if sent.get(&id) != Some(&n) {
                    sent.insert(id.clone(), n);
                    let msg = SourceMsg::MessageTotal {
                        session_id: id,
                        total: n,
                    };
                    if tx.blocking_send(msg).is_err() {
                        return;
                    }
                }
            }
            // Not this machine's session (or not yet written): ask again
            // next time something is committed.
            Ok(None) => counted = Some((id, version)),
            Err(e) => {
                tracing::info!("message totals: {e}");
                db = None;
            }
        }
    }
}
