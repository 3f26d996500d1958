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
use crate::archive::prune::Limits;
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
/// Idle this long, the writer takes a step of building the index again.
const REINDEX_IDLE: Duration = Duration::from_millis(300);
/// Rows a step of it indexes (tens of milliseconds).
const REINDEX_STEP: usize = 2000;
/// How long quitting waits for the last batch.
const FINAL_WAIT: Duration = Duration::from_secs(3);

enum Item {
    Event(Envelope),
    /// A fleet member's key and server URL (without credentials).
    Server(String, String),
    Loaded(Vec<(MessageInfo, Vec<Part>)>),
    /// Pin a session (by its own id), or unpin it if it is pinned.
    Pin(String),
    /// An answer to a prompt, for the record.
    Answer(Box<crate::archive::rows::AnswerRow>),
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
    /// The archive's pins after this writer last changed them, until the
    /// app takes them (`Tap::take_pins`), before it says so.
    pins: std::sync::Mutex<Option<Vec<String>>>,
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
    /// The archive's pinned sessions (bare ids), when this writer changed
    /// them since the last call.
    pub fn take_pins(&self) -> Option<Vec<String>> {
        self.shared
            .pins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

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

    /// Wait while more than `most` items wait for the writer: a command
    /// that feeds it faster than it writes holds no more than that.
    pub fn wait_below(&self, most: usize) {
        while self.shared.queued.load(Ordering::Relaxed) > most
            && !self.shared.off.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Write everything queued and wait for it, however long it takes
    /// (dropping waits a few seconds at most).
    pub fn finish(mut self) {
        self.tx = None;
        if let Some(writer) = &self.writer {
            writer.unpark();
        }
        if let Some(done) = self.finished.take() {
            let _ = done.recv();
        }
    }

    /// A page fetched for the archive alone (nothing else holds it).
    pub fn loaded_page(&self, messages: Vec<(MessageInfo, Vec<Part>)>) {
        if !self.shared.off.load(Ordering::Relaxed) && !messages.is_empty() {
            self.send(Item::Loaded(messages));
        }
    }

    /// An answer to a prompt, kept on record with the next batch.
    pub fn answer(&self, answer: crate::archive::rows::AnswerRow) {
        if !self.shared.off.load(Ordering::Relaxed) {
            self.send(Item::Answer(Box::new(answer)));
        }
    }

    /// Pin the session `id` (its own id), or unpin it if it is pinned;
    /// what came of it is said.
    pub fn toggle_pin(&self, id: &str) {
        self.send(Item::Pin(crate::model::store::fleet::bare(id).to_string()));
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
    let Some(mut writing) = Writing::open(setting, origin, limits, shared, say) else {
        return;
    };
    loop {
        shared.wakes.fetch_add(1, Ordering::Relaxed);
        let closed = writing.wait(rx);
        if !writing.write_if_due(closed) {
            return;
        }
        writing.settle();
        if closed {
            writing.keeper.finish(FINAL_WAIT / 2, say);
            return;
        }
    }
}

/// The writer thread's state from one wake-up to the next.
struct Writing<'a> {
    shared: &'a Shared,
    say: &'a dyn Fn(String),
    limits: Limits,
    keeper: Keeper,
    collector: Collector,
    /// When the open batch's first item came (`None`: no batch is open).
    first: Option<Instant>,
    /// Answers to prompts waiting for the batch.
    answers: Vec<crate::archive::rows::AnswerRow>,
    /// The server this writer's source streams from, if one.
    server: Option<String>,
    since_pruned: u32,
    since_burst: usize,
    said_dropped: u64,
    /// Loaded pages taken since memory was last handed back.
    loaded: bool,
    /// The keeper's lines, held while the writer's state is brought up to
    /// date, then said.
    held: std::cell::RefCell<Vec<String>>,
    /// The archive nearing its size cap was said (once a run).
    warned_full: bool,
    /// The word index may be being built again (`Engine::reindex`): a step
    /// of it each time the writer has been idle a while.
    reindexing: bool,
}

impl<'a> Writing<'a> {
    /// The archive opened (and pruned to its limits), or `None` when there
    /// is none to write: off, failed or read-only (said).
    fn open(
        setting: &Setting,
        origin: Origin,
        limits: Limits,
        shared: &'a Shared,
        say: &'a dyn Fn(String),
    ) -> Option<Writing<'a>> {
        let mut keeper = match Keeper::open(setting, say) {
            Ok(Some(keeper)) => keeper,
            Ok(None) => return None,
            Err(e) => {
                shared.set_trouble(Some(e.to_string()));
                say(format!("{e}: ocview goes on without it"));
                return None;
            }
        };
        if let Some(why) = keeper.read_only() {
            shared.set_trouble(Some(format!("archive {}: {why}", keeper.place())));
            say(format!("archive {}: {why}", keeper.place()));
            return None;
        }
        let warned_full = keeper
            .engine()
            .is_some_and(|engine| crate::archive::bounded::keep_within(engine, &limits, say, true));
        Some(Writing {
            shared,
            say,
            limits,
            keeper,
            server: origin.server.clone(),
            collector: Collector::live(origin),
            first: None,
            since_pruned: 0,
            since_burst: 0,
            said_dropped: 0,
            loaded: false,
            held: Default::default(),
            warned_full,
            reindexing: true,
            answers: Vec::new(),
        })
    }

    fn take(&mut self, item: Item) {
        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        match item {
            Item::Event(env) => self.collector.envelope(env),
            Item::Server(key, url) => self.collector.server(key, url),
            Item::Loaded(messages) => {
                self.loaded = true;
                self.collector.loaded(messages)
            }
            Item::Pin(id) => self.toggle_pin(&id),
            Item::Answer(mut a) => {
                // A one-server viewer's answers went to its server.
                if a.server.is_none() {
                    a.server = self.server.clone();
                }
                self.answers.push(*a)
            }
        }
    }

    fn toggle_pin(&mut self, id: &str) {
        let Some(engine) = self.keeper.engine() else {
            (self.say)("archive off: nothing pinned".into());
            return;
        };
        let host = crate::archive::origin::hostname();
        let shown = crate::model::wire::sanitize::line(id).into_owned();
        let result = engine.pins().and_then(|pins| {
            let pin = !pins.iter().any(|p| p == id);
            engine.set_pin(id, pin, &host).map(|_| pin)
        });
        // Before it is said: the app takes them when it hears.
        if let (Ok(_), Ok(now)) = (&result, engine.pins()) {
            *self.shared.pins.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        }
        (self.say)(match result {
            Ok(true) => format!("{shown} pinned: a prune never takes it (again: unpinned)"),
            Ok(false) => format!("{shown} unpinned: the archive's limits apply to it again"),
            Err(e) => format!("{e}: not pinned"),
        });
    }

    /// Sleep until there is something to do (the batch, a streaming part's
    /// row, PostgreSQL again), and take what came. Whether the queue is
    /// closed (ocview is quitting).
    fn wait(&mut self, rx: &Receiver<Item>) -> bool {
        let mut until = self.first.map(|t| t + BATCH_WAIT);
        for at in [self.collector.next_due(), self.keeper.retry_at()]
            .into_iter()
            .flatten()
        {
            until = Some(until.map_or(at, |u| u.min(at)));
        }
        if self.first.is_none() {
            // Nothing waits: sleep on the queue until something comes (or,
            // while the index is built again, until it has been idle a
            // while: a step of that).
            let mut wait = until.map_or(Duration::from_secs(3600), |u| {
                u.saturating_duration_since(Instant::now())
            });
            if self.reindexing {
                wait = wait.min(REINDEX_IDLE);
            }
            return match rx.recv_timeout(wait) {
                Ok(item) => {
                    self.take(item);
                    self.first = Some(Instant::now());
                    false
                }
                Err(RecvTimeoutError::Timeout) => {
                    if self.reindexing {
                        self.reindex_step();
                    }
                    false
                }
                Err(RecvTimeoutError::Disconnected) => true,
            };
        }
        // A batch is open: sleep until it is due (the tap wakes us when the
        // queue fills or it goes), then take all that came.
        if let Some(u) = until {
            std::thread::park_timeout(u.saturating_duration_since(Instant::now()));
        }
        loop {
            match rx.try_recv() {
                Ok(item) => {
                    self.take(item);
                    if self.collector.pending() >= BATCH {
                        return false;
                    }
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => return true,
            }
        }
    }

    /// A step of building the word index again (`Engine::reindex`).
    fn reindex_step(&mut self) {
        let Some(engine) = self.keeper.engine() else {
            self.reindexing = false;
            return;
        };
        match engine.reindex(REINDEX_STEP) {
            Ok(Some(_)) => {}
            Ok(None) => self.reindexing = false,
            Err(e) => {
                tracing::info!("archive: the word index not built again: {e}");
                self.reindexing = false;
            }
        }
    }

    /// Write the batch when it is due (or full, or ocview is quitting).
    /// False when the archive failed: the writer stops, having said why.
    fn write_if_due(&mut self, closed: bool) -> bool {
        let now = Instant::now();
        let due = self.first.is_some_and(|t| now >= t + BATCH_WAIT);
        let rows_due = self.collector.next_due().is_some_and(|at| now >= at);
        if !(closed || due || rows_due || self.collector.pending() >= BATCH) {
            return true;
        }
        self.first = None;
        // Quitting: every streaming part's latest state too.
        let mut batch = if closed {
            self.collector.take()
        } else {
            self.collector.take_due(now)
        };
        batch.answers = std::mem::take(&mut self.answers);
        // What the keeper says (PostgreSQL away) is passed on once the mark
        // is set below, so the frame it asks for shows the mark.
        let held = &self.held;
        let written = self
            .keeper
            .write(&batch, &|line| held.borrow_mut().push(line));
        if let Err(e) = written {
            self.shared.off.store(true, Ordering::Relaxed);
            self.shared.set_trouble(Some(e.to_string()));
            self.pass_on();
            (self.say)(format!("{e}: ocview goes on without it"));
            return false;
        }
        self.since_burst += batch.events.len();
        self.since_pruned += 1;
        if self.since_pruned >= PRUNE_EVERY
            && let Some(engine) = self.keeper.engine()
        {
            self.since_pruned = 0;
            self.warned_full |= crate::archive::bounded::keep_within(
                engine,
                &self.limits,
                self.say,
                !self.warned_full,
            );
        }
        let lost = self.shared.dropped.load(Ordering::Relaxed);
        if lost > self.said_dropped {
            self.said_dropped = lost;
            (self.say)(format!(
                "archive {}: {lost} events not kept (the writer fell behind)",
                self.keeper.place()
            ));
        }
        true
    }

    /// After a wake-up: memory handed back after a burst, PostgreSQL tried
    /// again, the mark set or cleared, and what the keeper said passed on.
    fn settle(&mut self) {
        let burst = if self.loaded { LOADED_BURST } else { BURST };
        if self.since_burst >= burst && self.shared.queued.load(Ordering::Relaxed) == 0 {
            // A burst written (a long session's pages): its cached pages and
            // the queue's freed copies go back, not kept for the day.
            self.since_burst = 0;
            self.loaded = false;
            if let Some(engine) = self.keeper.engine() {
                engine.release_memory();
            }
            crate::model::heap::give_back_freed();
        }
        let held = &self.held;
        self.keeper.retry(&|line| held.borrow_mut().push(line));
        // PostgreSQL away: what is written waits in the spool meanwhile.
        let away = self.keeper.retry_at().is_some().then(|| {
            format!(
                "archive {}: unreachable, spooling locally",
                self.keeper.place()
            )
        });
        self.shared.set_trouble(away);
        self.pass_on();
    }

    fn pass_on(&self) {
        for line in self.held.take() {
            (self.say)(line);
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
