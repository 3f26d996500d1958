//! Idle means idle: the real binary in tmux, attached to the real server,
//! left alone. After the first frames settle it writes nothing for 30 s,
//! while the server sends its heartbeat every 10 s.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use support::fake_model::{FakeModel, Step};
use support::opencode::Server;
use support::tmux::Tmux;

/// Every event type the server streams from now on, as a second client
/// sees it.
fn watch_events(server: &Server) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (http, url, out) = (server.http(), server.url(), seen.clone());
    tokio::spawn(async move {
        let mut resp = http.get(format!("{url}/event")).send().await.unwrap();
        let mut buf = String::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let frame: String = buf.drain(..end + 2).collect();
                let Some(json) = frame.trim().strip_prefix("data: ") else {
                    continue;
                };
                let v: Value = serde_json::from_str(json).unwrap_or_default();
                let kind = v["type"].as_str().unwrap_or("?").to_string();
                out.lock().unwrap().push(kind);
            }
        }
    });
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_left_alone_writes_nothing_through_heartbeats() {
    let model = FakeModel::start(Arc::new(|_: &Value, _: usize| Step::text("Done."))).await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    server.prompt(&s, "say done").await;
    server.wait_idle(&s, 60).await;
    // The title call ends after the turn: let its update land first.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let t = Tmux::attached("idle", 100, 30, &server.url());
    // Open the session: the turn view shows the finished turn.
    t.keys(&["Enter"]);
    t.wait_for("the turn", |sc| sc.contains("Done."));
    tokio::time::sleep(Duration::from_secs(2)).await;

    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("pane.raw");
    std::fs::write(&raw, b"").unwrap();
    let events = watch_events(&server);
    t.pipe_output_to(&raw);
    tokio::time::sleep(Duration::from_secs(30)).await;
    let written = std::fs::read(&raw).unwrap();
    let events = events.lock().unwrap().clone();

    let heartbeats = events.iter().filter(|e| *e == "server.heartbeat").count();
    assert!(heartbeats >= 2, "the server's heartbeats: {events:?}");
    let others: Vec<&String> = events
        .iter()
        .filter(|e| *e != "server.heartbeat" && *e != "server.connected")
        .collect();
    assert!(others.is_empty(), "the server was not idle: {others:?}");
    assert!(
        written.is_empty(),
        "{} bytes written while idle: {:?}",
        written.len(),
        String::from_utf8_lossy(&written[..written.len().min(400)])
    );

    t.keys(&["q"]);
    t.assert_terminal_restored();
}
