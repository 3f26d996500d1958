//! The word index built again with every word's first three letters
//! indexed (#39, point 3), as an archive of the schema before gets it: a
//! step at a time while the old index answers; a session written and one
//! pruned meanwhile are found once and not at all; then the new index
//! takes over and finds what an archive built afresh from the same files
//! finds. A new archive has it from the start; `ocview archive reindex`
//! does it at once.

use std::path::{Path, PathBuf};

use ocview::archive::import::import_file;
use ocview::archive::{Engine, Query, Setting};

use crate::support::scenarios::scenarios;

fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios())
        .unwrap()
        .map(|e| e.unwrap().path().join("event.jsonl"))
        .filter(|f| f.exists())
        .collect();
    files.sort();
    files
}

/// What an upgrade (migration 20) leaves: the new index empty, to build.
const AS_UPGRADED: &str = "CREATE VIRTUAL TABLE search_next USING fts5(
        body, content = '', contentless_delete = 1, tokenize = 'unicode61', prefix = '3',
        detail = none);
    CREATE TABLE reindex (id INTEGER PRIMARY KEY CHECK (id = 1), parts_done INTEGER NOT NULL,
        parts_end INTEGER NOT NULL, titles_done INTEGER NOT NULL, titles_end INTEGER NOT NULL);
    INSERT INTO reindex VALUES (1, 0, (SELECT coalesce(max(pk), 0) FROM parts),
        0, (SELECT coalesce(max(pk), 0) FROM sessions));";

const QUERIES: [(&str, bool); 7] = [
    ("the", true),
    ("fil", true),
    ("greeting", false),
    ("util", true),
    ("permission", false),
    ("pla", true),
    ("src", false),
];

/// Each query's hits: (session, part) pairs, in order.
fn hits(archive: &mut dyn Engine) -> Vec<Vec<(String, Option<String>)>> {
    QUERIES
        .iter()
        .map(|(text, prefix)| {
            let q = Query {
                text: text.to_string(),
                prefix: *prefix,
                limit: 500,
                ..Query::default()
            };
            archive
                .search(&q)
                .unwrap()
                .into_iter()
                .map(|h| (h.session_id, h.part_id))
                .collect()
        })
        .collect()
}

fn schema_of_search(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT sql FROM sqlite_master WHERE name = 'search'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// A session of many long texts of many words: an index that is a good
/// share of its archive.
fn wordy(dir: &Path) -> PathBuf {
    let mut word = crate::support::words::random_words(11, 50_000);
    let mut lines = vec![
        serde_json::json!({"type": "session.updated", "properties": {"info": {
        "id": "ses_wordy", "title": "Wordy", "directory": "/w",
        "time": {"created": 1_795_000_000_000i64, "updated": 1_795_000_000_000i64}}}})
        .to_string(),
    ];
    for i in 0..400 {
        let text: Vec<String> = (0..300).map(|_| word()).collect();
        lines.push(
            serde_json::json!({"type": "message.part.updated", "properties": {"part": {
                "id": format!("prt_w{i:04}"), "messageID": "msg_w", "sessionID": "ses_wordy",
                "type": "text", "text": text.join(" "),
                "time": {"start": 1_795_000_000_000i64 + i * 1000}}}})
            .to_string(),
        );
    }
    let path = dir.join("wordy.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn tables(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT name FROM sqlite_master WHERE name IN ('search_next', 'reindex')")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn an_upgraded_archive_is_indexed_again_a_step_at_a_time_and_finds_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let files = files();
    let (first, last) = files.split_at(files.len() - 1);
    // A new archive has the prefix index from the start.
    let db = dir.path().join("archive.db");
    let mut archive = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
    assert!(schema_of_search(&db).contains("prefix = '3'"));
    assert!(tables(&db).is_empty());
    assert_eq!(archive.reindex(10).unwrap(), None, "nothing to build");
    for f in first {
        import_file(&mut *archive, f).unwrap();
    }
    let before = hits(&mut *archive);
    assert!(before.iter().all(|h| !h.is_empty()), "{before:?}");
    drop(archive);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(AS_UPGRADED)
        .unwrap();

    let mut archive = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
    let (done, all) = archive.reindex(25).unwrap().expect("a step");
    assert!(done > 0 && done < all, "{done} of {all}");
    // The old index answers meanwhile, as before.
    assert_eq!(hits(&mut *archive), before);
    // A session written meanwhile, and one pruned.
    import_file(&mut *archive, &last[0]).unwrap();
    let pruned = before[2][0].0.clone();
    archive
        .delete_sessions(std::slice::from_ref(&pruned))
        .unwrap();
    let mut steps = 1;
    while archive.reindex(25).unwrap().is_some() {
        steps += 1;
        assert!(steps < 10_000, "the re-index ends");
    }
    assert!(steps > 3, "a step at a time: {steps}");
    assert!(tables(&db).is_empty(), "the new index took over");
    assert!(schema_of_search(&db).contains("prefix = '3'"));
    let after = hits(&mut *archive);

    // The same files into an archive built afresh, less the pruned session.
    let fresh_db = dir.path().join("fresh.db");
    let mut fresh = Setting::Sqlite(fresh_db).open().unwrap().unwrap();
    for f in &files {
        import_file(&mut *fresh, f).unwrap();
    }
    fresh
        .delete_sessions(std::slice::from_ref(&pruned))
        .unwrap();
    assert_eq!(after, hits(&mut *fresh));
    assert!(after.iter().flatten().all(|(s, _)| *s != pruned));
    for h in &after {
        let mut once = h.clone();
        once.dedup();
        assert_eq!(&once, h, "each hit once");
    }
    // Every session deleted: no hit is left behind (a document indexed
    // twice would be).
    let all: Vec<String> = after.iter().flatten().map(|(s, _)| s.clone()).collect();
    archive.delete_sessions(&all).unwrap();
    assert!(hits(&mut *archive).iter().all(|h| h.is_empty()));
}

#[test]
fn the_command_indexes_an_upgraded_archive_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let mut archive = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
    for f in files() {
        import_file(&mut *archive, &f).unwrap();
    }
    import_file(&mut *archive, &wordy(dir.path())).unwrap();
    let before = hits(&mut *archive);
    drop(archive);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(AS_UPGRADED)
        .unwrap();
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .arg("--archive")
            .arg(&db)
            .args(["archive", "reindex"])
            .env_remove("OCVIEW_ARCHIVE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let said = run();
    assert!(said.contains("indexed again ("), "{said}");
    assert!(tables(&db).is_empty());
    // The old index's pages are given back, not left in the file.
    assert!(said.contains("the old index's space given back"), "{said}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let pragma = |p: &str| -> i64 {
        c.query_row(&format!("PRAGMA {p}"), [], |r| r.get(0))
            .unwrap()
    };
    assert!(pragma("freelist_count") * 5 <= pragma("page_count"));
    drop(c);
    let mut archive = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
    assert_eq!(hits(&mut *archive), before);
    drop(archive);
    assert!(run().contains("needs no building again"));
}
