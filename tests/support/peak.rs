//! The exact peak resident memory of a child process, from the kernel's
//! own count when it ends (`wait4`'s `ru_maxrss`): no sampling, so a peak
//! reached in the last milliseconds before exit is not missed.
#![allow(dead_code)]

use std::process::Command;

/// What a run of a command left: its peak memory and its exit code.
pub struct Run {
    /// Peak resident memory, KiB.
    pub peak_kib: u64,
    /// The exit code (`None`: ended by a signal).
    pub code: Option<i32>,
}

/// Run `cmd` to its end and return its peak memory. Give it files (or
/// nothing) for its output: a pipe nobody reads would stall it.
pub fn run(cmd: &mut Command) -> Run {
    let child = cmd.spawn().expect("the command starts");
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: plain C structs for the kernel to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    // Reaped here, not by `Child` (which neither waits nor kills on drop).
    drop(child);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Run {
        peak_kib: usage.ru_maxrss as u64,
        code,
    }
}
