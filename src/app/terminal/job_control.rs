//! Job control. In raw mode the terminal does not turn Ctrl-Z into SIGTSTP:
//! it arrives as a key, the `suspend` action. That key, and a SIGTSTP sent
//! from outside (`kill -TSTP`), give the terminal back (cooked mode, the
//! main screen, the cursor) and stop the job; `fg` (SIGCONT) takes the
//! terminal again and draws a whole frame. A SIGCONT after a stop ocview
//! did not see coming (SIGSTOP) does the same: the shell may have changed
//! the terminal meanwhile.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{KeyEvent, KeyEventKind};
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::app::App;
use crate::app::keymap::{Action, Key};
use crate::app::msg::AppMsg;
use crate::app::terminal;
use crate::app::terminal::frame_sink::FrameSink;

pub use crate::app::msg::Job;

/// Set while ocview stops itself, so the SIGCONT that wakes it is not
/// taken for a stop it did not prepare for.
static STOPPING: AtomicBool = AtomicBool::new(false);

impl App {
    /// Whether `key` is the suspend key: it works on top of everything
    /// (lists, overlays, the prompt bar), as the terminal's own Ctrl-Z would.
    pub(crate) fn is_suspend_key(&self, key: &KeyEvent) -> bool {
        key.kind != KeyEventKind::Release
            && Key::from_event(key).is_some_and(|k| self.keymap.keys(Action::Suspend).contains(&k))
    }
}

/// Watch for SIGTSTP and SIGCONT and ask the loop (through `done`) to act.
/// While a pager or an editor has the terminal, a SIGTSTP (its Ctrl-Z
/// reaches the whole job) stops ocview at once, leaving the terminal to
/// the program: it is not ocview's to restore.
pub fn watch(done: mpsc::UnboundedSender<AppMsg>) {
    use tokio::signal::unix::{SignalKind, signal};
    let stop = signal(SignalKind::from_raw(libc::SIGTSTP));
    let cont = signal(SignalKind::from_raw(libc::SIGCONT));
    let (mut stop, mut cont) = match (stop, cont) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("cannot watch job-control signals: {e}");
            return;
        }
    };
    tokio::spawn(async move {
        loop {
            let job = tokio::select! {
                Some(()) = stop.recv() => Job::Stop,
                Some(()) = cont.recv() => Job::Continued,
                else => return,
            };
            match job {
                Job::Stop if terminal::handed_over() => stop_process(false),
                Job::Continued if STOPPING.swap(false, Ordering::SeqCst) => {}
                job => {
                    if done.send(AppMsg::Job(job)).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

/// Carry out `job` on the loop: give the terminal back and stop (for
/// `Stop`), then take it again and mark a whole frame to be drawn. A test
/// backend has no terminal to give, and the test process is never stopped.
pub fn suspend<B>(terminal: &mut Terminal<B>, job: Job) -> io::Result<()>
where
    B: FrameSink,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let real = terminal::is_active();
    match job {
        Job::Stop => {
            terminal.backend_mut().suspend()?;
            if real {
                stop_process(true);
            }
            terminal.backend_mut().resume()?;
        }
        Job::Continued => {
            if real {
                terminal::reenter()?;
            }
        }
    }
    // A whole redraw: a clear screen, and a blank frame so the next one
    // differs from it everywhere (as after a pager).
    terminal.backend_mut().clear().map_err(io::Error::other)?;
    terminal.draw(|_| {}).map_err(io::Error::other)?;
    Ok(())
}

/// Stop with SIGTSTP's default action until SIGCONT: the whole job (the
/// process group, as the terminal's Ctrl-Z would: `… | ocview replay -`
/// stops together), or ocview alone. The watch's handler stands aside
/// meanwhile, or the signal would only reach it. In a process group no
/// shell can continue (an orphaned one) the kernel drops the signal and
/// this returns at once.
fn stop_process(whole_job: bool) {
    STOPPING.store(true, Ordering::SeqCst);
    // SAFETY: sigaction with valid structs; kill on our own group or pid.
    // The default action stops every thread before `kill` returns to this
    // one; the previous handler is put back after the SIGCONT.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGTSTP, &default, &mut previous) != 0 {
            // SIGSTOP cannot be caught: the job still stops.
            libc::kill(libc::getpid(), libc::SIGSTOP);
            return;
        }
        let target = if whole_job { 0 } else { libc::getpid() };
        libc::kill(target, libc::SIGTSTP);
        libc::sigaction(libc::SIGTSTP, &previous, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn ctrl_z_is_the_suspend_key_and_asks_the_loop_to_stop() {
        let mut app = App::new(crate::app::config::Config::default(), "test", true).unwrap();
        let ctrl_z = KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL);
        assert!(app.is_suspend_key(&ctrl_z));
        assert!(!app.is_suspend_key(&KeyEvent::new(KeyCode::Char('z'), KeyModifiers::NONE)));
        // On top of an overlay that takes every key.
        app.open_theme_picker();
        app.on_terminal_event(crossterm::event::Event::Key(ctrl_z));
        assert_eq!(
            app.verbs.request,
            Some(crate::app::msg::Request::Suspend(Job::Stop))
        );
        assert_eq!(app.overlay, Some(crate::app::Overlay::Themes));
    }
}
