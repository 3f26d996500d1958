//! The loop: one task receives terminal input, source messages and timers,
//! drains everything queued, applies it, and lets the frame gate decide
//! whether to draw. No change, no frame.

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::Event;
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::App;
use super::frame_gate::FrameGate;
use crate::source::player::SourceMsg;

/// How often a spinner or countdown moves, while something is busy.
const ANIMATION_TICK: Duration = Duration::from_millis(250);
/// Source messages applied per wake-up before input gets a look in.
const DRAIN_LIMIT: usize = 50_000;

/// A backend that can bracket a frame (synchronized output, so the terminal
/// shows whole frames only). Test backends do nothing.
pub trait FrameSink: Backend {
    fn begin_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn end_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Ring the bell or send a notification (already made inert).
    fn alert(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

impl FrameSink for ratatui::backend::TestBackend {}

impl<W: io::Write> FrameSink for ratatui::backend::CrosstermBackend<W> {
    fn begin_frame(&mut self) -> io::Result<()> {
        crossterm::queue!(self, crossterm::terminal::BeginSynchronizedUpdate)
    }
    fn end_frame(&mut self) -> io::Result<()> {
        crossterm::execute!(self, crossterm::terminal::EndSynchronizedUpdate)
    }
    fn alert(&mut self, bytes: &[u8]) -> io::Result<()> {
        io::Write::write_all(self, bytes)?;
        io::Write::flush(self)
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Quit,
    /// SIGTERM, SIGHUP, SIGINT, or a panic elsewhere.
    Shutdown,
    /// Terminal input ended (the terminal went away).
    InputClosed,
}

pub async fn run<B, I, S>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    mut input: I,
    mut source: mpsc::Receiver<SourceMsg>,
    shutdown: S,
) -> io::Result<Exit>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
    I: Stream<Item = io::Result<Event>> + Unpin,
    S: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut gate = FrameGate::default();
    let mut source_open = true;
    gate.request_now(Instant::now());
    let search_found = app.search.worker.waker();
    // Code drawn plain while its colours were pending is drawn again once
    // they arrive, even when nothing else happens.
    let highlighter = app.highlighter.clone();
    loop {
        let now = Instant::now();
        if gate.should_draw(now) {
            draw(app, terminal)?;
            gate.drawn(now);
        }
        let deadline = gate.deadline();
        let tick = app.animating().then(|| now + ANIMATION_TICK);
        let play_due = app.player_due();
        tokio::select! {
            biased;
            _ = &mut shutdown => return Ok(Exit::Shutdown),
            ev = input.next() => match ev {
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
                    let mut changed = app.on_source(msg);
                    let mut n = 1;
                    while n < DRAIN_LIMIT {
                        match source.try_recv() {
                            Ok(msg) => changed |= app.on_source(msg),
                            Err(_) => break,
                        }
                        n += 1;
                    }
                    if changed {
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
            _ = highlighter.ready() => gate.request(Instant::now()),
            _ = sleep_until_opt(play_due), if play_due.is_some() => {
                if app.on_play_tick(Instant::now()) {
                    gate.request(Instant::now());
                }
            }
            _ = sleep_until_opt(deadline), if deadline.is_some() => {}
            _ = sleep_until_opt(tick), if tick.is_some() && deadline.is_none() => {
                gate.request(Instant::now());
            }
        }
        if app.quit {
            return Ok(Exit::Quit);
        }
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn draw<B>(app: &mut App, terminal: &mut Terminal<B>) -> io::Result<()>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    app.now_ms = now_ms();
    let size = terminal.size().map_err(io::Error::other)?;
    app.prepare(Rect::new(0, 0, size.width, size.height));
    terminal.backend_mut().begin_frame()?;
    terminal
        .draw(|f| crate::ui::draw(f, app))
        .map_err(io::Error::other)?;
    terminal.backend_mut().end_frame()?;
    app.frames += 1;
    for text in app.attention.take() {
        let bytes = super::attention::sequence(app.config.notify, &text);
        terminal.backend_mut().alert(&bytes)?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
