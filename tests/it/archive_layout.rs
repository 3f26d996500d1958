//! The SQLite archive's index layout (schema 3): a contentless FTS5 index
//! whose rowids follow time. Hits are newest first to the millisecond even
//! within one second (the rowid orders by the second only), a date range
//! is exact, the index keeps no copy of the text, deleting a session takes
//! its documents out, and an archive of schema 2 is migrated with its
//! index carried over.

use std::path::Path;

use ocview::archive::{Engine, Query, Setting, schema};

/// 2026-09-21, on a second's boundary.
const T: i64 = 1_790_000_000_000;

fn text_part(id: &str, start: i64, text: &str) -> String {
    format!(
        r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"{id}","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"{text}","time":{{"start":{start},"end":{start}}}}}}}}}"#
    )
}

fn import(engine: &mut dyn Engine, dir: &Path, lines: &[String]) {
    let file = dir.join("events.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ocview::archive::import::import_file(engine, &file).unwrap();
}

fn ids(engine: &mut dyn Engine, q: &Query) -> Vec<String> {
    engine
        .search(q)
        .unwrap()
        .into_iter()
        .map(|h| {
            h.part_id
                .unwrap_or_else(|| format!("title of {}", h.session_id))
        })
        .collect()
}

#[test]
fn newest_first_to_the_millisecond_with_no_copy_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut engine = Setting::Sqlite(path.clone()).open().unwrap().unwrap();
    import(
        &mut *engine,
        dir.path(),
        &[
            format!(
                r#"{{"type":"session.updated","properties":{{"info":{{"id":"ses_1","title":"Layout","time":{{"created":{},"updated":{}}}}}}}}}"#,
                T - 60_000,
                T - 60_000
            ),
            format!(
                r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_1","sessionID":"ses_1","role":"assistant","time":{{"created":{}}}}}}}}}"#,
                T - 10_000
            ),
            // Written first (the lower row) but the newest, in the same
            // second as the next one.
            text_part("prt_a", T + 900, "a needle late in the second"),
            text_part("prt_b", T + 100, "a needle early in the second"),
            text_part("prt_c", T - 5_000, "an older needle"),
        ],
    );
    let q = |limit: u32| Query {
        limit,
        ..Query::new("needle")
    };
    assert_eq!(ids(&mut *engine, &q(1)), ["prt_a"]);
    assert_eq!(ids(&mut *engine, &q(2)), ["prt_a", "prt_b"]);
    assert_eq!(ids(&mut *engine, &q(9)), ["prt_a", "prt_b", "prt_c"]);
    // A date range is exact to the millisecond, not to the second.
    let until = Query {
        until: Some(T + 500),
        ..q(9)
    };
    assert_eq!(ids(&mut *engine, &until), ["prt_b", "prt_c"]);
    let since = Query {
        since: Some(T + 500),
        ..q(9)
    };
    assert_eq!(ids(&mut *engine, &since), ["prt_a"]);
    let hit = &engine.search(&q(1)).unwrap()[0];
    assert!(hit.plain_snippet().contains("«needle»"), "{hit:?}");
    assert_eq!(hit.title, "Layout");
    drop(engine);
    // The text is in the parts' raw JSON only: the index has no content.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'search%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!tables.iter().any(|t| t == "search_content"), "{tables:?}");
}

#[test]
fn a_part_that_moves_in_time_is_found_once_at_its_new_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Setting::Sqlite(dir.path().join("a.db"))
        .open()
        .unwrap()
        .unwrap();
    let session = format!(
        r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_1","sessionID":"ses_1","role":"assistant","time":{{"created":{T}}}}}}}}}"#
    );
    import(
        &mut *engine,
        dir.path(),
        &[session.clone(), text_part("prt_m", T, "moving needle")],
    );
    import(
        &mut *engine,
        dir.path(),
        &[
            session,
            text_part("prt_m", T + 3_600_000, "moving needle again"),
        ],
    );
    let hits = engine.search(&Query::new("needle")).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].time, T + 3_600_000);
    assert!(hits[0].plain_snippet().contains("again"));
    assert_eq!(engine.delete_sessions(&["ses_1".into()]).unwrap(), 1);
    assert!(engine.search(&Query::new("needle")).unwrap().is_empty());
}

#[test]
fn an_archive_of_schema_2_is_migrated_with_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for (v, _, sql) in ocview::archive::sqlite::schema::MIGRATIONS
            .iter()
            .filter(|(v, _, _)| *v <= 2)
        {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", v).unwrap();
        }
        conn.execute_batch(&format!(
            r#"INSERT INTO sessions (pk, id, title, directory, created, updated, raw)
                 VALUES (1, 'ses_m', 'Old title words', '/work/old', {T}, {T}, '{{"id":"ses_m"}}');
               INSERT INTO messages (id, session_id, role, created, updated, raw)
                 VALUES ('msg_m', 'ses_m', 'assistant', {T}, {T}, '{{"id":"msg_m"}}');
               INSERT INTO parts (pk, id, message_id, session_id, kind, time, updated, raw)
                 VALUES (1, 'prt_m', 'msg_m', 'ses_m', 'text', {T}, {T},
                   '{{"id":"prt_m","type":"text","text":"legacy needle text"}}');
               INSERT INTO search (rowid, body, session_id, message_id, part_id, kind, time)
                 VALUES (1, 'legacy needle text', 'ses_m', 'msg_m', 'prt_m', 'text', {T}),
                        (-1, 'Old title words', 'ses_m', NULL, NULL, 'title', {T});"#
        ))
        .unwrap();
    }
    let mut engine = Setting::Sqlite(path.clone()).open().unwrap().unwrap();
    assert!(engine.read_only().is_none());
    let hits = engine.search(&Query::new("needle")).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].part_id.as_deref(), Some("prt_m"));
    assert_eq!(hits[0].project.as_deref(), Some("/work/old"));
    assert_eq!(hits[0].plain_snippet(), "legacy «needle» text");
    assert_eq!(ids(&mut *engine, &Query::new("title")), ["title of ses_m"]);
    engine.delete_sessions(&["ses_m".into()]).unwrap();
    drop(engine);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::LATEST);
    // Every document went with its session.
    let docs: i64 = conn
        .query_row("SELECT count(*) FROM search_docsize", [], |r| r.get(0))
        .unwrap();
    assert_eq!(docs, 0);
}

/// The viewer's writer, opencode's database importer and a search each open
/// the archive on a thread of their own, at the same moment on the first
/// run: every one of them opens it, and the schema is made once.
#[test]
fn openers_at_once_on_a_new_archive_all_open_it() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("archive.db");
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    Setting::Sqlite(path)
                        .open()
                        .map(|e| e.is_some())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for opener in openers {
            assert_eq!(opener.join().unwrap(), Ok(true), "round {round}");
        }
    }
}
