//! The terminal always comes back. Entering sets raw mode, the alternate
//! screen, mouse capture and focus reporting; `restore` undoes all of it and
//! is safe to call any number of times, from any thread: on normal exit,
//! from the panic hook (a panic in any task), and after a signal.

pub mod color_depth;
pub mod frame_sink;
pub mod gap_fill;
pub mod job_control;

use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossterm::event::{
    DisableFocusChange, DisableMouseCapture, EnableFocusChange, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::Notify;

use crate::app::terminal::color_depth::{ColorDepth, DepthBackend};

static ACTIVE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Woken when a panic anywhere means the app must stop.
fn panic_notify() -> &'static Arc<Notify> {
    static N: OnceLock<Arc<Notify>> = OnceLock::new();
    N.get_or_init(|| Arc::new(Notify::new()))
}

static PANICKED: AtomicBool = AtomicBool::new(false);

pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Resolves when any thread panicked (after the terminal was restored).
pub async fn wait_for_panic() {
    let notify = panic_notify().clone();
    loop {
        let notified = notify.notified();
        if panicked() {
            return;
        }
        notified.await;
    }
}

/// The terminal ocview draws on: crossterm's, with every colour brought to
/// the terminal's depth on the way.
pub type Screen = Terminal<ScreenBackend<Stdout>>;

/// The backend stack a `Screen` draws through, over any writer.
pub type ScreenBackend<W> = DepthBackend<CrosstermBackend<io::BufWriter<W>>>;

/// Bytes a frame may take before it is written out. Stdout alone writes
/// every 1 KiB (a line buffer over a frame with no newline): a scrolled
/// frame went out in several writes, each one a wake-up for the terminal.
/// Frames end with a flush, so each reaches the terminal in one write.
const FRAME_BUFFER: usize = 64 * 1024;

pub fn screen_backend<W: io::Write>(out: W, depth: ColorDepth) -> ScreenBackend<W> {
    DepthBackend::new(
        CrosstermBackend::new(io::BufWriter::with_capacity(FRAME_BUFFER, out)),
        depth,
    )
}

pub fn enter(mouse: bool, depth: ColorDepth) -> io::Result<Screen> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    MOUSE.store(mouse, Ordering::SeqCst);
    let mut out = io::stdout();
    let setup = crossterm::execute!(
        out,
        EnterAlternateScreen,
        EnableFocusChange,
        crossterm::cursor::Hide
    )
    .and_then(|_| {
        if mouse {
            crossterm::execute!(out, EnableMouseCapture)
        } else {
            Ok(())
        }
    });
    if let Err(e) = setup {
        restore();
        return Err(e);
    }
    let backend = screen_backend(io::stdout(), depth);
    match Terminal::new(backend) {
        Ok(t) => Ok(t),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Whether ocview has the terminal in raw mode and the alternate screen.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Take the terminal again after the job was stopped without giving it
/// back (SIGSTOP): the shell may have set cooked mode and drawn on it.
/// Raw mode is set afresh (crossterm skips it when it believes it is on).
pub fn reenter() -> io::Result<()> {
    let _ = disable_raw_mode();
    resume()
}

/// Undo everything `enter` did. Idempotent; errors are ignored because the
/// terminal may already be gone (closed stdout, hung-up tty).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if MOUSE.load(Ordering::SeqCst) {
        let _ = crossterm::execute!(out, DisableMouseCapture);
    }
    let _ = crossterm::execute!(
        out,
        crossterm::terminal::EndSynchronizedUpdate,
        DisableFocusChange,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = out.flush();
    let _ = disable_raw_mode();
}

/// While a pager or an editor has the terminal: Ctrl-C and Ctrl-\\ are
/// its keys (they reach the whole foreground process group), so they do
/// not end the viewer, as `system(3)` ignores them while it waits.
static HANDED_OVER: AtomicBool = AtomicBool::new(false);

/// Whether a pager or an editor has the terminal.
pub fn handed_over() -> bool {
    HANDED_OVER.load(Ordering::SeqCst)
}

/// While a program that has the terminal runs, Ctrl-C and Ctrl-\\ reach
/// it and us alike: as `system(3)` does, the viewer ignores them until the
/// guard drops, then its own handlers are back. Made after the program is
/// started, so the program keeps their default effect.
pub struct KeyboardSignalsIgnored {
    saved: Vec<(libc::c_int, libc::sigaction)>,
}

impl KeyboardSignalsIgnored {
    pub fn new() -> KeyboardSignalsIgnored {
        let mut saved = Vec::new();
        for sig in [libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: plain sigaction calls with valid, zeroed structs;
            // SIG_IGN runs no code of ours.
            unsafe {
                let mut ignore: libc::sigaction = std::mem::zeroed();
                ignore.sa_sigaction = libc::SIG_IGN;
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &ignore, &mut old) == 0 {
                    saved.push((sig, old));
                }
            }
        }
        KeyboardSignalsIgnored { saved }
    }
}

impl Drop for KeyboardSignalsIgnored {
    fn drop(&mut self) {
        for (sig, old) in &self.saved {
            // SAFETY: puts back exactly the action `new` replaced.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

impl Default for KeyboardSignalsIgnored {
    fn default() -> Self {
        Self::new()
    }
}

/// Give the terminal to another program: leave the alternate screen, stop
/// mouse and focus reports, show the cursor, cooked mode. The caller has
/// stopped reading input first.
pub fn suspend() -> io::Result<()> {
    HANDED_OVER.store(true, Ordering::SeqCst);
    restore();
    Ok(())
}

/// Take the terminal back after `suspend`.
pub fn resume() -> io::Result<()> {
    let mouse = MOUSE.load(Ordering::SeqCst);
    let result = enable_raw_mode().and_then(|_| {
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        crossterm::execute!(
            out,
            EnterAlternateScreen,
            EnableFocusChange,
            crossterm::cursor::Hide
        )?;
        if mouse {
            crossterm::execute!(out, EnableMouseCapture)?;
        }
        Ok(())
    });
    HANDED_OVER.store(false, Ordering::SeqCst);
    result
}

fn install_panic_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            tracing::error!("panic: {info}");
            previous(info);
            PANICKED.store(true, Ordering::SeqCst);
            panic_notify().notify_waiters();
        }));
    });
}

/// Resolves on SIGTERM, SIGHUP, SIGINT or SIGQUIT, with the signal's
/// number (the exit code is 128 + it, by convention).
pub async fn termination_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let mut streams = Vec::new();
    for kind in [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::interrupt(),
        SignalKind::quit(),
    ] {
        match signal(kind) {
            Ok(s) => streams.push((kind.as_raw_value(), s)),
            Err(e) => tracing::warn!("cannot watch signal {kind:?}: {e}"),
        }
    }
    if streams.is_empty() {
        return std::future::pending().await;
    }
    loop {
        let waits = streams.iter_mut().map(|(_, s)| Box::pin(s.recv()));
        let (_, index, _) = futures_util::future::select_all(waits).await;
        let signal = streams[index].0;
        let keyboard = signal == libc::SIGINT || signal == libc::SIGQUIT;
        if keyboard && HANDED_OVER.load(Ordering::SeqCst) {
            tracing::info!("signal {signal} while a program has the terminal: left to it");
            continue;
        }
        return signal;
    }
}

/// Resolves when the terminal is gone without a SIGHUP reaching us (its
/// emulator closed while we are not its session, a hung-up line). Reads
/// then fail or return end-of-file forever, and crossterm's reader thread
/// retries them in a busy loop; this watch lets the app exit instead.
///
/// A thread of its own waits on the descriptor for a hang-up alone (no
/// timeout, no input asked for), so an idle viewer is not woken by it.
pub async fn terminal_gone() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("terminal-watch".into())
        .spawn(move || {
            if wait_for_hang_up() {
                let _ = tx.send(());
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch the terminal for a hang-up: {e}");
        return std::future::pending().await;
    }
    match rx.await {
        Ok(()) => tracing::warn!("the terminal is gone (hung up)"),
        // The watch could not wait: nothing to learn from it.
        Err(_) => std::future::pending().await,
    }
}

/// Block until the terminal crossterm reads (standard input when it is
/// one, else `/dev/tty`) reports a hang-up or an error: true. False when
/// it cannot be waited on.
fn wait_for_hang_up() -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: isatty only inspects the descriptor.
    let stdin_tty = unsafe { libc::isatty(0) } == 1;
    let dev_tty;
    let fd = if stdin_tty {
        0
    } else {
        match std::fs::File::open("/dev/tty") {
            Ok(f) => {
                dev_tty = f;
                dev_tty.as_raw_fd()
            }
            // No controlling terminal any more.
            Err(_) => return true,
        }
    };
    loop {
        // No events asked for: poll reports only a hang-up, an error or a
        // closed descriptor, which it always does.
        let mut poll = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, kept open (stdin, or `dev_tty` above)
        // for the whole wait.
        let n = unsafe { libc::poll(&mut poll, 1, -1) };
        if n > 0 && poll.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return true;
        }
        if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            tracing::warn!("cannot watch the terminal: {}", io::Error::last_os_error());
            return false;
        }
    }
}
