//! A pseudo-terminal for tests that must be the program's terminal
//! themselves (one that answers nothing, one that goes away).

use std::os::fd::{FromRawFd, OwnedFd};

/// A new pty of `rows` × `cols`: (master, slave). Neither is inherited by
/// what other tests spawn meanwhile: a copy of the master elsewhere would
/// keep the terminal alive.
pub fn open(rows: u16, cols: u16) -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: out-pointers to two ints and a winsize that outlive the call;
    // no name or termios asked for.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(r, 0, "openpty");
    for fd in [master, slave] {
        // SAFETY: fcntl on descriptors just opened here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: openpty returned two new descriptors, owned here alone.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// Make `slave` the command's standard input and output and its
/// controlling terminal (so `/dev/tty` is this pty), in a session of its own.
pub fn attach(cmd: &mut std::process::Command, slave: &OwnedFd) {
    use std::os::unix::process::CommandExt;
    cmd.stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap());
    // SAFETY: setsid and TIOCSCTTY are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
}

/// The end of a frame: synchronized output closes each one.
pub const FRAME_END: &[u8] = b"\x1b[?2026l";

/// The question a terminal is asked for its background colour (OSC 11).
pub const COLOUR_QUESTION: &[u8] = b"\x1b]11;";

/// Run `program args` on a pty that answers nothing (not the OSC 11
/// question, not the device-attributes one after it): the time from the
/// start to its first whole frame, and every byte it wrote up to then and
/// after, until it asked for the background colour or `linger` passed.
pub fn first_frame_on_a_silent_terminal(
    program: &str,
    args: &[&str],
    linger: std::time::Duration,
) -> (std::time::Duration, Vec<u8>) {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let (master, slave) = open(30, 100);
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .env("TERM", "xterm-256color")
        .env("COLORTERM", "truecolor")
        .env_remove("NO_COLOR")
        .stderr(std::process::Stdio::null());
    attach(&mut cmd, &slave);
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    drop(slave);
    let mut master = std::fs::File::from(master);
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let mut first: Option<Duration> = None;
    let holds = |seen: &[u8], what: &[u8]| seen.windows(what.len()).any(|w| w == what);
    loop {
        let n = master.read(&mut buf).unwrap_or(0);
        assert!(
            n > 0,
            "the program ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        if first.is_none() && holds(&seen, FRAME_END) {
            first = Some(start.elapsed());
        }
        if let Some(first) = first
            && (holds(&seen, COLOUR_QUESTION) || start.elapsed() > first + linger)
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no frame");
    }
    let _ = child.kill();
    let _ = child.wait();
    (first.unwrap(), seen)
}
