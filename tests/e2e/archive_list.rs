//! Archived sessions in the list, beside the live servers: grouped under
//! the machine and server (or file) they came from, listed once when a
//! live server also has them, opened from the archive's latest state. On
//! PostgreSQL a session a teammate archives appears in a running viewer's
//! list without a restart (NOTIFY/LISTEN), and a read-only role sees and
//! opens them, told once that the archive is read-only.

use crate::common;
use crate::support;
use crate::support::postgres as postgres_support;

use std::time::{Duration, Instant};

use common::{app_with, screen};
use ocview::archive::list_reader::{self, origin_key};
use ocview::archive::{Origin, Setting};
use ocview::model::store::fleet;
use ocview::source::live::LiveCommand;
use ocview::source::msg::SourceMsg;
use support::archived::{T, archive_session, archive_teammates_session, session_lines, teammate};
use support::fleet_server::FakeFleet;
use support::tmux::Tmux;

const NOW: i64 = 1_795_339_400_000;

/// Whether a message lists a session.
fn is_session(msg: &SourceMsg) -> bool {
    use ocview::model::Event;
    use ocview::source::decode::record::Decoded;
    matches!(msg, SourceMsg::Record(r)
        if matches!(&r.item, Ok(Decoded::Event(env)) if matches!(env.event, Event::SessionUpdated(_))))
}

/// What the list reader sends until `done` (given the messages and how
/// many sessions they list) says enough, or 20 s.
fn receive_until(
    rx: &mut tokio::sync::mpsc::Receiver<SourceMsg>,
    mut done: impl FnMut(&[SourceMsg], usize) -> bool,
) -> Vec<SourceMsg> {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut sessions = 0;
    while !done(&got, sessions) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the archive's list reader sent only {} messages, {sessions} sessions; the last: {:?}",
            got.len(),
            got.last()
        );
        match rx.try_recv() {
            Ok(msg) => {
                sessions += usize::from(is_session(&msg));
                got.push(msg);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    got
}

const A: &str = "127.0.0.1:4096";

/// The session list's rows (the left pane, up to its border).
fn list(screen: &str) -> Vec<String> {
    screen
        .lines()
        .take_while(|l| l.contains('│'))
        .map(|l| l.split('│').next().unwrap_or("").trim_end().to_string())
        .collect()
}

/// A live fleet of one server with one session, `ses_a1`.
fn live_fleet() -> Vec<u8> {
    let t = T - 30_000;
    format!(
        r#"{{"server":"{A}","type":"ocview.server","properties":{{"url":"http://{A}","state":"live","directory":"/home/me/src/ocview"}}}}
{{"server":"{A}","type":"session.created","properties":{{"info":{{"id":"ses_a1","title":"Fix the fleet list","directory":"/home/me/src/ocview","time":{{"created":{t},"updated":{t}}}}}}}}}
"#
    )
    .into_bytes()
}

/// The list reader on an SQLite archive holding a teammate's session, a
/// recording's, and a copy of the live session: the first two under
/// their origins after the live server, the copy not at all.
#[test]
fn archived_sessions_list_by_origin_once_and_open_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut engine = ocview::archive::sqlite::SqliteArchive::open(&path).unwrap();
    archive_teammates_session(&mut engine, 600);
    archive_session(
        &mut engine,
        Origin {
            server: None,
            host: "build-box".into(),
            file: Some("/rec/nightly.jsonl".into()),
        },
        &session_lines(
            "ses_file1",
            "Nightly refactor",
            "/srv/ci",
            "Renamed the module",
            7200,
        ),
    );
    archive_session(
        &mut engine,
        Origin {
            server: Some("http://old:4096".into()),
            host: "old-box".into(),
            file: None,
        },
        &session_lines(
            "ses_a1",
            "ARCHIVED COPY",
            "/home/me/src/ocview",
            "old text",
            900,
        ),
    );
    drop(engine);

    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let handle = list_reader::spawn(Setting::Sqlite(path), None, tx);
    let msgs = receive_until(&mut rx, |_, n| n == 3);
    let mut app = app_with(&live_fleet());
    app.now_ms = NOW;
    for msg in msgs {
        app.on_source(msg);
    }
    let team = origin_key(Some("ana-laptop"), Some("http://10.0.0.7:4096"), None);
    let wide = screen(&mut app, 200, 50);
    // One Archive heading, each origin a group under it.
    assert!(wide.contains(" ▾ Archive"), "{wide}");
    assert!(wide.contains("  ▾ ana-laptop · 10.0.0.7:4096"), "{wide}");
    assert!(
        wide.contains("  ▾ build-box · /rec/nightly.jsonl"),
        "{wide}"
    );
    assert!(!wide.contains("archived"), "{wide}");
    assert!(wide.contains("Teammate fixes billing"), "{wide}");
    // Shown live: once, live; its origin has nothing else to show.
    let rows = list(&wide);
    assert_eq!(
        rows.iter()
            .filter(|r| r.contains("Fix the fleet list"))
            .count(),
        1,
        "{wide}"
    );
    assert!(
        !wide.contains("ARCHIVED COPY") && !wide.contains("old-box"),
        "{wide}"
    );
    // The live server first, the archive after it.
    assert!(
        wide.find(A).unwrap() < wide.find("ana-lapt").unwrap(),
        "{wide}"
    );
    insta::assert_snapshot!("archive_list_200x50", wide);
    let narrow = screen(&mut app, 80, 24);
    // Narrow, the list is one line: three sessions, the copy not one.
    assert!(narrow.contains("Sessions 1/3"), "{narrow}");
    insta::assert_snapshot!("archive_list_80x24", narrow);

    // Opening it: its latest state from the archive, through the reducer.
    let id = fleet::scoped("ses_team1", &team);
    assert!(handle.send(LiveCommand::Open(id.clone())));
    let opened = receive_until(&mut rx, |m, _| {
        m.iter()
            .any(|m| matches!(m, SourceMsg::Messages { complete: true, .. }))
    });
    for msg in opened {
        app.on_source(msg);
    }
    let session = app.store.session(&id).expect("the archived session");
    let texts: Vec<String> = session
        .messages
        .iter()
        .flat_map(|m| m.parts.iter().filter_map(|p| p.text().map(str::to_string)))
        .collect();
    assert_eq!(texts, ["The invoice rounding is fixed"]);
}

/// Ten thousand archived sessions list in pages: the first at once, the
/// rest in the background, every one of them.
#[test]
fn ten_thousand_archived_sessions_list_in_pages() {
    let n = std::env::var("ARCHIVE_LIST_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000usize);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut engine = ocview::archive::sqlite::SqliteArchive::open(&path).unwrap();
    let mut lines = String::new();
    for i in 0..n {
        let t = T - i as i64 * 1000;
        lines.push_str(&format!(
            r#"{{"type":"session.updated","properties":{{"info":{{"id":"ses_{i:06}","title":"session {i}","directory":"/p","time":{{"created":{t},"updated":{t}}}}}}}}}"#
        ));
        lines.push('\n');
    }
    archive_session(&mut engine, teammate(), &lines);
    drop(engine);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let start = Instant::now();
    let _handle = list_reader::spawn(Setting::Sqlite(path), None, tx);
    let first = receive_until(&mut rx, |_, k| k == list_reader::FIRST_PAGE as usize);
    let first_page = start.elapsed();
    let rest = receive_until(&mut rx, |_, k| k + list_reader::FIRST_PAGE as usize == n);
    assert!(!first.is_empty());
    println!(
        "{n} archived sessions: the first {} in {first_page:?}, all in {:?}",
        list_reader::FIRST_PAGE,
        start.elapsed()
    );
    assert!(!rest.is_empty());
}

/// Another ocview (another terminal of this machine) archives a session
/// of a server this viewer watches into PostgreSQL; the running viewer (the
/// real binary, in tmux) lists it under its Archive heading without a
/// restart, enter shows its text; a session of a server it does not watch
/// is not listed. Then a read-only role lists and opens it, told once.
#[test]
fn another_viewers_session_appears_in_a_running_viewers_list() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("team");
    // The archive's schema, made before the viewer starts.
    let mut writer = ocview::archive::postgres::PgArchive::open(&url).unwrap();
    let fleet = FakeFleet::start(2, 2, 0.0);
    let t = Tmux::start_sized("archivelist", 200, 50);
    let home = t.home().display().to_string();
    t.line(&format!(
        "XDG_DATA_HOME={home} OPENCODE_DB={home}/none.db {} --archive '{url}' attach {} {}",
        env!("CARGO_BIN_EXE_ocview"),
        fleet.urls[0],
        fleet.urls[1]
    ));
    t.wait_for("the fleet's sessions", |s| {
        s.contains("keep the fleet busy")
    });

    // A session of a server this viewer does not watch: not listed.
    let live_id = "ses_0000fleetloadXXXXXXXXXXXXXX";
    archive_session(
        &mut writer,
        Origin {
            server: Some("http://elsewhere:4096".into()),
            host: "other-box".into(),
            file: None,
        },
        &session_lines(live_id, "ARCHIVED COPY", "/srv/0", "old", 60),
    );
    let written = Instant::now();
    let here = Origin {
        server: Some(fleet.urls[0].clone()),
        host: ocview::archive::origin::hostname(),
        file: None,
    };
    archive_session(
        &mut writer,
        here,
        &session_lines(
            "ses_team1",
            "Teammate fixes billing",
            "/home/ana/billing",
            "The invoice rounding is fixed",
            30,
        ),
    );
    t.wait_for("the Archive heading", |s| s.contains(" ▸ Archive"));
    println!(
        "another viewer's session in the list {:?} after its write",
        written.elapsed()
    );
    t.keys(&["G"]);
    t.wait_for("the Archive heading selected", |s| {
        s.lines().any(|l| l.contains('›') && l.contains("Archive"))
    });
    t.keys(&["Space"]);
    let shown = t.wait_for("the other viewer's session", |s| {
        s.contains("Teammate fixes billing")
    });
    assert!(
        !shown.contains("ARCHIVED COPY") && !shown.contains("other-box"),
        "{shown}"
    );

    // Enter opens it with its text.
    t.keys(&["G"]);
    t.wait_for("the archived session selected", |s| {
        s.lines()
            .any(|l| l.contains('›') && l.contains("Teammate fixes billing"))
    });
    t.keys(&["Enter"]);
    t.wait_for("the archived session's text", |s| {
        s.contains("The invoice rounding is fixed")
    });
    t.keys(&["q"]);

    // A read-only role: listed and opened, said once.
    pg.sql("team", "CREATE ROLE reader LOGIN");
    pg.sql(
        "team",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let handle = list_reader::spawn(Setting::Postgres(pg.url("team", "reader")), None, tx);
    let msgs = receive_until(&mut rx, |_, n| n >= 2);
    let said: Vec<&String> = msgs
        .iter()
        .filter_map(|m| match m {
            SourceMsg::Notice(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("archive: read-only"), "{said:?}");
    let team = origin_key(Some("ana-laptop"), Some("http://10.0.0.7:4096"), None);
    assert!(handle.send(LiveCommand::Open(fleet::scoped("ses_team1", &team))));
    let opened = receive_until(&mut rx, |m, _| {
        m.iter()
            .any(|m| matches!(m, SourceMsg::Messages { complete: true, .. }))
    });
    assert!(
        opened
            .iter()
            .any(|m| format!("{m:?}").contains("The invoice rounding is fixed")),
        "{opened:?}"
    );
}

/// A task card of an archived session counts its child's tool calls from
/// where the child is kept: opening the parent reads the child from the
/// archive too (it was only listed), so the card does not say "0 tool
/// calls".
#[test]
fn an_archived_task_card_counts_the_childs_tool_calls_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    {
        let mut engine = ocview::archive::sqlite::SqliteArchive::open(&path).unwrap();
        let scenario = common::fixtures_dir()
            .join("e_task_subagent")
            .join("event.jsonl");
        ocview::archive::import::import_file(&mut engine, &scenario).unwrap();
    }
    let rt = common::background_runtime();
    let _entered = rt.enter();
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let handle = list_reader::spawn(Setting::Sqlite(path), None, tx);
    let mut app = app_with(b"");
    app.live = Some(ocview::app::launch::archive_list::route(
        None,
        None,
        Some(handle),
    ));
    for msg in receive_until(&mut rx, |_, n| n == 2) {
        app.on_source(msg);
    }
    let parent = app
        .store
        .sessions()
        .iter()
        .find(|s| s.info.parent_id.is_none())
        .map(|s| s.info.id.clone())
        .expect("the parent, listed");
    app.selected = Some(parent);
    app.panes.list.folded.clear();
    let deadline = Instant::now() + Duration::from_secs(20);
    let shown = loop {
        let shown = screen(&mut app, 120, 40);
        if shown.contains("2 tool calls") || Instant::now() > deadline {
            break shown;
        }
        while let Ok(msg) = rx.try_recv() {
            app.on_source(msg);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(shown.contains("2 tool calls"), "{shown}");
}
