//! The background writer: what ocview receives live reaches the archive on
//! a thread of its own. The loop hands it copies of events through a
//! bounded queue without ever waiting (a full queue drops and counts, and
//! says so); the thread batches them, a transaction at a time. While a
//! PostgreSQL archive is away the batches go to the local spool
//! (`super::keeper`), so the thread keeps draining the queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::archive::collect::Collector;
use crate::archive::keeper::Keeper;
use crate::archive::place::Setting;
use crate::archive::prune::{self, Limits};
use crate::archive::rows::Origin;
use crate::model::{Envelope, MessageInfo, Part};

/// Items the queue holds before a send is dropped instead of waiting.
const QUEUE: usize = 16 * 1024;
/// Events written since memory was last handed back that make a burst:
/// once the queue is empty after one, SQLite's page cache (up to 32 MB)
/// and the freed heap go back. A stream's few events a second rarely make
/// one (handing back costs a stream CPU: pages read again).
const BURST: usize = 5000;
/// The same when loaded pages came since (a session opened, `g`): their
/// events come a few hundred at a time, the queue emptying between pages,
/// so the end of a long load is a burst too, not a cache held all day.
const LOADED_BURST: usize = 500;
/// A batch is written when it holds this many events or parts…
const BATCH: usize = 2000;
/// …or when its first item has waited this long. Until then the writer
/// sleeps rather than waking for each event (a receiver waiting on the
/// queue makes every send a wake-up on the loop's thread).
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
    tx: Option<Sender<Item>>,
    shared: Arc<Shared>,
    /// The writer's thread: woken when the queue fills and when the tap
    /// goes.
    writer: Option<Thread>,
    finished: Option<Receiver<()>>,
}

/// What the loop's end and the writer's thread share.
#[derive(Default)]
struct Shared {
    /// Set once the archive is off for this run (it failed, or is read-only):
    /// sends cost nothing then.
    off: AtomicBool,
    dropped: AtomicU64,
    /// Items sent and not yet taken: past half the queue the writer is
    /// woken to drain it before its batch is due.
    queued: AtomicUsize,
    /// How often the writer woke (a test counts them).
    wakes: AtomicU64,
    /// Why the archive is not written now (cannot be opened, read-only,
    /// a write failed, PostgreSQL away), until it is again.
    trouble: std::sync::Mutex<Option<String>>,
}

impl Shared {
    /// Note what is wrong now (`None`: nothing); whether that changed.
    fn set_trouble(&self, now: Option<String>) -> bool {
        let mut trouble = self.trouble.lock().unwrap_or_else(|e| e.into_inner());
        if *trouble == now {
            return false;
        }
        *trouble = now;
        true
    }
}

impl Tap {
    /// Why the archive is not written now, until it is again.
    pub fn trouble(&self) -> Option<String> {
        self.shared
            .trouble
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// An event as received (copied only if the archive is on and the
    /// event belongs to a session).
    pub fn event(&self, env: &Envelope) {
        if self.shared.off.load(Ordering::Relaxed) {
            return;
        }
        if let crate::model::Event::Server(report) = &env.event {
            // Which server a fleet member's sessions come from.
            if !report.key.is_empty() && !report.url.is_empty() {
                let url = crate::archive::origin::origin_url(&report.url);
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
                if let Ok(crate::source::decode::record::Decoded::Event(env)) = &record.item {
                    self.event(env);
                }
            }
            SourceMsg::Messages { messages, .. } => self.loaded(messages),
            _ => {}
        }
    }

    /// A session's messages, loaded over REST.
    pub fn loaded(&self, messages: &[(MessageInfo, Vec<Part>)]) {
        if !self.shared.off.load(Ordering::Relaxed) && !messages.is_empty() {
            self.send(Item::Loaded(messages.to_vec()));
        }
    }

    fn send(&self, item: Item) {
        let Some(tx) = &self.tx else { return };
        // Counted before it is sent: the writer may take it at once. The
        // count bounds the queue (a channel bounded by itself would set
        // aside room for every item up front: 3 MB held all the time).
        let queued = self.shared.queued.fetch_add(1, Ordering::Relaxed) + 1;
        if queued > QUEUE {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if tx.send(item).is_err() {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        if queued >= QUEUE / 2
            && let Some(writer) = &self.writer
        {
            writer.unpark();
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.tx = None;
        // The writer may sleep until its batch is due: it writes now.
        if let Some(writer) = &self.writer {
            writer.unpark();
        }
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
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let shared = Arc::new(Shared::default());
    let theirs = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("archive-writer".into())
        .spawn(move || {
            run(&setting, origin, limits, &rx, &theirs, &*say);
            theirs.off.store(true, Ordering::Relaxed);
            drop(rx);
            let _ = done_tx.send(());
        });
    let writer = match spawned {
        Ok(handle) => Some(handle.thread().clone()),
        Err(e) => {
            tracing::warn!("archive: no writer thread: {e}");
            shared.off.store(true, Ordering::Relaxed);
            None
        }
    };
    Tap {
        tx: Some(tx),
        shared,
        writer,
        finished: Some(done_rx),
    }
}

fn run(
    setting: &Setting,
    origin: Origin,
    limits: Limits,
    rx: &Receiver<Item>,
    shared: &Shared,
    say: &dyn Fn(String),
) {
    let mut keeper = match Keeper::open(setting, say) {
        Ok(Some(keeper)) => keeper,
        Ok(None) => return,
        Err(e) => {
            shared.set_trouble(Some(e.to_string()));
            say(format!("{e}: ocview goes on without it"));
            return;
        }
    };
    if let Some(why) = keeper.read_only() {
        shared.set_trouble(Some(format!("archive {}: {why}", keeper.place())));
        say(format!("archive {}: {why}", keeper.place()));
        return;
    }
    // The keeper's lines, held while the writer's state is brought up to
    // date, then said.
    let held = std::cell::RefCell::new(Vec::<String>::new());
    let pass_on = |held: &std::cell::RefCell<Vec<String>>| {
        for line in held.take() {
            say(line);
        }
    };
    let keep_bounded = |engine: &mut dyn crate::archive::Engine| {
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
    let mut since_burst = 0;
    let mut collector = Collector::live(origin);
    let mut first: Option<Instant> = None;
    let mut said_dropped = 0;
    // Loaded pages taken since memory was last handed back.
    let loaded = std::cell::Cell::new(false);
    let take = |item: Item, collector: &mut Collector| {
        shared.queued.fetch_sub(1, Ordering::Relaxed);
        match item {
            Item::Event(env) => collector.envelope(env),
            Item::Server(key, url) => collector.server(key, url),
            Item::Loaded(messages) => {
                loaded.set(true);
                collector.loaded(messages)
            }
        }
    };
    loop {
        shared.wakes.fetch_add(1, Ordering::Relaxed);
        // Wake for the batch, a streaming part's row, or PostgreSQL again.
        let mut until = first.map(|t| t + BATCH_WAIT);
        for at in [collector.next_due(), keeper.retry_at()]
            .into_iter()
            .flatten()
        {
            until = Some(until.map_or(at, |u| u.min(at)));
        }
        let mut closed = false;
        if first.is_none() {
            // Nothing waits: sleep on the queue until something comes.
            let wait = until.map_or(Duration::from_secs(3600), |u| {
                u.saturating_duration_since(Instant::now())
            });
            match rx.recv_timeout(wait) {
                Ok(item) => {
                    take(item, &mut collector);
                    first = Some(Instant::now());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => closed = true,
            }
        } else {
            // A batch is open: sleep until it is due (the tap wakes us when
            // the queue fills or it goes), then take all that came.
            if let Some(u) = until {
                std::thread::park_timeout(u.saturating_duration_since(Instant::now()));
            }
            loop {
                match rx.try_recv() {
                    Ok(item) => {
                        take(item, &mut collector);
                        if collector.pending() >= BATCH {
                            break;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        closed = true;
                        break;
                    }
                }
            }
        }
        let now = Instant::now();
        let due = first.is_some_and(|t| now >= t + BATCH_WAIT);
        let rows_due = collector.next_due().is_some_and(|at| now >= at);
        if closed || due || rows_due || collector.pending() >= BATCH {
            first = None;
            // Quitting: every streaming part's latest state too.
            let batch = if closed {
                collector.take()
            } else {
                collector.take_due(now)
            };
            // What the keeper says (PostgreSQL away) is passed on once the
            // mark is set below, so the frame it asks for shows the mark.
            let written = keeper.write(&batch, &|line| held.borrow_mut().push(line));
            if let Err(e) = written {
                shared.off.store(true, Ordering::Relaxed);
                shared.set_trouble(Some(e.to_string()));
                pass_on(&held);
                say(format!("{e}: ocview goes on without it"));
                return;
            }
            since_burst += batch.events.len();
            since_pruned += 1;
            if since_pruned >= PRUNE_EVERY
                && let Some(engine) = keeper.engine()
            {
                since_pruned = 0;
                keep_bounded(engine);
            }
            let lost = shared.dropped.load(Ordering::Relaxed);
            if lost > said_dropped {
                said_dropped = lost;
                say(format!(
                    "archive {}: {lost} events not kept (the writer fell behind)",
                    keeper.place()
                ));
            }
        }
        let burst = if loaded.get() { LOADED_BURST } else { BURST };
        if since_burst >= burst && shared.queued.load(Ordering::Relaxed) == 0 {
            // A burst written (a long session's pages): its cached pages and
            // the queue's freed copies go back, not kept for the day.
            since_burst = 0;
            loaded.set(false);
            if let Some(engine) = keeper.engine() {
                engine.release_memory();
            }
            crate::model::heap::give_back_freed();
        }
        keeper.retry(&|line| held.borrow_mut().push(line));
        // PostgreSQL away: what is written waits in the spool meanwhile.
        let away = keeper
            .retry_at()
            .is_some()
            .then(|| format!("archive {}: unreachable, spooling locally", keeper.place()));
        shared.set_trouble(away);
        pass_on(&held);
        if closed {
            keeper.finish(FINAL_WAIT / 2, say);
            return;
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
