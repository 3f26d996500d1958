//! `--session ID` opens that session at once: the whole id, or a start of
//! it only one session has; an ambiguous start or an unknown id is said in
//! the status line, with the ids near it. A recording in tmux, and the real
//! server.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::fake_model::{FakeModel, Step};
use support::opencode::Server;
use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

/// Three sessions, the newest first in the list: two share `ses_aa`.
fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = Vec::new();
    for (i, (id, title, text)) in [
        ("ses_bb01", "Billing report", "TEXT-OF-BB01"),
        ("ses_aa02", "Alpha two", "TEXT-OF-AA02"),
        ("ses_aa01", "Alpha one", "TEXT-OF-AA01"),
    ]
    .into_iter()
    .enumerate()
    {
        let t = 1_700_000_000_000i64 + i as i64 * 1000;
        lines.push(format!(
            r#"{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"{title}","time":{{"created":{t},"updated":{t}}}}}}}}}"#
        ));
        lines.push(format!(
            r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_{i}","sessionID":"{id}","role":"assistant","time":{{"created":{t},"completed":{t}}}}}}}}}"#
        ));
        lines.push(format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{i}","messageID":"msg_{i}","sessionID":"{id}","type":"text","text":"{text}","time":{{"start":{t},"end":{t}}}}}}}}}"#
        ));
    }
    let path = dir.join("three.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn replay(tag: &str, args: &str) -> (Tmux, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = recording(dir.path());
    let t = Tmux::start_sized(tag, 120, 30);
    t.line(&format!("{} replay {} {args}", bin(), file.display()));
    (t, dir)
}

fn quit(t: &Tmux) {
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn a_whole_id_opens_its_session_as_the_recording_reaches_it() {
    // Without the flag the newest session (the last created) would show.
    let (t, _dir) = replay("sess-full", "--instant --session ses_aa02");
    let screen = t.wait_for("the session opened", |s| s.contains("TEXT-OF-AA02"));
    assert!(!screen.contains("TEXT-OF-AA01"), "{screen}");
    // The turn view has the keys: j moves in it, not in the list.
    quit(&t);
}

#[test]
fn a_start_only_one_session_has_opens_it() {
    let (t, _dir) = replay("sess-prefix", "--start end --session ses_b");
    let screen = t.wait_for("the session opened", |s| s.contains("TEXT-OF-BB01"));
    assert!(!screen.contains("TEXT-OF-AA01"), "{screen}");
    quit(&t);
}

#[test]
fn an_ambiguous_start_is_said_with_the_sessions_that_have_it() {
    let (t, _dir) = replay("sess-ambiguous", "--start end --session ses_aa");
    let screen = t.wait_for("the miss said", |s| {
        s.contains("--session ses_aa matches 2")
    });
    assert!(
        screen.contains("ses_aa01") && screen.contains("ses_aa02"),
        "{screen}"
    );
    quit(&t);
}

#[test]
fn an_unknown_id_is_said_with_the_ids_nearest_it() {
    let (t, _dir) = replay("sess-unknown", "--start end --session ses_aa09");
    let screen = t.wait_for("the miss said", |s| s.contains("no such session"));
    assert!(
        screen.contains("near: ses_aa02") || screen.contains("near: ses_aa01"),
        "{screen}"
    );
    quit(&t);
}

/// The real server: the session asked for is not the one the list would
/// select (the newest), yet it opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_opens_the_session_a_unique_start_names() {
    let model = FakeModel::start(std::sync::Arc::new(|_: &Value, _: usize| {
        Step::text("ANSWER-IN-OLDER")
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let older = server.create_session().await;
    server.prompt(&older, "say it").await;
    server.wait_idle(&older, 60).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let newer = server.create_session().await;
    // The shortest start of the older id that the newer one does not share.
    let common = older
        .chars()
        .zip(newer.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let prefix = &older[..common + 1];
    let t = Tmux::start_sized("sess-live", 120, 30);
    t.line(&format!(
        "{} attach {} --session {prefix}",
        bin(),
        server.url()
    ));
    t.wait_for("the older session opened", |s| {
        s.contains("ANSWER-IN-OLDER")
    });
    quit(&t);

    // An unknown id is said once the server's sessions are listed.
    let t = Tmux::start_sized("sess-live-miss", 120, 30);
    t.line(&format!(
        "{} attach {} --session ses_nothing_like_it",
        bin(),
        server.url()
    ));
    t.wait_for("the miss said", |s| {
        s.contains("--session ses_nothing_like_it: no such session")
    });
    quit(&t);
}
