//! Starting the full-screen viewer on a source, and always restoring the
//! terminal afterwards.

pub mod allocator;
pub mod archive_list;
pub mod fleet;
pub mod history;
pub mod logging;
pub mod message_totals;

use std::io::BufRead;

use crossterm::event::EventStream;
use tokio::sync::mpsc;

use crate::app::run::{Exit, run};
use crate::app::{App, terminal};
use crate::source::live::{self, ApiError, Client, LiveOptions};
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::recording::player::{self, Pace};
use crate::source::timeline::{Backing, IndexOptions, Timeline};

/// What the session ended with, for the exit code.
pub enum Outcome {
    Done,
    /// A signal or a panic ended it; the code to exit with.
    Interrupted(u8),
}

/// Play `input` into the viewer until the user quits.
pub async fn replay_tui<R: BufRead + Send + 'static>(
    app: App,
    input: R,
    pace: Pace,
) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    player::spawn(input, pace, tx);
    tui(app, rx).await
}

/// A recording the player can index: a file, or bytes in memory (the demo).
pub enum Recording {
    File(std::path::PathBuf),
    Bytes(bytes::Bytes),
}

/// Index a recording off the loop, then play it in the viewer with seeking.
/// A recording that cannot be indexed (SSE text, a whole document) streams
/// through `replay_tui`'s path instead, paced by `pace`.
pub async fn play_tui(
    mut app: App,
    recording: Recording,
    options: IndexOptions,
    pace: Pace,
) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    app.source.state = SourceState::Indexing;
    tokio::task::spawn_blocking(move || {
        let backing = match &recording {
            Recording::File(path) => std::fs::File::open(path).map(Backing::File),
            Recording::Bytes(b) => Ok(Backing::Memory(b.clone())),
        };
        match backing.and_then(|b| Timeline::index(b, options)) {
            Ok(opened) => {
                let empty = opened.stats.events == 0;
                let _ = tx.blocking_send(SourceMsg::Indexed(Box::new(opened)));
                if empty {
                    // The label names the file; the timeline leaves little room.
                    let text = "empty: no events".to_string();
                    let _ = tx.blocking_send(SourceMsg::Notice(text));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                let input: Box<dyn BufRead + Send> = match recording {
                    Recording::File(path) => match crate::source::open_input(&path) {
                        Ok(input) => input,
                        Err(e) => {
                            let _ = tx.blocking_send(SourceMsg::State(SourceState::Failed(
                                e.to_string(),
                            )));
                            return;
                        }
                    },
                    Recording::Bytes(b) => Box::new(std::io::Cursor::new(b)),
                };
                player::spawn(input, pace, tx);
            }
            Err(e) => {
                let _ = tx.blocking_send(SourceMsg::State(SourceState::Failed(format!(
                    "cannot index the recording: {e}"
                ))));
            }
        }
    });
    tui(app, rx).await
}

/// Watch a live server in the viewer until the user quits.
pub async fn attach_tui(
    mut app: App,
    client: Client,
    options: LiveOptions,
    read_only: bool,
    record: Option<&std::path::Path>,
) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    if !read_only {
        app.replies = Some(live::reply::spawn(client.clone(), tx.clone()));
    }
    let raw = match record {
        Some(path) => {
            let version = server_version(client.health().await.ok().as_ref());
            let recording = start_recording(&client, path, version.as_deref())?;
            Some(recording.feed_while_viewing(&mut app, &tx))
        }
        None => None,
    };
    app.message_totals = message_totals::for_server(client.base(), tx.clone());
    // The archive's sessions after the server's, as in a fleet: the
    // server's own then sit under its address.
    let scope = crate::archive::list_reader::Scope::of(&[client.base()]);
    let archive = archive_list::spawn(&mut app, Some(scope), tx.clone());
    let heading = archive_list::live_heading(client.base());
    let live = live::spawn(client, options, tx, raw);
    app.live = Some(match archive {
        None => live,
        Some(archive) => {
            app.panes.list.live_heading = Some(heading);
            archive_list::route(Some(live), None, Some(archive))
        }
    });
    tui(app, rx).await
}

pub(crate) async fn tui(
    mut app: App,
    rx: mpsc::Receiver<crate::source::msg::SourceMsg>,
) -> anyhow::Result<Outcome> {
    let depth = crate::app::terminal::color_depth::ColorDepth::from_env(app.config.colors);
    app.adapt_to_terminal(None, depth);
    let mut term = terminal::enter(app.config.mouse, depth)?;
    // The first frame goes out before the terminal is asked for its
    // background: a terminal that never answers would hold it for the
    // whole timeout. The answer, if it changes the variant, repaints.
    if let Err(e) = crate::app::run::draw_frame(&mut app, &mut term) {
        terminal::restore();
        // As below: a dropped terminal would write to a terminal that failed.
        std::mem::forget(term);
        tracing::warn!("terminal error: {e}");
        return Ok(Outcome::Interrupted(1));
    }
    tracing::info!("first frame drawn");
    if app.look.wants_terminal_mode() {
        // Asked before the loop reads input, so the answer is not read as
        // a key.
        let background = crate::app::look::terminal_mode();
        app.adapt_to_terminal(background, depth);
    }
    crate::app::terminal::job_control::watch(app.verbs.done_sender());
    spawn_test_panic();
    // Why the loop was told to stop: the exit code follows from it.
    let stopped_by = std::cell::Cell::new(1u8);
    let shutdown = async {
        let code = tokio::select! {
            signal = terminal::termination_signal() => 128u8.saturating_add(signal as u8),
            _ = terminal::wait_for_panic() => 101,
            _ = terminal::terminal_gone() => 1,
        };
        stopped_by.set(code);
    };
    let result = run(&mut app, &mut term, EventStream::new, rx, shutdown).await;
    terminal::restore();
    // Restored already. Dropping ratatui's terminal would show the cursor
    // again and, when that fails (the terminal is gone), print to a dead
    // stderr, which panics.
    std::mem::forget(term);
    tracing::info!(frames = app.frames, "viewer closed: {result:?}");
    match result {
        Ok(Exit::Quit) => Ok(Outcome::Done),
        Ok(Exit::InputClosed) => Ok(Outcome::Interrupted(1)),
        Ok(Exit::Shutdown) if terminal::panicked() => Ok(Outcome::Interrupted(101)),
        Ok(Exit::Shutdown) => Ok(Outcome::Interrupted(stopped_by.get())),
        // Writing to the terminal failed (closed stdout): nothing to show it on.
        Err(e) => {
            tracing::warn!("terminal error: {e}");
            Ok(Outcome::Interrupted(1))
        }
    }
}

/// Test hook: `OCVIEW_TEST_PANIC_AFTER_MS=N` panics in a spawned task after
/// N ms, so the tests can prove a panic anywhere restores the terminal.
fn spawn_test_panic() {
    let Some(ms) = std::env::var("OCVIEW_TEST_PANIC_AFTER_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        panic!("test panic requested by OCVIEW_TEST_PANIC_AFTER_MS");
    });
}

/// How a headless attach decides it has seen enough.
#[derive(Debug, Clone, Copy)]
pub enum DumpWhen {
    /// After this long.
    After(std::time::Duration),
    /// Once synced, no session busy, and a quiet second; at most `timeout`.
    Idle { timeout: std::time::Duration },
}

/// Attach without a terminal, then return the state as the dump transcript.
pub async fn attach_dump(
    client: Client,
    options: LiveOptions,
    when: DumpWhen,
) -> anyhow::Result<String> {
    let app = attach_store(client, options, when).await?;
    Ok(crate::headless::dump::render_live(&app.store, &app.stats))
}

/// Ask the server for its health once, before a headless command starts:
/// no server, a rejected password or something that is not opencode fails
/// at once (a viewer retries instead). Returns the health answer.
pub async fn reach(client: &Client) -> anyhow::Result<serde_json::Value> {
    match client.health().await {
        Ok(health) => Ok(health),
        Err(e @ ApiError::Status { .. }) => Err(anyhow::anyhow!(
            "{e} (is {} an opencode server?)",
            client.base()
        )),
        Err(e) => Err(e.into()),
    }
}

/// How long `record` waits for the server's first answer.
pub(crate) const RECORD_REACH: std::time::Duration = std::time::Duration::from_secs(2);

/// The opencode version in a health answer.
fn server_version(health: Option<&serde_json::Value>) -> Option<String> {
    health?.get("version")?.as_str().map(str::to_string)
}

/// How often a headless attach looks again once the stream has been quiet
/// but something is still busy (a wake-up, not a busy loop).
const IDLE_RECHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// Attach without a terminal until `when`, and return the synced app. Fails
/// at once when the server cannot be reached, and at `when`'s time limit
/// when the state is not there yet (not synced, or still busy).
pub async fn attach_store(
    client: Client,
    options: LiveOptions,
    when: DumpWhen,
) -> anyhow::Result<App> {
    use std::time::Duration;
    use tokio::time::{Instant, sleep_until};

    let start = Instant::now();
    let (deadline, limit) = match when {
        DumpWhen::After(d) => (start + d, d),
        DumpWhen::Idle { timeout } => (start + timeout, timeout),
    };
    let secs = limit.as_secs_f64();
    // A server still starting can take a request and never answer it: each
    // try waits as long as a first wait for the stream, then asks again.
    loop {
        let try_until = deadline.min(Instant::now() + live::stream::HEADERS_FIRST);
        match tokio::time::timeout_at(try_until, reach(&client)).await {
            Ok(reached) => {
                reached?;
                break;
            }
            Err(_) if try_until < deadline => continue,
            Err(_) => anyhow::bail!("gave up after {secs:.0} s: the server did not answer"),
        }
    }
    let (tx, mut rx) = mpsc::channel(8192);
    let mut app = App::new(crate::app::config::Config::default(), "dump", false)
        .map_err(anyhow::Error::msg)?;
    app.live = Some(live::spawn(client, options, tx, None));
    let quiet = Duration::from_secs(1);
    let mut synced = false;
    let mut last_msg = Instant::now();
    let done = loop {
        // Every wake-up is in the future: the deadline, the end of the
        // quiet second, or (quiet already, still busy) a short recheck.
        let wake = match when {
            DumpWhen::After(_) => deadline,
            DumpWhen::Idle { .. } => {
                deadline.min((last_msg + quiet).max(Instant::now() + IDLE_RECHECK))
            }
        };
        tokio::select! {
            msg = rx.recv() => match msg {
                None => break synced,
                Some(msg) => {
                    if let SourceMsg::State(SourceState::Failed(e)) = &msg {
                        anyhow::bail!("{e}");
                    }
                    if let SourceMsg::State(SourceState::Live) = &msg {
                        synced = true;
                    }
                    app.on_source(msg);
                    last_msg = Instant::now();
                }
            },
            _ = sleep_until(wake) => {
                let now = Instant::now();
                match when {
                    DumpWhen::After(_) if now >= deadline => break synced,
                    DumpWhen::Idle { .. } if synced && !app.animating() && now >= last_msg + quiet => {
                        break true;
                    }
                    _ if now >= deadline => break false,
                    _ => {}
                }
            }
        }
    };
    if !done {
        if !synced {
            let state = app.source.state.label();
            anyhow::bail!("gave up after {secs:.0} s: could not sync with the server ({state})");
        }
        let busy: Vec<String> = app
            .store
            .sessions()
            .iter()
            .filter(|s| {
                matches!(
                    s.status,
                    crate::model::SessionStatus::Busy | crate::model::SessionStatus::Retry { .. }
                )
            })
            .map(|s| s.info.id.clone())
            .collect();
        anyhow::bail!(
            "gave up after {secs:.0} s: {} still busy ({}); --timeout waits longer, --dump-after prints the state as it is",
            if busy.len() == 1 {
                "1 session is".to_string()
            } else {
                format!("{} sessions are", busy.len())
            },
            busy.join(", ")
        );
    }
    Ok(app)
}

/// A recording in progress.
pub struct RecordingHandle {
    /// What the live source hands the writer.
    pub feed: mpsc::UnboundedSender<crate::source::recording::recorder::Feed>,
    /// Events written so far.
    pub written: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Bytes written so far, for the status line's mark.
    pub bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Told when the writer has caught up with what it was fed.
    pub grew: std::sync::Arc<tokio::sync::Notify>,
    /// Why the writer stopped, if a write failed (a full disk).
    pub failed: tokio::sync::oneshot::Receiver<String>,
}

impl RecordingHandle {
    /// The feed for a viewer's source: the viewer goes on if a write fails,
    /// and its status line says the recording stopped.
    pub fn feed_while_viewing(
        self,
        app: &mut App,
        tx: &mpsc::Sender<SourceMsg>,
    ) -> mpsc::UnboundedSender<crate::source::recording::recorder::Feed> {
        app.recording = Some(self.bytes.clone());
        let grew = self.grew.clone();
        let sizes = tx.clone();
        tokio::spawn(async move {
            loop {
                grew.notified().await;
                if sizes.send(SourceMsg::RecordingGrew).await.is_err() {
                    return;
                }
            }
        });
        let notices = tx.clone();
        let failed = self.failed;
        tokio::spawn(async move {
            if let Ok(why) = failed.await {
                let _ = notices.send(SourceMsg::RecordingStopped(why)).await;
            }
        });
        self.feed
    }
}

/// Check that `path` can be written and start the thread that writes the
/// recording. The file itself is created with the first event.
pub fn start_recording(
    client: &Client,
    path: &std::path::Path,
    opencode_version: Option<&str>,
) -> anyhow::Result<RecordingHandle> {
    start_recording_of(client.base(), path, opencode_version)
}

/// As [`start_recording`], the header naming `server` (a fleet's URLs).
pub fn start_recording_of(
    server: &str,
    path: &std::path::Path,
    opencode_version: Option<&str>,
) -> anyhow::Result<RecordingHandle> {
    use std::sync::atomic::Ordering;
    let mut recorder =
        crate::source::recording::recorder::Recorder::create(path, server, opencode_version)
            .map_err(|e| anyhow::anyhow!("cannot record to {}: {e}", path.display()))?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (failed_tx, failed) = tokio::sync::oneshot::channel();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let written = count.clone();
    let size = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let bytes = size.clone();
    let grew = std::sync::Arc::new(tokio::sync::Notify::new());
    let caught_up = grew.clone();
    let shown = path.display().to_string();
    std::thread::Builder::new()
        .name("ocview-recorder".into())
        .spawn(move || {
            while let Some(feed) = rx.blocking_recv() {
                if let Err(e) = recorder.feed(feed) {
                    tracing::error!("recording stopped: {e}");
                    let _ = failed_tx.send(format!("cannot write {shown}: {e}"));
                    return;
                }
                written.store(recorder.events, Ordering::SeqCst);
                bytes.store(recorder.bytes, Ordering::Relaxed);
                // One word per burst, not per event: when nothing waits.
                if rx.is_empty() {
                    caught_up.notify_one();
                }
            }
        })?;
    Ok(RecordingHandle {
        feed: tx,
        written: count,
        bytes: size,
        grew,
        failed,
    })
}

/// `ocview record URL FILE`: record without the viewer until a signal.
/// Fails at once (and creates no file) when the server cannot be reached or
/// rejects the password, and stops when a write fails. Returns how many
/// events were written.
pub async fn record_headless(
    client: Client,
    path: &std::path::Path,
    all_projects: bool,
    archive: Option<crate::archive::writer::Tap>,
) -> anyhow::Result<u64> {
    // A recording that cannot start says so at once: a host that drops
    // packets or a server that never answers would otherwise hold it for
    // the connect (5 s) or request (15 s) timeout.
    let health = match tokio::time::timeout(RECORD_REACH, reach(&client)).await {
        Ok(health) => health?,
        Err(_) => anyhow::bail!(
            "no answer from {} within {} s (is an opencode server running there?)",
            client.base(),
            RECORD_REACH.as_secs()
        ),
    };
    let mut recording = start_recording(&client, path, server_version(Some(&health)).as_deref())?;
    let (tx, mut rx) = mpsc::channel(8192);
    // Every session's messages, as a fresh attach that opens them shows.
    let options = LiveOptions {
        all_projects,
        load_all_messages: true,
        ..Default::default()
    };
    let _commands = live::spawn(client, options, tx, Some(recording.feed.clone()));
    let stop = terminal::termination_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            why = &mut recording.failed => match why {
                Ok(why) => anyhow::bail!("recording stopped: {why}"),
                Err(_) => break,
            },
            msg = rx.recv() => match msg {
                None => break,
                Some(SourceMsg::State(SourceState::Failed(e))) => anyhow::bail!("{e}"),
                Some(SourceMsg::State(s)) => tracing::info!("record: {}", s.label()),
                Some(msg) => if let Some(tap) = &archive { tap.source_msg(&msg) },
            },
        }
    }
    // Let the writer catch up with what already arrived.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // The archive's last batch is written (waiting a few seconds at most).
    tokio::task::block_in_place(|| drop(archive));
    if let Ok(why) = recording.failed.try_recv() {
        anyhow::bail!("recording stopped: {why}");
    }
    Ok(recording.written.load(std::sync::atomic::Ordering::SeqCst))
}
