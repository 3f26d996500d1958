//! Recording a live server: `ocview record URL FILE` killed with SIGKILL
//! mid-stream leaves a file that replays (at most the line being written is
//! lost), and the file is private.

mod common;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

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
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let wait = |what: &str, f: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        while !f(&read()) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "timed out waiting for {what}:\n{}",
                read()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
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
