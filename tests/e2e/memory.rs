//! Peak memory of the real binary, read from /proc (issue 14, point 3):
//! replaying a long recording in the viewer keeps its seek checkpoints
//! without full copies of the store, so its peak stays within 2× of
//! `--dump` on the same file.

use crate::support;

use crate::recordings;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::tmux::{Tmux, player_position};

/// VmHWM (peak resident memory) of a running process, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    support::proc_status::kib(Some(pid), "VmHWM").map(|k| k as u64)
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
        player_position(s).is_some_and(|(n, total)| n == total && total > 0)
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

/// A recording of one session whose answer is `text`.
fn recording_with_answer(text: &str) -> String {
    let ses = "ses_dfd705bd5ffeBombSession01";
    let events = [
        serde_json::json!({"type": "session.created", "properties": {"sessionID": ses, "info": {"id": ses, "title": "bomb", "directory": "/p", "time": {"created": 1, "updated": 1}}}}),
        serde_json::json!({"type": "message.updated", "properties": {"sessionID": ses, "info": {"id": "msg_2028fa44f001u", "sessionID": ses, "role": "user", "time": {"created": 1}}}}),
        serde_json::json!({"type": "message.updated", "properties": {"sessionID": ses, "info": {"id": "msg_2028fa44f002a", "sessionID": ses, "role": "assistant", "parentID": "msg_2028fa44f001u", "time": {"created": 2, "completed": 3}}}}),
        serde_json::json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {"id": "prt_2028fa44f003t", "messageID": "msg_2028fa44f002a", "sessionID": ses, "type": "text", "text": text, "time": {"start": 2, "end": 3}}}}),
    ];
    events.iter().map(|e| format!("{e}\n")).collect()
}

/// Peak memory of the viewer showing a recording's last state.
fn viewer_peak_kib(tag: &str, recording: &str) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, recording).unwrap();
    let t = Tmux::start(tag);
    t.line(&format!(
        "{} replay {} --start end",
        env!("CARGO_BIN_EXE_ocview"),
        path.display()
    ));
    t.wait_for_secs("the answer drawn", 60, |s| {
        s.contains("bomb") && s.contains("#4/4")
    });
    let pid = t.ocview_pid();
    // Scroll through the answer, so every part of it is laid out.
    t.keys(&["Tab", "g", "G"]);
    std::thread::sleep(Duration::from_millis(500));
    let peak = peak_kib(pid).unwrap();
    t.keys(&["q"]);
    peak
}

/// A nesting bomb and a pathological text render within a bound of their
/// size: the viewer's peak grows by far less than the 365 MB and 1.6 GB
/// they once cost, compared with a plain text as long.
#[test]
fn markdown_bombs_cost_the_viewer_a_bounded_amount_of_memory() {
    let bomb = ">".repeat(300) + " " + &"word ".repeat(4_700);
    let torture: String = (0..2_000)
        .map(|i| format!("{}- [x] *a* `b` [c](d) > e\n", "  ".repeat(i % 40)))
        .collect::<String>()
        + &"> ".repeat(2_000)
        + &"*_".repeat(2_000);
    let plain = "word ".repeat(torture.len() / 5);
    let base = viewer_peak_kib("md-plain", &recording_with_answer(&plain));
    for (name, text) in [("bomb", bomb), ("torture", torture)] {
        let peak = viewer_peak_kib(&format!("md-{name}"), &recording_with_answer(&text));
        eprintln!(
            "{name} ({} bytes): peak {peak} KiB, plain text {base} KiB",
            text.len()
        );
        assert!(
            peak < base + 48 * 1024,
            "{name}: {peak} KiB against {base} KiB for plain text"
        );
    }
}

/// An SSE line that never ends (a broken or hostile server) is dropped at
/// the frame limit, never buffered whole, and the frame after it is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_sse_line_is_dropped_and_the_stream_goes_on() {
    let server = support::history_server::HistoryServer::start(10).await;
    server
        .counts
        .flood_bytes
        .store(200 << 20, std::sync::atomic::Ordering::Relaxed);
    let child = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["attach", &server.url, "--dump-after", "25"])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let watch = tokio::task::spawn_blocking(move || {
        let mut peak = 0;
        while let Some(p) = peak_kib(pid) {
            peak = peak.max(p);
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let peak = watch.await.unwrap();
    let dump = String::from_utf8_lossy(&out.stdout);
    eprintln!("200 MB line: peak {peak} KiB");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        dump.contains("after the flood"),
        "the next frame was read:\n{dump}\n{err}"
    );
    assert!(
        dump.contains("larger than the limit"),
        "the line is reported:\n{dump}"
    );
    assert!(peak < 160 * 1024, "peak {peak} KiB for a 200 MB line");
}

/// `ocview archive import` gives SQLite mimalloc (a twelfth of its
/// writing stage was the C library's `malloc` and its lock); every other
/// command keeps SQLite on the C library's, which holds less for a
/// query over a large archive. The binary says which in its log.
#[test]
fn only_an_import_moves_sqlites_memory_to_mimalloc() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let archive = dir.path().join("archive.db");
    let recording = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    );
    let said = |args: &[&str]| {
        support::succeeded(
            Command::new(env!("CARGO_BIN_EXE_ocview"))
                .args(["--archive", archive.to_str().unwrap()])
                .args(args)
                .env("XDG_STATE_HOME", &state)
                .env("OCVIEW_LOG", "info"),
        );
        let log = std::fs::read_to_string(state.join("ocview/ocview.log")).unwrap_or_default();
        log.matches("SQLite takes its memory from mimalloc").count()
    };
    assert_eq!(said(&["archive", "import", recording]), 1);
    assert_eq!(
        said(&["search", "--json", "quick"]),
        1,
        "a search keeps the C library's"
    );
    assert_eq!(said(&["archive", "stats"]), 1);
    assert_eq!(said(&["archive", "import", recording]), 2);
}
