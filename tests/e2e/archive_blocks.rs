//! The event log in compressed blocks (schema 6), on both engines: the
//! same events written twice, in batches split differently, are logged
//! once; a session's log comes back in order across many blocks; and an
//! archive of schema 5 (one row per event, parts' JSON as text) opens,
//! keeps everything, replays exactly and is still searched.

use crate::support::postgres as postgres_support;

use std::path::{Path, PathBuf};

use ocview::archive::collect::Collector;
use ocview::archive::rows::{Batch, EventRow};
use ocview::archive::{Engine, Origin, Query, Setting, schema};
use ocview::source::ReplayReader;

fn open(setting: &Setting) -> Box<dyn Engine> {
    setting
        .open()
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("on")
}

/// `n` events of three sessions, interleaved, each distinct.
fn events(n: usize) -> Vec<EventRow> {
    (0..n)
        .map(|i| {
            let session = format!("ses_{}", i % 3);
            EventRow {
                key: format!("h{i:016x}"),
                json: format!(
                    r#"{{"type":"session.status","properties":{{"sessionID":"{session}","status":{{"type":"busy"}},"n":{i}}}}}"#
                ),
                session_id: session,
                time_ms: 1_700_000_000_000 + i as i64,
            }
        })
        .collect()
}

fn write_in(archive: &mut dyn Engine, events: &[EventRow], size: usize) -> u64 {
    events
        .chunks(size)
        .map(|chunk| {
            let batch = Batch {
                events: chunk.to_vec(),
                ..Batch::default()
            };
            archive.write(&batch).unwrap().events
        })
        .sum()
}

fn the_log_is_exact_across_blocks(setting: Setting) {
    let mut archive = open(&setting);
    let all = events(600);
    // Many small blocks: each session's log spans dozens of them.
    assert_eq!(write_in(&mut *archive, &all[..400], 7), 400);
    // The same events again, split otherwise, and some of them twice in
    // one batch: nothing new.
    assert_eq!(write_in(&mut *archive, &all[..400], 50), 0);
    let mut twice = all[100..130].to_vec();
    twice.extend_from_slice(&all[100..130]);
    assert_eq!(write_in(&mut *archive, &twice, 60), 0);
    // Old and new together: only the new are logged, after the old.
    assert_eq!(write_in(&mut *archive, &all[350..], 33), 200);
    assert_eq!(archive.counts().unwrap().events, 600);
    for s in 0..3 {
        let session = format!("ses_{s}");
        let want: Vec<&str> = all
            .iter()
            .filter(|e| e.session_id == session)
            .map(|e| e.json.as_str())
            .collect();
        assert_eq!(archive.events(&session).unwrap(), want, "{session}");
    }
    // A session deleted frees its keys: written again, it is logged anew.
    archive.delete_sessions(&["ses_1".into()]).unwrap();
    assert!(archive.events("ses_1").unwrap().is_empty());
    let ses_1: Vec<EventRow> = all
        .iter()
        .filter(|e| e.session_id == "ses_1")
        .cloned()
        .collect();
    assert_eq!(write_in(&mut *archive, &ses_1, 40), 200);
    assert_eq!(archive.events("ses_1").unwrap().len(), 200);
    assert_eq!(archive.counts().unwrap().events, 600);
}

#[test]
fn sqlite_logs_each_event_once_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    the_log_is_exact_across_blocks(Setting::Sqlite(dir.path().join("a.db")));
}

#[test]
fn postgres_logs_each_event_once_and_in_order() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    the_log_is_exact_across_blocks(Setting::Postgres(pg.database("blocks")));
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/durable-stream.jsonl")
}

/// A fixture's batch, as the collector makes it.
fn fixture_batch() -> Batch {
    let mut collector = Collector::new(Origin {
        server: None,
        host: "testhost".into(),
        file: Some("old.jsonl".into()),
    });
    let text = std::fs::read(fixture()).unwrap();
    let mut reader = ReplayReader::new(std::io::Cursor::new(text));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take()
}

/// An archive as ocview of schema 5 made it: its migrations, and the
/// batch's rows written as its write did (one row per event, the parts'
/// JSON as text, the index rows keyed by row and time).
fn schema_5_archive(path: &Path, batch: &Batch) {
    let c = rusqlite::Connection::open(path).unwrap();
    for (v, _, sql) in ocview::archive::sqlite::schema::MIGRATIONS
        .iter()
        .filter(|(v, _, _)| *v <= 5)
    {
        c.execute_batch(sql).unwrap();
        c.pragma_update(None, "user_version", v).unwrap();
    }
    for e in &batch.events {
        c.execute(
            "INSERT INTO events (key, session_id, time, json) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (key) DO NOTHING",
            rusqlite::params![e.key, e.session_id, e.time_ms, e.json],
        )
        .unwrap();
    }
    for s in &batch.sessions {
        c.execute(
            "INSERT INTO sessions (id, title, host, created, updated, raw) VALUES (?1, ?2, 'old', ?3, ?4, ?5)",
            rusqlite::params![s.id, s.title, s.created, s.updated, s.raw],
        )
        .unwrap();
        c.execute(
            "INSERT INTO search (rowid, body)
             SELECT ((max(updated, 0) / 1000) << 30) | ((pk & 536870911) << 1) | 1, title
             FROM sessions WHERE id = ?1",
            [&s.id],
        )
        .unwrap();
    }
    for m in &batch.messages {
        c.execute(
            "INSERT INTO messages (id, session_id, role, model, agent, created, updated, raw)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            rusqlite::params![
                m.id,
                m.session_id,
                m.role,
                m.model,
                m.agent,
                m.created,
                m.updated,
                m.raw
            ],
        )
        .unwrap();
    }
    for p in &batch.parts {
        c.execute(
            "INSERT INTO parts (id, message_id, session_id, kind, tool, state, time, updated, raw)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            rusqlite::params![
                p.id,
                p.message_id,
                p.session_id,
                p.kind,
                p.tool,
                p.state,
                p.time,
                p.updated,
                p.raw
            ],
        )
        .unwrap();
        if !p.text.trim().is_empty() {
            c.execute(
                "INSERT INTO search (rowid, body)
                 SELECT ((max(time, 0) / 1000) << 30) | ((pk & 536870911) << 1), ?2
                 FROM parts WHERE id = ?1",
                rusqlite::params![p.id, p.text],
            )
            .unwrap();
        }
    }
}

/// A word of the fixture's parts that search should find.
fn a_word_of(batch: &Batch) -> String {
    batch
        .parts
        .iter()
        .flat_map(|p| p.text.split(|c: char| !c.is_alphanumeric()))
        .find(|w| w.len() >= 6 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .expect("a word")
        .to_lowercase()
}

#[test]
fn a_schema_5_archive_opens_keeps_everything_and_replays_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut batch = fixture_batch();
    // A key is logged once: the old log kept the first of each.
    let mut seen = std::collections::HashSet::new();
    batch.events.retain(|e| seen.insert(e.key.clone()));
    assert!(batch.events.len() > 10 && !batch.parts.is_empty());
    schema_5_archive(&path, &batch);

    // What the old archive gives, before its upgrade.
    let word = a_word_of(&batch);
    let sessions: Vec<String> = batch.sessions.iter().map(|s| s.id.clone()).collect();

    let mut archive = open(&Setting::Sqlite(path.clone()));
    assert!(archive.read_only().is_none());
    let c = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::LATEST);
    let old_log: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'events'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old_log, 0, "the old log is gone once moved");
    let text_parts: i64 = c
        .query_row(
            "SELECT count(*) FROM parts WHERE typeof(raw) = 'text'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(text_parts, 0, "every part's JSON is compressed");

    let counts = archive.counts().unwrap();
    assert_eq!(counts.events as usize, batch.events.len());
    assert_eq!(counts.parts as usize, batch.parts.len());
    for id in &sessions {
        let want: Vec<&str> = batch
            .events
            .iter()
            .filter(|e| &e.session_id == id)
            .map(|e| e.json.as_str())
            .collect();
        assert_eq!(archive.events(id).unwrap(), want, "the log of {id}");
        let snapshot = archive.snapshot(id).unwrap();
        assert!(snapshot.len() > 1, "{id} opens: {snapshot:?}");
    }
    let hits = archive.search(&Query::new(&word)).unwrap();
    assert!(!hits.is_empty(), "{word:?} found after the upgrade");
    assert!(
        hits.iter()
            .any(|h| h.snippet.to_lowercase().contains(&word)),
        "a snippet shows {word:?}: {hits:?}"
    );
    // The moved log still refuses what it holds.
    assert_eq!(archive.write(&batch).unwrap().events, 0);
    assert_eq!(archive.counts().unwrap(), counts);
}

/// A part the log holds as it is is not kept a second time: its row points
/// into the log, and opening the session and search's snippets read it
/// from there. `kept` counts the parts: (pointing into the log, all, and
/// those that point there yet keep their JSON too).
fn parts_the_log_holds_are_not_kept_twice(setting: Setting, kept: impl Fn() -> (i64, i64, i64)) {
    let mut archive = open(&setting);
    let batch = fixture_batch();
    archive.write(&batch).unwrap();
    let (logged, all, copies) = kept();
    assert!(
        logged > 0 && logged * 2 >= all,
        "{logged} of {all} parts point into the log"
    );
    assert_eq!(copies, 0);
    // Opening a session gives each part as it was written.
    for s in &batch.sessions {
        let opened: Vec<serde_json::Value> = archive
            .snapshot(&s.id)
            .unwrap()
            .iter()
            .filter_map(|e| serde_json::from_str::<serde_json::Value>(e).ok())
            .filter_map(|e| e.pointer("/properties/part").cloned())
            .collect();
        let written: Vec<serde_json::Value> = batch
            .parts
            .iter()
            .filter(|p| p.session_id == s.id)
            .map(|p| serde_json::from_str(&p.raw).unwrap())
            .collect();
        assert_eq!(opened.len(), written.len(), "the parts of {}", s.id);
        for part in &written {
            assert!(opened.contains(part), "{part} opened from {}", s.id);
        }
    }
    let word = a_word_of(&batch);
    let hits = archive.search(&Query::new(&word)).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.part_id.is_some() && h.snippet.to_lowercase().contains(&word)),
        "a part's snippet shows {word:?}: {hits:?}"
    );
    // The same batch again rewrites no part.
    assert_eq!(archive.write(&batch).unwrap().parts, 0);
}

#[test]
fn sqlite_keeps_the_parts_the_log_holds_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    parts_the_log_holds_are_not_kept_twice(Setting::Sqlite(path.clone()), || {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.query_row(
            "SELECT count(logged), count(*), count(*) FILTER (WHERE logged IS NOT NULL AND length(raw) > 0)
             FROM parts",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    });
}

#[test]
fn postgres_keeps_the_parts_the_log_holds_once() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("once");
    parts_the_log_holds_are_not_kept_twice(Setting::Postgres(url.clone()), || {
        let row = &postgres_support::rows(
            &url,
            "SELECT count(logged), count(*), count(*) FILTER (WHERE logged IS NOT NULL AND raw <> '')
             FROM parts",
        )[0];
        let n = |i: usize| row[i].parse::<i64>().unwrap();
        (n(0), n(1), n(2))
    });
}

/// The writer hashes a part's or message's JSON as the server does
/// (`text_hash`, the server's `hashtextextended(text, 0)`), so rows
/// written by an ocview that let the server hash them are told the same
/// when sent again: texts of every length up to a few rounds, of any
/// characters, and long; and the rows an import wrote.
#[test]
fn the_writer_hashes_texts_as_the_server_does() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("text_hash");
    let mut texts: Vec<String> = (0..=40)
        .map(|n| {
            (0..n)
                .map(|i| char::from(b'!' + (i * 7 % 90) as u8))
                .collect()
        })
        .collect();
    texts.extend(
        [
            "Ünïcödé 東京 🙂 ДОМ",
            r#"{"id":"prt_1","text":"say \"hi\"\n","time":{"start":1}}"#,
            "\u{7f}\u{80}\u{ff}\u{100}\u{10ffff}",
        ]
        .map(String::from),
    );
    texts.push("0123456789abcdef🙂".repeat(6_000));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server: Vec<i64> = rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let rows = client
            .query(
                "SELECT hashtextextended(t, 0) FROM unnest($1::text[]) WITH ORDINALITY u(t, i)
                 ORDER BY i",
                &[&texts],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    });
    let here: Vec<i64> = texts
        .iter()
        .map(|t| ocview::archive::postgres::text_hash::hash_text(t))
        .collect();
    assert_eq!(here, server);
    // An import's rows: each hash is its JSON's, where the row keeps it.
    open(&Setting::Postgres(url.clone()))
        .write(&fixture_batch())
        .unwrap();
    for table in ["parts", "messages"] {
        let row = &postgres_support::rows(
            &url,
            &format!(
                "SELECT count(*) FILTER (WHERE raw <> '' AND hash <> hashtextextended(raw, 0)),
                        count(*) FILTER (WHERE hash IS NULL), count(*) FROM {table}"
            ),
        )[0];
        assert_eq!(row[..2], ["0", "0"], "{table}: {row:?}");
        assert_ne!(row[2], "0", "{table}");
    }
}

/// PostgreSQL's schema-5 archive (one row per event) moves to blocks too.
#[test]
fn a_schema_5_postgres_archive_opens_and_replays_exactly() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("old5");
    let mut sql = String::from("CREATE TABLE ocview_schema (version BIGINT NOT NULL);");
    for (v, _, step) in ocview::archive::postgres::schema::MIGRATIONS
        .iter()
        .filter(|(v, _, _)| *v <= 5)
    {
        sql.push_str(step);
        sql.push_str(&format!(
            ";\nINSERT INTO ocview_schema (version) VALUES ({v});\n"
        ));
    }
    let mut batch = fixture_batch();
    let mut seen = std::collections::HashSet::new();
    batch.events.retain(|e| seen.insert(e.key.clone()));
    for e in &batch.events {
        sql.push_str(&format!(
            "INSERT INTO events (key, session_id, time, json) VALUES ($k${}$k$, $k${}$k$, {}, $j${}$j$);\n",
            e.key, e.session_id, e.time_ms, e.json
        ));
    }
    pg.sql("old5", &sql);
    let mut archive = open(&Setting::Postgres(url));
    assert!(archive.read_only().is_none());
    assert_eq!(
        archive.counts().unwrap().events as usize,
        batch.events.len()
    );
    for s in &batch.sessions {
        let want: Vec<&str> = batch
            .events
            .iter()
            .filter(|e| e.session_id == s.id)
            .map(|e| e.json.as_str())
            .collect();
        assert_eq!(archive.events(&s.id).unwrap(), want, "the log of {}", s.id);
    }
    assert_eq!(archive.write(&batch).unwrap().events, 0);
}
