//! Recording a live server: `ocview record URL FILE` killed with SIGKILL
//! mid-stream leaves a file that replays (at most the line being written is
//! lost), and the file is private; a prompt answered elsewhere while the
//! recorder was disconnected is settled in the replay as in the live view.

use crate::common;
use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use support::cut_proxy::CutProxy;
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_killed_mid_stream_still_replays() {
    let long = "word ".repeat(400);
    let model = FakeModel::start(steps(vec![Step::text(&long)])).await;
    let server = Server::start(&model.url()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["record", &server.url()])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .spawn()
        .unwrap();
    let wait = |what: &str, f: &dyn Fn(&str) -> bool| wait_in_file(&file, what, f);
    wait("the connection", &|t| t.contains("server.connected"));
    let s = server.create_session().await;
    server.prompt(&s, "talk a lot").await;
    wait("some deltas", &|t| {
        t.matches("message.part.delta").count() > 5
    });
    // Mid-stream: no chance to finish anything.
    child.kill().unwrap();
    child.wait().unwrap();

    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "recordings can hold secrets");
    let bytes = std::fs::read(&file).unwrap();
    let (store, stats) = common::replay_bytes(&bytes);
    assert!(
        stats.malformed <= 1,
        "at most the line being written is lost: {:?}",
        stats.problems()
    );
    assert!(stats.skipped >= 1, "the header line is recognised");
    let session = store.session(&s).expect("the session is in the recording");
    let text: String = session
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.text())
        .collect();
    assert!(
        text.contains("talk a lot") && text.contains("word word"),
        "{text:?}"
    );
    server.wait_idle(&s, 60).await;
}

/// The state part of a dump's bytes.
/// Wait (up to 60 s) until the recording at `file` satisfies `f`.
fn wait_in_file(file: &std::path::Path, what: &str, f: &dyn Fn(&str) -> bool) {
    let read = || std::fs::read_to_string(file).unwrap_or_default();
    let start = Instant::now();
    while !f(&read()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}:\n{}",
            read()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn state_of(dump: &[u8]) -> String {
    common::dump_state(&String::from_utf8_lossy(dump))
}

/// `ocview record` started after a turn finished still records that turn:
/// the recording replays to what a fresh attach shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_started_after_a_turn_replays_to_a_fresh_attach() {
    let model = FakeModel::start(steps(vec![
        Step::text("The answer is **42**.").reasoning("Think first."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    server.prompt(&s, "asked before the recording").await;
    server.wait_idle(&s, 60).await;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("late.jsonl");
    let bin = env!("CARGO_BIN_EXE_ocview");
    let mut child = std::process::Command::new(bin)
        .args(["record", &server.url()])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !std::fs::read_to_string(&file)
        .unwrap_or_default()
        .contains("The answer is **42**.")
    {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the finished turn was not recorded");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Record for a moment, then stop as Ctrl-C does.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("recorded"), "{stderr}");

    let replay = std::process::Command::new(bin)
        .arg("replay")
        .arg(&file)
        .arg("--dump")
        .output()
        .unwrap();
    assert!(replay.status.success());
    let fresh = std::process::Command::new(bin)
        .args([
            "attach",
            &server.url(),
            "--dump-when-idle",
            "--timeout",
            "60",
        ])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .output()
        .unwrap();
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    let (replayed, attached) = (state_of(&replay.stdout), state_of(&fresh.stdout));
    assert!(
        replayed.contains("asked before the recording") && replayed.contains("42"),
        "{replayed}"
    );
    assert_eq!(replayed, attached);
}

/// A password the real server rejects: `record` says so at once and
/// leaves no file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_with_a_rejected_password_fails_fast_and_leaves_no_file() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start_with(&model.url(), Some("right")).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denied.jsonl");
    for password in [None, Some("wrong")] {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"));
        c.args(["record", &server.url()]).arg(&file);
        match password {
            Some(p) => c.env("OPENCODE_SERVER_PASSWORD", p),
            None => c.env_remove("OPENCODE_SERVER_PASSWORD"),
        };
        let start = Instant::now();
        let out = c.output().unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{password:?}: {stderr}");
        // A missing password and a wrong one are told apart.
        let says = match password {
            None => "the server wants a password (HTTP 401",
            Some(_) => "authentication failed (HTTP 401",
        };
        assert!(stderr.contains(says), "{password:?}: {stderr}");
        assert!(took < Duration::from_secs(2), "{password:?}: took {took:?}");
        assert!(!file.exists(), "{password:?}: a file was left");
    }
}

/// Issue 22, point 6: a permission is pending when the recorder loses its
/// server; another client answers it while the recorder is away, so the
/// recording never sees `permission.replied`. The reconnect's snapshot no
/// longer lists it: the live view forgets it, and the recording says so
/// (`ocview.pending-prompts`), so its replay ends with nothing pending, as
/// a fresh attach does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_answered_while_disconnected_is_settled_in_the_replay() {
    let model = FakeModel::start(steps(vec![
        Step::text("Listing.").then_tool(
            "bash",
            serde_json::json!({"command": "echo away-e2e", "description": "list"}),
        ),
        Step::text("Listed while you were away."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let proxy = CutProxy::start(&server.url()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("away.jsonl");
    let bin = env!("CARGO_BIN_EXE_ocview");
    let child = std::process::Command::new(bin)
        .args(["record", &proxy.url])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _reap = KillIfPanicking(child.id());
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let wait = |what: &str, f: &dyn Fn(&str) -> bool| wait_in_file(&file, what, f);
    wait("the connection", &|t| t.contains("server.connected"));
    let s = server.create_session().await;
    server.prompt(&s, "list the files").await;
    wait("the permission", &|t| t.contains("\"permission.asked\""));

    proxy.cut();
    assert_eq!(server.answer_permissions("once").await, 1);
    server.wait_idle(&s, 60).await;
    proxy.restore();
    // The second connection's stream: its snapshot is written before it.
    wait("the reconnect", &|t| {
        t.matches("server.connected").count() >= 2
    });
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded = read();
    assert!(
        !recorded.contains("\"permission.replied\""),
        "the answer was given while the recorder was away"
    );

    let replay = std::process::Command::new(bin)
        .arg("replay")
        .arg(&file)
        .arg("--dump")
        .output()
        .unwrap();
    assert!(replay.status.success());
    let replayed = state_of(&replay.stdout);
    assert!(replayed.contains("pending prompts: 0"), "{replayed}");
    assert!(
        replayed.contains("Listed while you were away."),
        "{replayed}"
    );
    let fresh = std::process::Command::new(bin)
        .args([
            "attach",
            &server.url(),
            "--dump-when-idle",
            "--timeout",
            "60",
        ])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .output()
        .unwrap();
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    assert_eq!(replayed, state_of(&fresh.stdout));
}

/// Kills the recorder when a test step panics, so none is left reconnecting.
struct KillIfPanicking(u32);

impl Drop for KillIfPanicking {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}
