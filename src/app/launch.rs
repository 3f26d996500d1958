//! Starting the full-screen viewer on a source, and always restoring the
//! terminal afterwards.

use std::io::BufRead;

use crossterm::event::EventStream;
use tokio::sync::mpsc;

use super::run::{Exit, run};
use super::{App, terminal};
use crate::source::live::{self, Client, LiveOptions};
use crate::source::player::{self, Pace};
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
    use crate::source::player::{SourceMsg, SourceState};
    let (tx, rx) = mpsc::channel(8192);
    app.source.state = SourceState::Indexing;
    tokio::task::spawn_blocking(move || {
        let backing = match &recording {
            Recording::File(path) => std::fs::File::open(path).map(Backing::File),
            Recording::Bytes(b) => Ok(Backing::Memory(b.clone())),
        };
        match backing.and_then(|b| Timeline::index(b, options)) {
            Ok(opened) => {
                let _ = tx.blocking_send(SourceMsg::Indexed(Box::new(opened)));
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
        Some(path) => Some(start_recording(&client, path).await?.0),
        None => None,
    };
    app.live = Some(live::spawn(client, options, tx, raw));
    tui(app, rx).await
}

async fn tui(
    mut app: App,
    rx: mpsc::Receiver<crate::source::player::SourceMsg>,
) -> anyhow::Result<Outcome> {
    let mut term = terminal::enter(app.config.mouse)?;
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
    let result = run(&mut app, &mut term, EventStream::new(), rx, shutdown).await;
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
    Ok(crate::dump::render(&app.store, &app.stats))
}

/// Attach without a terminal until `when`, and return the synced app.
pub async fn attach_store(
    client: Client,
    options: LiveOptions,
    when: DumpWhen,
) -> anyhow::Result<App> {
    use crate::source::player::{SourceMsg, SourceState};
    use std::time::Duration;
    use tokio::time::{Instant, sleep_until};

    let (tx, mut rx) = mpsc::channel(8192);
    let mut app =
        App::new(super::config::Config::default(), "dump", false).map_err(anyhow::Error::msg)?;
    app.live = Some(live::spawn(client, options, tx, None));
    let start = Instant::now();
    let deadline = match when {
        DumpWhen::After(d) => start + d,
        DumpWhen::Idle { timeout } => start + timeout,
    };
    let quiet = Duration::from_secs(1);
    let mut synced = false;
    let mut last_msg = Instant::now();
    loop {
        let wake = match when {
            DumpWhen::After(_) => deadline,
            DumpWhen::Idle { .. } => deadline.min(last_msg + quiet),
        };
        tokio::select! {
            msg = rx.recv() => match msg {
                None => break,
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
                if Instant::now() >= deadline {
                    break;
                }
                if matches!(when, DumpWhen::Idle { .. }) && synced && !app.animating() {
                    break;
                }
            }
        }
    }
    if !synced {
        let state = app.source.state.label();
        anyhow::bail!("could not sync with the server ({state})");
    }
    Ok(app)
}

/// Open a recording and start the thread that writes it. Returns the sender
/// for what the live source hands it, and the count of events written so far.
pub async fn start_recording(
    client: &Client,
    path: &std::path::Path,
) -> anyhow::Result<(
    mpsc::UnboundedSender<crate::source::recorder::Feed>,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
)> {
    use std::sync::atomic::Ordering;
    let version = client.health().await.ok().and_then(|h| {
        h.get("version")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    });
    let mut recorder =
        crate::source::recorder::Recorder::create(path, client.base(), version.as_deref())
            .map_err(|e| anyhow::anyhow!("cannot record to {}: {e}", path.display()))?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let written = count.clone();
    std::thread::Builder::new()
        .name("ocview-recorder".into())
        .spawn(move || {
            while let Some(feed) = rx.blocking_recv() {
                if let Err(e) = recorder.feed(feed) {
                    tracing::error!("recording stopped: {e}");
                    return;
                }
                written.store(recorder.events, Ordering::SeqCst);
            }
        })?;
    Ok((tx, count))
}

/// `ocview record URL FILE`: record without the viewer until a signal.
/// Returns how many events were written.
pub async fn record_headless(
    client: Client,
    path: &std::path::Path,
    all_projects: bool,
) -> anyhow::Result<u64> {
    use crate::source::player::{SourceMsg, SourceState};
    let (raw, count) = start_recording(&client, path).await?;
    let (tx, mut rx) = mpsc::channel(8192);
    let options = LiveOptions {
        all_projects,
        ..Default::default()
    };
    let _commands = live::spawn(client, options, tx, Some(raw));
    let stop = terminal::termination_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            msg = rx.recv() => match msg {
                None => break,
                Some(SourceMsg::State(SourceState::Failed(e))) => anyhow::bail!("{e}"),
                Some(SourceMsg::State(s)) => tracing::info!("record: {}", s.label()),
                Some(_) => {}
            },
        }
    }
    // Let the writer catch up with what already arrived.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(count.load(std::sync::atomic::Ordering::SeqCst))
}
