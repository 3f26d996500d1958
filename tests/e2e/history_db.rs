//! opencode's database as history: every session listed (by project, after
//! the live servers), opened through the same reducer and views as live
//! data, followed while it is written, and replayed from its event log.
//! The database is made with the schema a real opencode 1.18.33 created
//! (`fixtures/opencode-1.18.33/database-schema.sql`, read from its own file).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::screen;
use ocview::app::App;
use ocview::source::msg::SourceMsg;
use ocview::source::opencode_db::{Db, event_log, history};
use rusqlite::{Connection, params};
use tokio::sync::mpsc;

pub(crate) const T0: i64 = 1_795_547_214_000;

pub(crate) fn make_db(dir: &Path) -> PathBuf {
    let path = dir.join("opencode.db");
    let c = support::history_db::create(&path, true);
    support::history_db::project(&c, "prj_a", "/work/alpha", T0);
    let session = |id: &str, parent: Option<&str>, title: &str, t: i64| {
        support::history_db::session(&c, id, "prj_a", parent, title, t, Some((0.25, 1200, 300)));
    };
    session("ses_parent", None, "Parent session title", T0);
    session(
        "ses_child",
        Some("ses_parent"),
        "Child task (@general subagent)",
        T0 + 10,
    );
    let msg = |id: &str, session: &str, t: i64, data: &str| {
        support::history_db::message(&c, id, session, t, data);
    };
    let part = |id: &str, message: &str, session: &str, t: i64, data: &str| {
        support::history_db::part(&c, id, message, session, t, data);
    };
    msg(
        "msg_a1",
        "ses_parent",
        T0 + 1,
        &format!(
            r#"{{"role":"user","time":{{"created":{}}},"agent":"build","model":{{"providerID":"mock","modelID":"mock-1"}}}}"#,
            T0 + 1
        ),
    );
    part(
        "prt_a1",
        "msg_a1",
        "ses_parent",
        T0 + 1,
        r#"{"type":"text","text":"Please list the files"}"#,
    );
    msg(
        "msg_a2",
        "ses_parent",
        T0 + 2,
        &format!(
            r#"{{"role":"assistant","parentID":"msg_a1","mode":"build","agent":"build","path":{{"cwd":"/work/alpha","root":"/work/alpha"}},"cost":0.25,"tokens":{{"input":1200,"output":300,"reasoning":0,"cache":{{"read":0,"write":0}}}},"modelID":"mock-1","providerID":"mock","time":{{"created":{},"completed":{}}},"finish":"stop"}}"#,
            T0 + 2,
            T0 + 5
        ),
    );
    part(
        "prt_a2",
        "msg_a2",
        "ses_parent",
        T0 + 3,
        r#"{"type":"text","text":"Here are the files you asked for.","time":{"start":1795547214003,"end":1795547214004}}"#,
    );
    part("prt_a3", "msg_a2", "ses_parent", T0 + 4, r#"[1,2,3]"#);
    c.execute(
        "INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES ('ses_parent', 'Write the tests', 'in_progress', 'high', 0, ?1, ?1)",
        [T0],
    )
    .unwrap();
    // The log holds the first message only (as after an import, the rest
    // is missing): the rows fill it in.
    c.execute(
        "INSERT INTO event_sequence (aggregate_id, seq) VALUES ('ses_parent', 1)",
        [],
    )
    .unwrap();
    c.execute(
        "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?2, 'ses_parent', 0, 'message.updated.1', ?1)",
        [format!(r#"{{"sessionID":"ses_parent","info":{{"id":"msg_a1","sessionID":"ses_parent","role":"user","time":{{"created":{}}},"agent":"build","model":{{"providerID":"mock","modelID":"mock-1"}}}}}}"#, T0 + 1), event_id(T0 + 1)],
    )
    .unwrap();
    path
}

/// An `evt_` id made at `ms`, as opencode makes them (ms × 0x1000, 48 bits).
pub(crate) fn event_id(ms: i64) -> String {
    format!(
        "evt_{:012x}8u3Y5oV8i4uoNR",
        ((ms as u64) << 12) & ((1 << 48) - 1)
    )
}

/// Apply what the reader sends until `until` holds of the screen, or fail.
pub(crate) fn pump(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    rx: &mut mpsc::Receiver<SourceMsg>,
    until: impl Fn(&str) -> bool,
) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = screen(app, 120, 30);
        if until(&text) {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "never came:\n{text}");
        rt.block_on(async {
            if let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await
            {
                app.on_source(msg);
            }
        });
        while let Ok(msg) = rx.try_recv() {
            app.on_source(msg);
        }
    }
}

pub(crate) fn history_app(
    rt: &tokio::runtime::Runtime,
    db: &Path,
) -> (App, mpsc::Receiver<SourceMsg>) {
    history_app_with(rt, db, false)
}

/// `clocked`: ages counted from the newest session, not the wall clock (a
/// snapshot that does not change with the day it runs).
pub(crate) fn history_app_with(
    rt: &tokio::runtime::Runtime,
    db: &Path,
    clocked: bool,
) -> (App, mpsc::Receiver<SourceMsg>) {
    let mut app = App::new(ocview::app::config::Config::default(), "history", clocked).unwrap();
    let (tx, rx) = mpsc::channel(8192);
    let handle = history::spawn(db.to_path_buf(), tx);
    let _guard = rt.enter();
    app.live = Some(ocview::app::launch::archive_list::route(
        None,
        Some(handle),
        None,
    ));
    app.source.state = ocview::source::msg::SourceState::Live;
    (app, rx)
}

#[test]
pub(crate) fn the_database_is_listed_opened_and_followed() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    // Both listed (the reader may send the newer child first).
    let text = pump(&rt, &mut app, &mut rx, |t| {
        t.contains("Child task") && t.contains("Parent session")
    });
    // Grouped by project, the child under its parent.
    assert!(
        text.contains("history") && text.contains("/work/alpha"),
        "{text}"
    );
    let parent_line = text
        .lines()
        .position(|l| l.contains("Parent session"))
        .unwrap();
    let child_line = text
        .lines()
        .position(|l| l.contains("· Child task"))
        .unwrap();
    assert!(child_line > parent_line, "{text}");

    // Opened: its content through the same reducer and views.
    app.selected = Some("ses_parent@history".into());
    let text = pump(&rt, &mut app, &mut rx, |t| t.contains("Here are the files"));
    assert!(text.contains("Please list the files"), "{text}");
    // The part whose data is not an object is counted and named.
    assert_eq!(app.stats.malformed, 1);
    let why = format!("{:?}", app.stats);
    assert!(why.contains("prt_a3") && why.contains("an array"), "{why}");
    let todos = &app.store.session("ses_parent@history").unwrap();
    assert!(format!("{:?}", todos.todos).contains("Write the tests"));

    // Written by opencode meanwhile: followed.
    let c = Connection::open(&db).unwrap();
    let t = T0 + 100;
    c.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_a4', 'msg_a2', 'ses_parent', ?1, ?1, ?2)",
        params![t, r#"{"type":"text","text":"One more thing was written later."}"#],
    )
    .unwrap();
    c.execute(
        "UPDATE session SET time_updated = ?1 WHERE id = 'ses_parent'",
        [t],
    )
    .unwrap();
    pump(&rt, &mut app, &mut rx, |t| {
        t.contains("One more thing was written later")
    });
}

#[test]
pub(crate) fn a_row_written_in_the_same_millisecond_as_the_last_read_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    pump(&rt, &mut app, &mut rx, |t| t.contains("Parent session"));
    app.selected = Some("ses_parent@history".into());
    pump(&rt, &mut app, &mut rx, |t| t.contains("Here are the files"));

    let c = Connection::open(&db).unwrap();
    let write = |id: &str, text: &str, t: i64| {
        c.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, 'msg_a2', 'ses_parent', ?2, ?2, ?3)",
            params![id, t, serde_json::json!({"type": "text", "text": text}).to_string()],
        )
        .unwrap();
        c.execute(
            "UPDATE session SET time_updated = ?1 WHERE id = 'ses_parent'",
            [t],
        )
        .unwrap();
    };
    // Both in the same millisecond, the second after the first was read.
    let t = T0 + 200;
    write("prt_b1", "First of two in one millisecond.", t);
    pump(&rt, &mut app, &mut rx, |s| s.contains("First of two"));
    write("prt_b2", "Second of two in that millisecond.", t);
    let text = pump(&rt, &mut app, &mut rx, |s| s.contains("Second of two"));
    // Read again from that millisecond, the first is not repeated.
    assert_eq!(text.matches("First of two").count(), 1, "{text}");
    let parts = &app.store.session("ses_parent@history").unwrap().messages;
    let ids: Vec<&str> = parts
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.id.as_str()))
        .collect();
    assert_eq!(ids.iter().filter(|i| **i == "prt_b1").count(), 1, "{ids:?}");
}

/// Messages and their parts' texts, as a store holds a session.
pub(crate) fn content(
    store: &ocview::model::Store,
    id: &str,
) -> Vec<(String, Vec<(String, serde_json::Value)>)> {
    let session = store.session(id).unwrap();
    session
        .messages
        .iter()
        .map(|m| {
            (
                m.info.id.clone(),
                m.parts
                    .iter()
                    .map(|p| (p.id.clone(), p.to_value()))
                    .collect(),
            )
        })
        .collect()
}

#[test]
pub(crate) fn the_event_log_replays_to_what_opening_shows() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let bytes = event_log::recording(&Db::open(&db).unwrap(), "ses_parent").unwrap();
    let (replayed, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0);
    // Every line has a time; the log's event is at its id's time.
    let text = String::from_utf8(bytes).unwrap();
    let times: Vec<i64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["t"]
                .as_i64()
                .unwrap()
        })
        .collect();
    // The logged message at its id's time, the filled-in rows at theirs.
    assert_eq!(times, [0, 2, 2, 3, 4, 4, 4], "{text}");
    assert!(text.contains(r#""type":"message.updated""#) && !text.contains(".updated.1"));

    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    pump(&rt, &mut app, &mut rx, |t| t.contains("Parent session"));
    app.selected = Some("ses_parent@history".into());
    pump(&rt, &mut app, &mut rx, |t| t.contains("Here are the files"));
    let opened = content(&app.store, "ses_parent@history");
    assert_eq!(content(&replayed, "ses_parent"), opened);
    assert_eq!(opened.len(), 2);
    let s = replayed.session("ses_parent").unwrap();
    assert!(format!("{:?}", s.todos).contains("Write the tests"));
}

#[test]
pub(crate) fn snapshots_of_the_history_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app_with(&rt, &db, true);
    pump(&rt, &mut app, &mut rx, |t| t.contains("Child task"));
    app.selected = Some("ses_parent@history".into());
    pump(&rt, &mut app, &mut rx, |t| t.contains("Here are the files"));
    insta::assert_snapshot!("history_list_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("history_list_200x50", screen(&mut app, 200, 50));
}

/// A session id as opencode makes them: the low 48 bits of ms × 4096,
/// inverted (newest sort first), so they wrap every 2^36 ms (795 days).
pub(crate) fn descending_id(ms: i64, n: u32) -> String {
    let bits = !((ms as u64) << 12) & ((1 << 48) - 1);
    format!("ses_{bits:012x}Wrapped{n:07}")
}

/// A database whose sessions span opencode's id wrap of 2026-08-14:
/// listed by when they were last active, never by id; a child stays under
/// its parent; a session resumed after the newest one was made is first.
#[test]
pub(crate) fn sessions_on_both_sides_of_the_id_wrap_list_by_time() {
    const WRAP: i64 = 26 << 36; // 2026-08-14T…Z
    const DAY: i64 = 86_400_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    let c = support::history_db::create(&path, true);
    support::history_db::project(&c, "prj_a", "/work/alpha", WRAP - 20 * DAY);
    let times = [
        ("early Aug", WRAP - 13 * DAY),
        ("eve of wrap", WRAP - DAY),
        ("late Aug", WRAP + 6 * DAY),
        ("November", WRAP + 98 * DAY),
    ];
    for (n, (title, t)) in times.iter().enumerate() {
        support::history_db::session(
            &c,
            &descending_id(*t, n as u32),
            "prj_a",
            None,
            title,
            *t,
            None,
        );
    }
    // Made before the wrap, resumed after everything else.
    let resumed = descending_id(WRAP - 30 * DAY, 9);
    support::history_db::session(
        &c,
        &resumed,
        "prj_a",
        None,
        "resumed",
        WRAP - 30 * DAY,
        None,
    );
    c.execute(
        "UPDATE session SET time_updated = ?1 WHERE id = ?2",
        params![WRAP + 99 * DAY, resumed],
    )
    .unwrap();
    let parent = descending_id(WRAP - 13 * DAY, 0);
    support::history_db::session(
        &c,
        &descending_id(WRAP + 7 * DAY, 5),
        "prj_a",
        Some(&parent),
        "a child",
        WRAP + 7 * DAY,
        None,
    );
    drop(c);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &path);
    let text = pump(&rt, &mut app, &mut rx, |t| t.contains("Sessions 6"));
    let order = [
        "resumed",
        "November",
        "late Aug",
        "eve of wrap",
        "early Aug",
        "a child",
    ];
    let at = |title: &str| {
        text.lines()
            .position(|l| l.contains(title))
            .unwrap_or_else(|| panic!("{title} is not listed:\n{text}"))
    };
    for pair in order.windows(2) {
        assert!(
            at(pair[0]) < at(pair[1]),
            "{} listed after {}:\n{text}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
pub(crate) fn a_bad_database_says_why_and_the_list_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::write(&db, b"this is not a database at all, only some bytes").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    let text = pump(&rt, &mut app, &mut rx, |t| {
        t.contains("not an SQLite database")
    });
    assert!(text.contains("history"), "{text}");
}
