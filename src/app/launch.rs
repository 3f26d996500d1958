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
pub async fn replay_tui<R: BufRead + Send + 'static>(mut app: App, input: R, pace: Pace) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    player::spawn(input, pace, tx);
    let mut term = terminal::enter(app.config.mouse)?;
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
