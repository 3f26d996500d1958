//! The background writer: what ocview receives live reaches the archive on
//! a thread of its own. The loop hands it copies of events through a
//! bounded queue without ever waiting (a full queue drops and counts, and
//! says so); the thread batches them, a transaction at a time. While a
//! PostgreSQL archive is away the batches go to the local spool
//! (`super::keeper`), so the thread keeps draining the queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use super::collect::Collector;
use super::keeper::Keeper;
use super::place::Setting;
use super::prune::{self, Limits};
use super::rows::Origin;
use crate::model::{Envelope, MessageInfo, Part};

/// Items the queue holds before a send is dropped instead of waiting.
const QUEUE: usize = 16 * 1024;
/// A batch is written when it holds this many events or parts…
const BATCH: usize = 2000;
/// …or when its first item has waited this long.
const BATCH_WAIT: Duration = Duration::from_millis(250);
/// Batches written between two checks of the archive's limits.
const PRUNE_EVERY: u32 = 200;
/// How long quitting waits for the last batch.
const FINAL_WAIT: Duration = Duration::from_secs(3);

enum Item {
    Event(Envelope),
    /// A fleet member's key and server URL (without credentials).
    Server(String, String),
    Loaded(Vec<(MessageInfo, Vec<Part>)>),
}

/// The loop's end of the writer. Dropping it writes what is queued (waiting
/// a few seconds at most).
pub struct Tap {
    tx: Option<SyncSender<Item>>,
    /// Set once the archive is off for this run (it failed, or is read-only):
    /// sends cost nothing then.
    off: Arc<AtomicBool>,
    dropped: Arc<AtomicU64>,
    finished: Option<Receiver<()>>,
}

impl Tap {
    /// An event as received (copied only if the archive is on and the
    /// event belongs to a session).
    pub fn event(&self, env: &Envelope) {
        if self.off.load(Ordering::Relaxed) {
            return;
        }
        if let crate::model::Event::Server(report) = &env.event {
            // Which server a fleet member's sessions come from.
            if !report.key.is_empty() && !report.url.is_empty() {
                let url = super::place::origin_url(&report.url);
                self.send(Item::Server(report.key.clone(), url));
            }
            return;
        }
        let Some(session) = env.event.session() else {
            return;
        };
        // opencode's database goes in whole through its own importer
        // (`import_db`), with its ids as the database has them.
        let history = crate::source::opencode_db::history::HISTORY_KEY;
        if crate::model::store::fleet::server_of(session) != Some(history) {
            self.send(Item::Event(env.clone()));
        }
    }

    /// What a source without a viewer sends (`ocview record`): its events
    /// and the pages it loaded.
    pub fn source_msg(&self, msg: &crate::source::msg::SourceMsg) {
        use crate::source::msg::SourceMsg;
        match msg {
            SourceMsg::Record(record) => {
                if let Ok(crate::source::record::Decoded::Event(env)) = &record.item {
                    self.event(env);
                }
            }
            SourceMsg::Messages { messages, .. } => self.loaded(messages),
            _ => {}
        }
    }

    /// A session's messages, loaded over REST.
    pub fn loaded(&self, messages: &[(MessageInfo, Vec<Part>)]) {
        if !self.off.load(Ordering::Relaxed) && !messages.is_empty() {
            self.send(Item::Loaded(messages.to_vec()));
        }
    }

    fn send(&self, item: Item) {
        if let Some(tx) = &self.tx
            && let Err(TrySendError::Full(_)) = tx.try_send(item)
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(done) = self.finished.take() {
            let _ = done.recv_timeout(FINAL_WAIT);
        }
    }
}

/// Start the writer for `setting`, with no limits to keep; `say` tells the
/// person, in one line, when the archive cannot be used or falls behind
/// (from the writer's thread).
pub fn spawn(setting: Setting, origin: Origin, say: Box<dyn Fn(String) + Send>) -> Tap {
    spawn_bounded(setting, origin, Limits::NONE, say)
}

/// As `spawn`, keeping the archive within `limits`: checked when the
/// writer starts and every `PRUNE_EVERY` batches, on the writer's thread;
/// `say` tells when sessions were pruned.
pub fn spawn_bounded(
    setting: Setting,
    origin: Origin,
    limits: Limits,
    say: Box<dyn Fn(String) + Send>,
) -> Tap {
    let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let off = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicU64::new(0));
    let (off2, dropped2) = (off.clone(), dropped.clone());
    let spawned = std::thread::Builder::new()
        .name("archive-writer".into())
        .spawn(move || {
            run(&setting, origin, limits, &rx, &off2, &dropped2, &*say);
            off2.store(true, Ordering::Relaxed);
            drop(rx);
            let _ = done_tx.send(());
        });
    if let Err(e) = spawned {
        tracing::warn!("archive: no writer thread: {e}");
        off.store(true, Ordering::Relaxed);
    }
    Tap {
        tx: Some(tx),
        off,
        dropped,
        finished: Some(done_rx),
    }
}

fn run(
    setting: &Setting,
    origin: Origin,
    limits: Limits,
    rx: &Receiver<Item>,
    off: &AtomicBool,
    dropped: &AtomicU64,
    say: &dyn Fn(String),
) {
    let mut keeper = match Keeper::open(setting, say) {
        Ok(Some(keeper)) => keeper,
        Ok(None) => return,
        Err(e) => {
            say(format!("{e}: ocview goes on without it"));
            return;
        }
    };
    if let Some(why) = keeper.read_only() {
        say(format!("archive {}: {why}", keeper.place()));
        return;
    }
    let keep_bounded = |engine: &mut dyn super::Engine| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        match prune::prune(engine, &limits, now) {
            Ok(pruned) => {
                if let Some(line) = pruned.summary(&limits) {
                    say(format!("archive: {line}"));
                }
            }
            // Not a reason to stop keeping what comes.
            Err(e) => say(format!("{e}: not pruned")),
        }
    };
    if let Some(engine) = keeper.engine() {
        keep_bounded(engine);
    }
    let mut since_pruned = 0;
    let mut collector = Collector::new(origin);
    let mut first: Option<Instant> = None;
    let mut said_dropped = 0;
    loop {
        let mut wait = first.map_or(Duration::from_secs(3600), |t| {
            BATCH_WAIT.saturating_sub(t.elapsed())
        });
        // While PostgreSQL is away, wake to try it again.
        if let Some(at) = keeper.retry_at() {
            wait = wait.min(at.saturating_duration_since(Instant::now()));
        }
        let closed = match rx.recv_timeout(wait) {
            Ok(item) => {
                match item {
                    Item::Event(env) => collector.envelope(env),
                    Item::Server(key, url) => collector.server(key, url),
                    Item::Loaded(messages) => collector.loaded(messages),
                }
                first.get_or_insert_with(Instant::now);
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        let due = first.is_some_and(|t| t.elapsed() >= BATCH_WAIT);
        if closed || due || collector.pending() >= BATCH {
            first = None;
            let batch = collector.take();
            if let Err(e) = keeper.write(&batch, say) {
                off.store(true, Ordering::Relaxed);
                say(format!("{e}: ocview goes on without it"));
                return;
            }
            since_pruned += 1;
            if since_pruned >= PRUNE_EVERY
                && let Some(engine) = keeper.engine()
            {
                since_pruned = 0;
                keep_bounded(engine);
            }
            let lost = dropped.load(Ordering::Relaxed);
            if lost > said_dropped {
                said_dropped = lost;
                say(format!(
                    "archive {}: {lost} events not kept (the writer fell behind)",
                    keeper.place()
                ));
            }
        }
        keeper.retry(say);
        if closed {
            keeper.finish(FINAL_WAIT / 2, say);
            return;
        }
    }
}
