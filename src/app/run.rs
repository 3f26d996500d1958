//! The loop: one task receives terminal input, source messages and timers,
//! drains everything queued, applies it, and lets the frame gate decide
//! whether to draw. No change, no frame.

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::Event;
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::App;
use crate::app::frame_gate::FrameGate;
use crate::app::msg::{AppMsg, Request};
use crate::app::verbs::handover::{self, Program, TempFile};
use crate::source::msg::SourceMsg;

/// How often a spinner or countdown moves, while something is busy.
const ANIMATION_TICK: Duration = Duration::from_millis(250);
/// Source messages applied per wake-up before input gets a look in.
const DRAIN_LIMIT: usize = 50_000;

pub use crate::app::terminal::frame_sink::FrameSink;

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Quit,
    /// SIGTERM, SIGHUP, SIGINT, or a panic elsewhere.
    Shutdown,
    /// Terminal input ended (the terminal went away).
    InputClosed,
}

/// Run the viewer until it quits. `new_input` starts reading terminal
/// input; the reader is dropped while a pager or an editor has the
/// terminal (it would take their keys) and started again after.
pub async fn run<B, I, F, S>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    mut new_input: F,
    mut source: mpsc::Receiver<SourceMsg>,
    shutdown: S,
) -> io::Result<Exit>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
    I: Stream<Item = io::Result<Event>> + Unpin,
    F: FnMut() -> I,
    S: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut input = new_input();
    let mut done = app.verbs.take_done();
    let mut gate = FrameGate::default();
    let mut source_open = true;
    let mut highlighted = app.highlighter.generation();
    // `None`: terminal input ended there.
    let mut typed_during_frame: std::collections::VecDeque<(Option<Event>, Instant)> =
        Default::default();
    let mut input_ended = false;
    gate.request_now(Instant::now());
    let search_found = app.overlays.search.worker.waker();
    let usage_answered = app.overlays.usage.answered.clone();
    // When an age on screen next changes (taken after each frame).
    let mut ages_wait: Option<Instant> = None;
    loop {
        let now = Instant::now();
        // A finished highlight asks for a frame: the code is drawn plain
        // until then. Taken before the generation is read, so a result that
        // lands in between still wakes the loop.
        let highlighter = app.highlighter.clone();
        let highlight_ready = highlighter.notified();
        tokio::pin!(highlight_ready);
        if highlighter.generation() != highlighted {
            highlighted = highlighter.generation();
            gate.request(now);
        }
        if gate.should_draw(now) {
            let frame_start = Instant::now();
            draw_frame(app, terminal)?;
            gate.drawn(now);
            ages_wait = app.ages_change_at().map(|at| {
                let wait = Duration::from_millis((at - app.now_ms).max(0) as u64);
                gate.ages_due(Instant::now() + wait)
            });
            // Keys that came in while the frame was drawn may have been
            // typed as it began: they count from then, not from now (a
            // slow frame must not look like a pause in typing, nor let a
            // key typed before a prompt appeared answer it).
            if !input_ended {
                let (events, ended) = take_ready(&mut input).await;
                typed_during_frame.extend(events.into_iter().map(|e| (Some(e), frame_start)));
                if ended {
                    // After the keys that came before the end.
                    typed_during_frame.push_back((None, frame_start));
                    input_ended = true;
                }
            }
        }
        let deadline = gate.deadline();
        let tick = stretched(app.animating().then(|| now + ANIMATION_TICK), now);
        let play_due = app.player_due();
        let notice_due = stretched(app.notice_expiry(now), now);
        let ages_due = stretched(ages_wait, now);
        tokio::select! {
            biased;
            _ = &mut shutdown => return Ok(Exit::Shutdown),
            _ = std::future::ready(()), if !typed_during_frame.is_empty() => {
                if let Some(exit) = apply_typed(app, &mut gate, &mut typed_during_frame) {
                    return Ok(exit);
                }
            }
            ev = input.next(), if !input_ended => match ev {
                Some(Ok(ev)) => {
                    if app.on_terminal_event(ev) {
                        gate.request_now(Instant::now());
                    }
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(Exit::InputClosed),
            },
            msg = source.recv(), if source_open => match msg {
                Some(msg) => {
                    if drain(app, msg, &mut source) {
                        gate.request(Instant::now());
                    }
                }
                None => source_open = false,
            },
            _ = search_found.notified() => {
                // Answers to keys: shown at once, like the keys were.
                if app.on_search_results() {
                    gate.request_now(Instant::now());
                }
            }
            _ = sleep_until_opt(play_due), if play_due.is_some() => {
                if app.on_play_tick(Instant::now()) {
                    gate.request(Instant::now());
                }
            }
            Some(d) = done.recv() => {
                app.on_done(d);
                gate.request_now(Instant::now());
            }
            _ = sleep_until_opt(notice_due), if notice_due.is_some() => {
                if app.expire_notice(Instant::now()) {
                    gate.request(Instant::now());
                }
            }
            _ = &mut highlight_ready => {}
            // The usage view's figures: taken in the next frame's prepare.
            _ = usage_answered.notified() => gate.request_now(Instant::now()),
            _ = sleep_until_opt(deadline), if deadline.is_some() => {}
            _ = sleep_until_opt(tick), if tick.is_some() && deadline.is_none() => {
                gate.request(Instant::now());
            }
            _ = sleep_until_opt(ages_due), if ages_due.is_some() && deadline.is_none() => {
                ages_wait = None;
                gate.request_for_ages(Instant::now());
            }
        }
        if app.quit {
            return Ok(Exit::Quit);
        }
        if let Some(request) = app.verbs.request.take() {
            let (reader, exit) = carry_out(
                app,
                terminal,
                request,
                input,
                &mut new_input,
                shutdown.as_mut(),
            )
            .await?;
            input = reader;
            if let Some(exit) = exit {
                return Ok(exit);
            }
            gate.request_now(Instant::now());
        }
    }
}

/// Apply the keys that came in while a frame was drawn, each counted from
/// the frame's start; stop at a quit or a hand-over. `Some`: the loop ends
/// (input ended among them).
fn apply_typed(
    app: &mut App,
    gate: &mut FrameGate,
    typed: &mut std::collections::VecDeque<(Option<Event>, Instant)>,
) -> Option<Exit> {
    while let Some((ev, typed_at)) = typed.pop_front() {
        let Some(ev) = ev else {
            return Some(Exit::InputClosed);
        };
        if app.on_terminal_event_typed_at(ev, typed_at) {
            gate.request_now(Instant::now());
        }
        // Quitting or handing the terminal over comes first.
        if app.quit || app.verbs.request.is_some() {
            break;
        }
    }
    None
}

/// Apply `first` and whatever else the sources have queued (at most
/// `DRAIN_LIMIT`, so input gets a look in). Whether anything changed.
fn drain(app: &mut App, first: SourceMsg, source: &mut mpsc::Receiver<SourceMsg>) -> bool {
    let mut changed = app.on_source(first);
    for _ in 1..DRAIN_LIMIT {
        match source.try_recv() {
            Ok(msg) => changed |= app.on_source(msg),
            Err(_) => break,
        }
    }
    changed
}

/// Do what a key handler asked of the loop: write to the terminal, run the
/// clipboard program, hand the terminal to a program, stop the job. The
/// input reader is dropped while another program has the terminal (it
/// would read that program's keys): the reader to go on with, and `Some`
/// when the loop ends.
async fn carry_out<B, I, F, S>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    request: Request,
    mut input: I,
    new_input: &mut F,
    mut shutdown: std::pin::Pin<&mut S>,
) -> io::Result<(I, Option<Exit>)>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
    F: FnMut() -> I,
    S: Future<Output = ()>,
{
    match request {
        Request::Write(bytes) => terminal.backend_mut().alert(&bytes)?,
        Request::Clipboard { argv, content } => {
            let tx = app.verbs.done_sender();
            let via = app.verbs.clipboard.via();
            tokio::spawn(async move {
                let result =
                    crate::app::verbs::clipboard::run_program(argv, content.text.clone()).await;
                let _ = tx.send(AppMsg::Clipboard {
                    via,
                    content,
                    result,
                });
            });
        }
        Request::Open(program, content) => {
            // The reader goes first: it would read the program's keys.
            drop(input);
            let ran = hand_over(terminal, program, &content, shutdown.as_mut()).await;
            input = new_input();
            match ran? {
                Some(result) => app.on_opened(result),
                None => return Ok((input, Some(Exit::Shutdown))),
            }
        }
        Request::Run { argv, what } => {
            drop(input);
            let mut command = std::process::Command::new(&argv[0]);
            command.args(&argv[1..]);
            let ran = run_handed_over(terminal, command, shutdown.as_mut()).await;
            input = new_input();
            match ran? {
                Some(Ok(s)) if s.success() => app.on_opened(Ok(format!("{what} closed"))),
                Some(Ok(s)) => app.on_opened(Err(format!("{what} failed: {s}"))),
                Some(Err(e)) => app.on_opened(Err(format!("cannot run {what}: {e}"))),
                None => return Ok((input, Some(Exit::Shutdown))),
            }
        }
        Request::Suspend(job) => crate::app::terminal::job_control::suspend(terminal, job)?,
    }
    Ok((input, None))
}

/// How long a program told to stop (the viewer is shutting down) gets
/// before it is killed.
const CHILD_GRACE: Duration = Duration::from_secs(1);

/// Run the pager or the editor on `content` with the terminal handed over,
/// then take the terminal back and mark it for a whole redraw. `None`: the
/// viewer was told to shut down meanwhile (the program was stopped).
async fn hand_over<B, S>(
    terminal: &mut Terminal<B>,
    program: Program,
    content: &crate::headless::content::Content,
    shutdown: std::pin::Pin<&mut S>,
) -> io::Result<Option<Result<String, String>>>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
    S: Future<Output = ()>,
{
    let shell = program.command(|k| std::env::var(k).ok());
    let file = match TempFile::with(&content.text, &content.suffix) {
        Ok(f) => f,
        Err(e) => return Ok(Some(Err(format!("cannot write a temporary file: {e}")))),
    };
    let command = handover::command(program, &shell, &file.path);
    let Some(status) = run_handed_over(terminal, command, shutdown).await? else {
        return Ok(None);
    };
    drop(file);
    Ok(Some(handover::outcome(program, &shell, content, status)))
}

/// Run `command` with the terminal handed over, then take the terminal
/// back and mark it for a whole redraw. `None`: the viewer was told to
/// shut down meanwhile (the program was stopped).
async fn run_handed_over<B, S>(
    terminal: &mut Terminal<B>,
    mut command: std::process::Command,
    shutdown: std::pin::Pin<&mut S>,
) -> io::Result<Option<io::Result<std::process::ExitStatus>>>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
    S: Future<Output = ()>,
{
    terminal.backend_mut().suspend()?;
    let status = match command.spawn() {
        Ok(mut child) => {
            let _keyboard_signals_are_its = crate::app::terminal::KeyboardSignalsIgnored::new();
            let pid = child.id() as libc::pid_t;
            let mut wait = tokio::task::spawn_blocking(move || child.wait());
            tokio::select! {
                biased;
                _ = shutdown => {
                    // SAFETY: kill on our own child's pid, still unreaped.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    if tokio::time::timeout(CHILD_GRACE, &mut wait).await.is_err() {
                        // SAFETY: as above.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                        let _ = wait.await;
                    }
                    return Ok(None);
                }
                r = &mut wait => r.unwrap_or_else(|e| Err(io::Error::other(e))),
            }
        }
        Err(e) => Err(e),
    };
    terminal.backend_mut().resume()?;
    // A whole redraw: a clear screen, and a blank frame so the next one
    // differs from it everywhere. (`Terminal::clear` would ask the terminal
    // where its cursor is, and read the answer as input.)
    terminal.backend_mut().clear().map_err(io::Error::other)?;
    terminal.draw(|_| {}).map_err(io::Error::other)?;
    Ok(Some(status))
}

/// Test hook: `OCVIEW_TEST_TIMER_FLOOR_MS=N` puts every periodic wake-up
/// of the loop (animation, notices, ages) at least N ms away, so a test can
/// show that a key is drawn without any timer's help.
fn stretched(at: Option<Instant>, now: Instant) -> Option<Instant> {
    static FLOOR: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let floor = FLOOR.get_or_init(|| {
        std::env::var("OCVIEW_TEST_TIMER_FLOOR_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
    });
    match floor {
        Some(floor) => at.map(|at| at.max(now + *floor)),
        None => at,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Every terminal event already waiting, without waiting for more, and
/// whether input ended after them. The stream is polled with this task's
/// own waker: crossterm's `EventStream` keeps the waker of the poll that
/// first found nothing, so a no-op one there would leave the loop asleep
/// when the next key arrives.
async fn take_ready<I>(input: &mut I) -> (Vec<Event>, bool)
where
    I: Stream<Item = io::Result<Event>> + Unpin,
{
    use std::task::Poll;
    let mut ready = Vec::new();
    let ended = std::future::poll_fn(|cx| {
        loop {
            match input.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(ev))) => ready.push(ev),
                // A read error is the loop's to report: it comes again.
                Poll::Ready(Some(Err(e))) => {
                    tracing::warn!("terminal input: {e}");
                    return Poll::Ready(false);
                }
                Poll::Ready(None) => return Poll::Ready(true),
                Poll::Pending => return Poll::Ready(false),
            }
        }
    })
    .await;
    (ready, ended)
}

/// Lay out and draw one frame, flush it, then tell the app it is on the
/// terminal (a prompt it shows counts as seen from then).
pub fn draw_frame<B>(app: &mut App, terminal: &mut Terminal<B>) -> io::Result<()>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    app.now_ms = now_ms();
    let size = terminal.size().map_err(io::Error::other)?;
    app.prepare(Rect::new(0, 0, size.width, size.height));
    terminal.backend_mut().begin_frame()?;
    terminal
        .draw(|f| crate::app::draw::draw(f, app))
        .map_err(io::Error::other)?;
    terminal.backend_mut().end_frame()?;
    app.frame_flushed(Instant::now());
    app.frames += 1;
    let texts = app.attention.take();
    let bell = app.attention.take_bell();
    for text in &texts {
        let bytes = crate::app::attention::sequence(app.config.notify, text);
        terminal.backend_mut().alert(&bytes)?;
    }
    if bell && texts.is_empty() && app.config.notify != crate::app::attention::NotifyMode::Off {
        terminal.backend_mut().alert(b"\x07")?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
