//! The status line against the real server: the source is named once
//! ("http://… · live", never "live http://… · live"), and a recording in
//! progress shows a mark with the file's size, which grows as events come.

use crate::support;

use serde_json::Value;
use support::fake_model::{FakeModel, Step};
use support::opencode::Server;
use support::tmux::Tmux;

fn status(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

/// "● rec 1.4 KB" → bytes.
fn recorded_size(status: &str) -> Option<f64> {
    let rest = status.split("● rec ").nth(1)?;
    let mut words = rest.split_whitespace();
    let n: f64 = words.next()?.parse().ok()?;
    Some(match words.next()? {
        "B" => n,
        "KB" => n * 1024.0,
        "MB" => n * 1024.0 * 1024.0,
        _ => return None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_source_is_named_once_and_a_recording_shows_its_size() {
    let model = FakeModel::start(std::sync::Arc::new(|_: &Value, _: usize| {
        Step::text(
            "A reply long enough to make the recording grow by a few hundred bytes at least.",
        )
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    let t = Tmux::start_sized("status-rec", 120, 30);
    let file = t.home().join("rec.jsonl");
    t.line(&format!(
        "{} attach {} --record {}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url(),
        file.display()
    ));
    let live = t.wait_for("live, recording", |s| {
        status(s).contains("· live") && recorded_size(&status(s)).is_some()
    });
    let line = status(&live);
    assert!(line.contains(&format!("{} · live", server.url())), "{line}");
    assert_eq!(line.matches("live").count(), 1, "{line}");
    let before = recorded_size(&line).unwrap();

    server.prompt(&session, "hello").await;
    server.wait_idle(&session, 60).await;
    // The mark catches up with the file once the events stop (within
    // the rounding of "16.6 KB").
    let on_disk = || std::fs::metadata(&file).unwrap().len() as f64;
    t.wait_for("the mark at the file's size", |s| {
        recorded_size(&status(s))
            .is_some_and(|n| n > before + 500.0 && (n - on_disk()).abs() <= on_disk() * 0.01 + 60.0)
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
