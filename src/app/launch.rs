//! Starting the full-screen viewer on a source, and always restoring the
//! terminal afterwards.

use std::io::BufRead;

use crossterm::event::EventStream;
use tokio::sync::mpsc;

use super::run::{Exit, run};
use super::{App, terminal};
use crate::source::player::{self, Pace};

/// What the session ended with, for the exit code.
pub enum Outcome {
    Done,
    /// A signal or a panic ended it; the code to exit with.
    Interrupted(u8),
}

/// Play `input` into the viewer until the user quits.
pub async fn replay_tui<R: BufRead + Send + 'static>(
    mut app: App,
    input: R,
    pace: Pace,
) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    player::spawn(input, pace, tx);
    let mut term = terminal::enter(app.config.mouse)?;
    spawn_test_panic();
    let shutdown = async {
        tokio::select! {
            _ = terminal::termination_signal() => {}
            _ = terminal::wait_for_panic() => {}
        }
    };
    let result = run(&mut app, &mut term, EventStream::new(), rx, shutdown).await;
    terminal::restore();
    tracing::info!(frames = app.frames, "viewer closed: {result:?}");
    match result {
        Ok(Exit::Quit) => Ok(Outcome::Done),
        Ok(Exit::InputClosed) => Ok(Outcome::Interrupted(1)),
        Ok(Exit::Shutdown) if terminal::panicked() => Ok(Outcome::Interrupted(101)),
        Ok(Exit::Shutdown) => Ok(Outcome::Interrupted(130)),
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
