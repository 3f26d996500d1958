//! A fleet's recording (every line names its server) replays to the same
//! fleet: each server's sessions and prompts apart, ids scoped, the
//! servers' states; and a one-server recording replays as before.

use crate::common;
use crate::support;

use ocview::model::store::fleet::{ServerState, server_of};
use ocview::source::msg::SourceMsg;
use serde_json::{Value, json};

/// Three servers, each running one captured scenario; the third dies
/// at the end. Lines interleave by their time, as a fleet recording's do.
const SERVERS: [(&str, &str); 3] = [
    ("alpha:4096", "a_bash_permission_once"),
    ("beta:4097", "d_question"),
    ("gamma:4098", "e_task_subagent"),
];

fn report(key: &str, t: u64, state: &str) -> (u64, String) {
    let event = json!({"type": "ocview.server", "properties": {
        "url": format!("http://{key}"), "state": state, "directory": format!("/srv/{key}")}});
    (
        t,
        json!({"t": t, "server": key, "event": event}).to_string(),
    )
}

pub fn three_server_recording() -> Vec<u8> {
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut end = 0;
    for (key, scenario) in SERVERS {
        lines.push(report(key, 0, "live"));
        let text = String::from_utf8(common::fixture(scenario, "event.jsonl")).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut v: Value = serde_json::from_str(line).unwrap();
            let t = v["t"].as_u64().unwrap_or(0);
            end = end.max(t);
            v["server"] = json!(key);
            lines.push((t, v.to_string()));
        }
    }
    lines.push(report("gamma:4098", end + 1, "gone"));
    lines.sort_by_key(|(t, _)| *t);
    let header = json!({"ocview_recording": 1, "server": "http://alpha:4096 http://beta:4097 http://gamma:4098"});
    let mut out = format!("{header}\n");
    for (_, line) in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn a_three_server_recording_replays_to_the_fleet() {
    let bytes = three_server_recording();
    let (store, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0, "{stats:?}");
    let servers: Vec<(&str, &ServerState)> = store
        .servers()
        .iter()
        .map(|s| (s.key.as_str(), &s.state))
        .collect();
    assert_eq!(
        servers,
        [
            ("alpha:4096", &ServerState::Live),
            ("beta:4097", &ServerState::Live),
            ("gamma:4098", &ServerState::Gone)
        ]
    );
    // Each server's sessions, as its own recording alone replays them.
    for (key, scenario) in SERVERS {
        let (alone, _) = common::replay_bytes(&common::fixture(scenario, "event.jsonl"));
        let mine: Vec<&str> = store
            .sessions()
            .iter()
            .filter(|s| server_of(&s.info.id) == Some(key))
            .map(|s| ocview::model::store::fleet::bare(&s.info.id))
            .collect();
        let theirs: Vec<&str> = alone
            .sessions()
            .iter()
            .map(|s| s.info.id.as_str())
            .collect();
        assert_eq!(mine, theirs, "{key}");
        for s in alone.sessions() {
            let scoped = store
                .session(&ocview::model::store::fleet::scoped(&s.info.id, key))
                .unwrap();
            assert_eq!(scoped.messages.len(), s.messages.len(), "{key}");
            assert_eq!(scoped.title(), s.title());
            // A child stays under its parent, in its own server.
            if let Some(parent) = &scoped.info.parent_id {
                assert_eq!(server_of(parent), Some(key));
            }
        }
    }
    assert!(
        store
            .sessions()
            .iter()
            .all(|s| server_of(&s.info.id).is_some())
    );
    assert!(
        store
            .prompts()
            .iter()
            .all(|p| server_of(p.request.id()).is_some())
    );
}

#[test]
fn the_fleet_shows_its_servers_and_names_the_one_that_asks() {
    // Stop where the first server's permission waits.
    let bytes = three_server_recording();
    let text = String::from_utf8(bytes).unwrap();
    let upto: String = text
        .lines()
        .take_while(|l| !l.contains("permission.replied"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut app = common::app_with(upto.as_bytes());
    let pending: Vec<String> = app
        .store
        .pending_prompts()
        .map(|p| p.request.id().to_string())
        .collect();
    assert!(
        pending.iter().any(|id| id.ends_with("@alpha:4096")),
        "{pending:?}"
    );
    let screen = common::screen(&mut app, 160, 40);
    assert!(screen.contains("alpha:4096 ›"), "{screen}");
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.contains("3 servers: 3 live"), "{status}");
}

#[test]
fn a_reconcile_drops_only_its_own_servers_sessions() {
    let mut app = common::app_with(&three_server_recording());
    let before = app.store.sessions().len();
    let alpha = app
        .store
        .sessions()
        .iter()
        .filter(|s| server_of(&s.info.id) == Some("alpha:4096"))
        .count();
    assert!(alpha > 0 && alpha < before);
    // Alpha now lists no session (its storage was wiped): only alpha's go.
    app.on_source(SourceMsg::Reconcile {
        server: Some("alpha:4096".into()),
        sessions: Default::default(),
        pending_prompts: Default::default(),
    });
    assert_eq!(app.store.sessions().len(), before - alpha);
    assert!(
        app.store
            .sessions()
            .iter()
            .all(|s| server_of(&s.info.id) != Some("alpha:4096"))
    );
}

#[test]
fn the_binary_replays_a_fleet_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    std::fs::write(&path, three_server_recording()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "--dump"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for (key, _) in SERVERS {
        assert!(text.contains(&format!("@{key}")), "{key}: {text}");
    }
    assert!(
        text.contains("0 malformed") || !text.contains("malformed"),
        "{text}"
    );
}

/// The real binary plays a fleet recording with its player: at the end,
/// the three servers' headings and the tally, gone included.
#[test]
fn the_player_shows_the_recorded_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    std::fs::write(&path, three_server_recording()).unwrap();
    let t = support::tmux::Tmux::start_sized("fleet-replay", 200, 40);
    t.line(&format!(
        "{} replay {} --start end",
        env!("CARGO_BIN_EXE_ocview"),
        path.display()
    ));
    let screen = t.wait_for("the fleet at the end", |sc| {
        sc.contains("3 servers: 2 live · 1 gone")
    });
    for (key, _) in SERVERS {
        assert!(screen.contains(key), "{key}: {screen}");
    }
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// A fleet with no session yet says where each server stands, and why.
#[test]
fn a_fleet_without_sessions_says_where_each_server_stands() {
    let line = |key: &str, props: Value| {
        let event = json!({"type": "ocview.server", "properties": props});
        format!("{}\n", json!({"t": 1, "server": key, "event": event}))
    };
    let text = line(
        "a:1",
        json!({"url": "http://a:1", "state": "reconnecting", "attempt": 2, "reason": "no server at http://a:1"}),
    ) + &line(
        "b:2",
        json!({"url": "http://b:2", "state": "auth-failed", "reason": "the password was refused"}),
    );
    let mut app = common::app_with(text.as_bytes());
    let screen = common::screen(&mut app, 140, 20);
    assert!(screen.contains("No sessions yet."), "{screen}");
    assert!(
        screen.contains("a:1  reconnecting 2: no server at http://a:1"),
        "{screen}"
    );
    assert!(
        screen.contains("b:2  auth failed: the password was refused"),
        "{screen}"
    );
    assert!(screen.contains("2 servers: 1 reconnecting · 1 auth failed"));
}

/// Two servers, each with a busy session; then beta goes, at `t` 5.
fn two_busy_servers_then_beta_goes() -> Vec<u8> {
    let mut lines = vec![
        report("alpha:4096", 0, "live"),
        report("beta:4097", 0, "live"),
    ];
    for (key, id, title) in [
        ("alpha:4096", "ses_a", "Alpha work"),
        ("beta:4097", "ses_b", "Beta work"),
    ] {
        let created = json!({"type": "session.created", "properties": {"info":
            {"id": id, "title": title, "directory": format!("/srv/{key}"), "time": {"created": 1, "updated": 1}}}});
        let busy = json!({"type": "session.status", "properties": {"sessionID": id, "status": {"type": "busy"}}});
        for (t, event) in [(1, created), (2, busy)] {
            lines.push((
                t,
                json!({"t": t, "server": key, "event": event}).to_string(),
            ));
        }
    }
    lines.push(report("beta:4097", 5, "gone"));
    lines.sort_by_key(|(t, _)| *t);
    let mut out = String::from("{\"ocview_recording\":1}\n");
    for (_, line) in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}

/// A gone server runs nothing: its busy session stops spinning and is no
/// longer counted busy (list, heading, totals); the live one still is.
#[test]
fn a_gone_servers_busy_sessions_stop() {
    use ocview::model::SessionStatus;
    let mut app = common::app_with(&two_busy_servers_then_beta_goes());
    let status = |app: &ocview::app::App, id: &str| app.store.session(id).unwrap().status.clone();
    assert_eq!(status(&app, "ses_a@alpha:4096"), SessionStatus::Busy);
    assert_eq!(status(&app, "ses_b@beta:4097"), SessionStatus::Idle);
    assert!(app.animating(), "alpha's session still spins");
    let screen = common::screen(&mut app, 140, 30);
    // The list's rows: the left column.
    let row = |title: &str| {
        screen
            .lines()
            .map(|l| l.split('│').next().unwrap_or(""))
            .find(|l| l.contains(title))
            .unwrap_or_else(|| panic!("{screen}"))
            .to_string()
    };
    let (beta_row, alpha_row) = (row("Beta work"), row("Alpha work"));
    let spinners = ["⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷"];
    assert!(!spinners.iter().any(|s| beta_row.contains(s)), "{beta_row}");
    assert!(
        spinners.iter().any(|s| alpha_row.contains(s)),
        "{alpha_row}"
    );
    assert!(!screen.contains("2 busy"), "{screen}");

    // A live viewer fed the same lines shows the same: the report is what
    // stops the session, and the recording holds it.
    let mut live =
        ocview::app::App::new(ocview::app::config::Config::default(), "fleet", false).unwrap();
    let text = String::from_utf8(two_busy_servers_then_beta_goes()).unwrap();
    for (i, line) in text.lines().enumerate().skip(1) {
        let record =
            ocview::source::decode::apply::decode_record(line.as_bytes(), i as u64 + 1, true);
        live.on_source(SourceMsg::Record(Box::new(record)));
    }
    assert_eq!(status(&live, "ses_b@beta:4097"), SessionStatus::Idle);
    assert_eq!(status(&live, "ses_a@alpha:4096"), SessionStatus::Busy);
}

/// The real fleet source, recording: the server restarts and has lost a
/// session. The live view drops it (the resync's reconcile); the recording
/// says so (`ocview.sessions`), so its replay ends with the same list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_lost_a_session_replays_as_the_live_view_ended() {
    use ocview::source::live::fleet::{self, FleetServer};
    use ocview::source::live::{Client, LiveOptions};
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    use support::fleet_server::{FakeFleet, session_id};

    let fake = FakeFleet::start(1, 3, 0.0);
    let url = fake.urls[0].clone();
    let server = FleetServer {
        key: fleet::key_of(&url),
        client: Client::new(&url, None),
        options: LiveOptions::default(),
        directory: None,
    };
    let (feed_tx, mut feed_rx) = tokio::sync::mpsc::unbounded_channel();
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let _handle = fleet::spawn(vec![server], tx, true, Some(feed_tx));
    let mut live =
        ocview::app::App::new(ocview::app::config::Config::default(), "fleet", false).unwrap();
    let ids = |store: &ocview::model::store::Store| {
        let mut ids: Vec<String> = store.sessions().iter().map(|s| s.info.id.clone()).collect();
        ids.sort();
        ids
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while live.store.sessions().len() < 3 {
        let msg = tokio::time::timeout_at(deadline, rx.recv()).await;
        live.on_source(msg.expect("the three sessions load").unwrap());
    }
    // The server restarts without session 1.
    let counts = &fake.counts[0];
    counts.lost.lock().unwrap().push(session_id(0, 1));
    counts.restarts.fetch_add(1, Ordering::Relaxed);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while live.store.sessions().len() > 2 {
        let msg = tokio::time::timeout_at(deadline, rx.recv()).await;
        live.on_source(msg.expect("the lost session goes").unwrap());
    }
    assert_eq!(
        counts.streams.load(Ordering::Relaxed),
        2,
        "reconnected once"
    );
    // Whatever is still on its way is the live view's too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Ok(msg) = rx.try_recv() {
        live.on_source(msg);
    }
    let seen = ids(&live.store);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(!seen.iter().any(|id| id.starts_with(&session_id(0, 1))));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    let mut recorder =
        ocview::source::recording::recorder::Recorder::create(&path, &url, None).unwrap();
    while let Ok(feed) = feed_rx.try_recv() {
        recorder.feed(feed).unwrap();
    }
    drop(recorder);
    let (replayed, stats) = common::replay_file(&path);
    assert_eq!(stats.malformed, 0, "{stats:?}");
    assert_eq!(ids(&replayed), seen, "the replay ends as the live view did");
}
