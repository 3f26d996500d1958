//! The peak resident memory of a child process, sampled from its
//! `/proc/PID/status` (VmHWM) every 2 ms until it exits. (`wait4`'s
//! `ru_maxrss` cannot be used: it counts the spawning test process's own
//! memory, which the child had until its `exec`.)
#![allow(dead_code)]

use std::process::Command;
use std::time::Duration;

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
    let mut child = cmd.spawn().expect("the command starts");
    let pid = child.id();
    let mut peak = 0;
    // Until it exits: a process that has ended but is not yet reaped has
    // no memory figures left, and its status stays readable until `wait`.
    while let Some(kib) = super::proc_status::kib(Some(pid), "VmHWM") {
        peak = peak.max(kib as u64);
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = child.wait().unwrap();
    Run {
        peak_kib: peak,
        code: status.code(),
    }
}
