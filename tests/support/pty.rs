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
