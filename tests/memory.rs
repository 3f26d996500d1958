//! Peak memory of the real binary, read from /proc (issue 14, point 3):
//! replaying a long recording in the viewer keeps its seek checkpoints
//! without full copies of the store, so its peak stays within 2× of
//! `--dump` on the same file.

mod common;
mod support;

#[path = "../benches/common/mod.rs"]
mod recordings;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::tmux::Tmux;

/// VmHWM (peak resident memory) of a running process, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run to the end, reading the peak as it goes (it is gone after exit).
fn run_for_peak(mut child: Child) -> u64 {
    let pid = child.id();
    let mut peak = 0;
    let start = Instant::now();
    loop {
        if let Some(p) = peak_kib(pid) {
            peak = peak.max(p);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(600), "took too long");
        std::thread::sleep(Duration::from_millis(20));
    }
    peak
}

/// The position text of the status line: `#n/total`.
fn position(screen: &str) -> Option<(u64, u64)> {
    let at = screen.rfind('#')?;
    let rest = &screen[at + 1..];
    let (n, rest) = rest.split_once('/')?;
    let total: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((n.parse().ok()?, total.parse().ok()?))
}

#[test]
fn replaying_a_long_recording_in_the_viewer_stays_within_twice_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    let mb: usize = std::env::var("OCVIEW_MEMORY_TEST_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    std::fs::write(&path, recordings::long_recording(mb << 20)).unwrap();
    let bin = env!("CARGO_BIN_EXE_ocview");

    let dump = Command::new(bin)
        .args(["replay", &path.display().to_string(), "--dump"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let dump_peak = run_for_peak(dump);

    let t = Tmux::start("memory");
    t.line(&format!("{bin} replay {} --start end", path.display()));
    let pid = {
        t.wait_for("the viewer", |s| s.contains("Sessions"));
        t.ocview_pid()
    };
    let mut viewer_peak = 0;
    let screen = t.wait_for_secs("indexed and at the end", 600, |s| {
        if let Some(p) = peak_kib(pid) {
            viewer_peak = viewer_peak.max(p);
        }
        position(s).is_some_and(|(n, total)| n == total && total > 0)
    });
    std::thread::sleep(Duration::from_millis(500));
    viewer_peak = viewer_peak.max(peak_kib(pid).unwrap_or(0));
    t.keys(&["q"]);
    eprintln!("{mb} MB recording: --dump peak {dump_peak} KiB, viewer peak {viewer_peak} KiB");
    assert!(
        viewer_peak <= 2 * dump_peak,
        "viewer {viewer_peak} KiB against --dump {dump_peak} KiB:\n{screen}"
    );
}
