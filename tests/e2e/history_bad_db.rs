//! History databases that are not as opencode left them: empty, cut, locked by a writer, a column renamed, closed cleanly, from a release without `time_updated`, a message whose data is not an object; and `u` on the database opened.

use crate::common;
use crate::e2e_history::*;
use crate::support;
use common::screen;
use ocview::source::opencode_db::Db;
use rusqlite::Connection;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const T0: i64 = 1_795_547_214_000;

/// A database with the schema a real opencode 1.18.33 created, two sessions
/// (one per project) and their messages; `pad` more sessions to give it size.
fn make_db(path: &Path, wal: bool, pad: usize) {
    use support::history_db as db;
    let c = db::create(path, wal);
    for (p, dir) in [("prj_a", "/work/alpha"), ("prj_b", "/work/beta")] {
        db::project(&c, p, dir, T0);
    }
    let session = |id: &str, project: &str, title: &str, t: i64| {
        db::session(&c, id, project, None, title, t, None);
    };
    session("ses_good", "prj_a", "The readable session", T0 + 100);
    session("ses_odd", "prj_b", "Odd rows here", T0 + 50);
    let msg = |id: &str, session: &str, t: i64, data: &str| db::message(&c, id, session, t, data);
    let part = |id: &str, message: &str, session: &str, t: i64, text: &str| {
        db::part(
            &c,
            id,
            message,
            session,
            t,
            &json!({"type": "text", "text": text}).to_string(),
        )
    };
    let user = |t: i64| {
        format!(
            r#"{{"role":"user","time":{{"created":{t}}},"agent":"build","model":{{"providerID":"mock","modelID":"mock-1"}}}}"#
        )
    };
    msg("msg_g1", "ses_good", T0 + 101, &user(T0 + 101));
    part(
        "prt_g1",
        "msg_g1",
        "ses_good",
        T0 + 101,
        "A question that reads fine",
    );
    msg("msg_o1", "ses_odd", T0 + 51, &user(T0 + 51));
    part(
        "prt_o1",
        "msg_o1",
        "ses_odd",
        T0 + 51,
        "The odd session's good message",
    );
    // A message whose data is a JSON string, not an object.
    msg("msg_o2", "ses_odd", T0 + 52, r#""just a string""#);
    part(
        "prt_o2",
        "msg_o2",
        "ses_odd",
        T0 + 52,
        "A part of the odd message",
    );
    c.execute_batch("BEGIN").unwrap();
    for i in 0..pad {
        let id = format!("ses_pad{i:06}");
        session(&id, "prj_a", &format!("Padding session {i}"), T0 + i as i64);
        let m = format!("msg_pad{i:06}");
        msg(&m, &id, T0 + i as i64, &user(T0 + i as i64));
        part(
            &format!("prt_pad{i:06}"),
            &m,
            &id,
            T0 + i as i64,
            &"x".repeat(400),
        );
    }
    c.execute_batch("COMMIT").unwrap();
    if wal {
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
}

fn first_line_with<'a>(text: &'a str, needle: &str) -> Option<&'a str> {
    text.lines().find(|l| l.contains(needle))
}

#[test]
fn an_empty_file_says_so_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::write(&db, b"").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    let text = pump(&rt, &mut app, &mut rx, "the message", |_, t| {
        t.contains("is empty: not an opencode database")
    });
    assert!(text.contains("history"), "{text}");
}

#[test]
fn a_truncated_copy_says_it_is_damaged_and_shows_no_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.db");
    make_db(&whole, false, 2000);
    let bytes = std::fs::read(&whole).unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    let text = pump(&rt, &mut app, &mut rx, "the message", |a, t| {
        t.contains("damaged") || a.notice.as_deref().is_some_and(|n| n.contains("damaged"))
    });
    assert!(text.contains("history"), "{text}");
}

#[test]
fn a_database_locked_by_a_writer_is_still_read_or_says_it_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // WAL (as opencode keeps it): an exclusive writer does not stop readers.
    let wal = dir.path().join("wal.db");
    make_db(&wal, true, 0);
    let writer = Connection::open(&wal).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    writer
        .execute(
            "UPDATE session SET title = 'Renamed mid-write' WHERE id = 'ses_good'",
            [],
        )
        .unwrap();
    let (mut app, mut rx) = history_app(&rt, &wal);
    pump(&rt, &mut app, &mut rx, "the list under a writer", |_, t| {
        t.contains("The readable session") && t.contains("Odd rows here")
    });
    writer.execute_batch("ROLLBACK").unwrap();

    // A rollback journal: the writer holds the whole file. The reader says
    // it is locked, in one line, and reads it once the writer is done.
    let journal = dir.path().join("journal.db");
    make_db(&journal, false, 0);
    let writer = Connection::open(&journal).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    writer
        .execute(
            "UPDATE session SET title = 'Renamed mid-write' WHERE id = 'ses_good'",
            [],
        )
        .unwrap();
    let (mut app, mut rx) = history_app(&rt, &journal);
    let text = pump(&rt, &mut app, &mut rx, "the locked message", |_, t| {
        t.contains("locked") || t.contains("busy")
    });
    let line = first_line_with(&text, "locked")
        .or_else(|| first_line_with(&text, "busy"))
        .unwrap();
    eprintln!("locked, on screen: {line}");
    writer.execute_batch("ROLLBACK").unwrap();
    drop(writer);
    pump(&rt, &mut app, &mut rx, "read after the writer", |_, t| {
        t.contains("The readable session")
    });
}

#[test]
fn a_renamed_column_says_what_is_missing_and_shows_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    make_db(&db, true, 0);
    Connection::open(&db)
        .unwrap()
        .execute_batch("ALTER TABLE session RENAME COLUMN title TO headline")
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    let text = pump(&rt, &mut app, &mut rx, "the sessions", |a, _| {
        a.store.session(&key("ses_good")).is_some() && a.store.session(&key("ses_odd")).is_some()
    });
    eprintln!("{text}");
    // What is lost is said, naming the column.
    let said = app.notice.clone().unwrap_or_default();
    assert!(
        said.contains("session titles (no session.title column)"),
        "{said}\n{text}"
    );
    app.selected = Some(key("ses_good"));
    pump(&rt, &mut app, &mut rx, "its message", |_, t| {
        t.contains("A question that reads fine")
    });
}

/// `u` in `ocview history DB` totals that database, not the one this
/// machine's opencode uses.
#[test]
fn the_usage_view_reads_the_database_the_viewer_opened() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("elsewhere.db");
    make_db(&db, true, 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, _rx) = history_app(&rt, &db);
    assert_eq!(app.overlays.usage.db.as_deref(), Some(db.as_path()));
    common::press(&mut app, &["u"]);
    let start = Instant::now();
    loop {
        let text = screen(&mut app, 120, 40);
        if let Some(view) = &app.overlays.usage.view
            && !view.loading()
        {
            match &view.answer {
                ocview::app::overlays::usage::Answer::Ready(u) => {
                    assert_eq!(u.sessions, 2, "{text}");
                    break;
                }
                _ => panic!("no usage of {}:\n{text}", db.display()),
            }
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reading a cleanly closed WAL database makes no file beside it (SQLite
/// would make -wal and -shm: run as root on another user's database, they
/// were root's and opencode could not open it). Once a writer comes, the
/// same reader opens it again and sees what it wrote, its data_version
/// moves, and the writer still checkpoints with the reader there.
#[test]
fn a_closed_database_is_read_without_a_file_made_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("opencode.db");
    make_db(&db_path, true, 0);
    let listed = || crate::support::names_in(dir.path());
    let before = listed();
    assert_eq!(before, ["opencode.db"], "closed cleanly");
    let db = Db::open(&db_path).unwrap();
    assert_eq!(db.sessions(10, None).unwrap().len(), 2);
    let v0 = db.data_version().unwrap();
    assert!(!db.outdated());
    assert_eq!(listed(), before, "a file was made beside the database");

    // A writer comes (its -wal and -shm appear) and changes a title.
    let writer = Connection::open(&db_path).unwrap();
    writer
        .execute(
            "UPDATE session SET title = 'Written while read' WHERE id = 'ses_good'",
            [],
        )
        .unwrap();
    assert!(db.outdated(), "the reader knows to open it again");
    assert_ne!(
        db.data_version().unwrap(),
        v0,
        "a reader polling would miss it"
    );
    let titles: Vec<String> = db
        .sessions(10, None)
        .unwrap()
        .into_iter()
        .map(|s| s.title.unwrap_or_default())
        .collect();
    assert!(
        titles.iter().any(|t| t == "Written while read"),
        "{titles:?}"
    );
    assert!(!db.outdated(), "read live from then on");
    let (busy, _, _): (i64, i64, i64) = writer
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(busy, 0, "the writer checkpoints with the reader open");
    drop(db);
}

/// A release without `session.time_updated`: its sessions are listed (by
/// id, newest first), not none (SQLite read "ORDER BY 0" as a column).
#[test]
fn a_database_without_time_updated_lists_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    make_db(&db, true, 0);
    let c = Connection::open(&db).unwrap();
    let indexes: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'session' AND sql LIKE '%time_updated%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .flatten()
        .collect();
    for index in indexes {
        c.execute_batch(&format!("DROP INDEX \"{index}\"")).unwrap();
    }
    c.execute_batch("ALTER TABLE session DROP COLUMN time_updated")
        .unwrap();
    drop(c);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    pump(&rt, &mut app, &mut rx, "both sessions", |_, t| {
        t.contains("The readable session") && t.contains("Odd rows here")
    });
}

#[test]
fn a_message_whose_data_is_not_an_object_is_named_and_the_rest_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    make_db(&db, true, 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut app, mut rx) = history_app(&rt, &db);
    pump(&rt, &mut app, &mut rx, "both sessions", |_, t| {
        t.contains("The readable session") && t.contains("Odd rows here")
    });
    app.selected = Some(key("ses_odd"));
    let text = pump(&rt, &mut app, &mut rx, "the odd session", |_, t| {
        t.contains("The odd session's good message")
    });
    assert!(app.stats.malformed >= 1, "{:?}", app.stats);
    let why = format!("{:?}", app.stats);
    assert!(why.contains("msg_o2"), "{why}");
    // Named by its row, not by a line it never had.
    let first = app.stats.first_malformed().unwrap().to_string();
    assert!(
        first.starts_with("session ses_odd, message msg_o2:"),
        "{first}"
    );
    let wide = screen(&mut app, 200, 30);
    let status = first_line_with(&wide, "bad record").unwrap_or_default();
    assert!(
        status.contains("session ses_odd, message msg_o2") && !status.contains("line 0"),
        "{wide}"
    );
    eprintln!("{text}");
}
