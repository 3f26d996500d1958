//! Stopping a busy session from the viewer, against the real opencode
//! server: the real binary in tmux, `X`, the confirmation that names the
//! session, `y`; the server records the abort and the session goes idle.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::Server;
use support::tmux::Tmux;

/// The session's status on the server: "idle" when it has no entry.
async fn status(server: &Server, session: &str) -> String {
    let all = server.get("/session/status").await;
    all.get(session)
        .and_then(|s| s["type"].as_str())
        .unwrap_or("idle")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_and_y_stop_a_busy_session_and_the_server_records_the_abort() {
    // The model starts answering, then holds the stream open: busy.
    let model = FakeModel::start(steps(vec![
        Step::text("Working on the long task now.").stall(Duration::from_secs(300)),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let t = Tmux::attached("abort", 120, 34, &server.url());
    server.prompt(&s, "do the long task").await;
    t.wait_for("the answer streaming", |sc| {
        sc.contains("Working on the long task now.")
    });
    assert_eq!(status(&server, &s).await, "busy");

    // Asked, and kept going: nothing is sent.
    t.keys(&["X"]);
    let asked = t.wait_for("the confirmation", |sc| sc.contains("Stop this session?"));
    assert!(
        asked.contains(&s),
        "the confirmation names the id:\n{asked}"
    );
    t.keys(&["n"]);
    t.wait_for("not stopped", |sc| sc.contains("not stopped"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(status(&server, &s).await, "busy");

    t.keys(&["X"]);
    t.wait_for("the confirmation", |sc| sc.contains("Stop this session?"));
    t.keys(&["y"]);
    server
        .until("the session idle", 30, || async {
            status(&server, &s).await == "idle"
        })
        .await;
    // The aborted answer is finalised with the abort as its error.
    server
        .until("the answer's MessageAbortedError", 30, || async {
            let msgs = server.messages(&s).await;
            msgs.last().is_some_and(|m: &Value| {
                m["info"]["role"] == "assistant"
                    && m["info"]["error"]["name"] == "MessageAbortedError"
            })
        })
        .await;
    let screen = t.wait_for("the result in the viewer", |sc| {
        sc.contains("stopped ") && sc.contains("idle")
    });
    assert!(!screen.contains("Stop this session?"), "{screen}");

    // Idle now: the key says so and asks nothing.
    t.keys(&["X"]);
    t.wait_for("nothing to stop", |sc| {
        sc.contains("is not running: nothing to stop")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
