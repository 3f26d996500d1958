//! Memory figures of a process from `/proc/PID/status` (Linux), for the
//! memory tests and benches.
#![allow(dead_code)]

/// The field (`VmRSS`, `VmHWM`, …) of `pid`, or of this process, in KiB.
pub fn kib(pid: Option<u32>, field: &str) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// This process's resident memory, in MiB (0 where it cannot be read).
pub fn rss_mib() -> f64 {
    kib(None, "VmRSS").unwrap_or(0.0) / 1024.0
}
