//! Reading opencode's database safely, without a server: the guards (no
//! credential table can be read, nothing can be written), the schema read
//! from the file, and a clear one-line message for every bad file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ocview::source::opencode_db::{Db, DbError};
use rusqlite::Connection;

/// A small database shaped like opencode's, in rollback-journal mode
/// unless `wal`: sessions with or without the totals columns, messages,
/// a credential table with a token in it, and `migrations` rows.
fn make_db(dir: &Path, name: &str, totals: bool, migrations: usize, wal: bool) -> PathBuf {
    let path = dir.join(name);
    let c = Connection::open(&path).unwrap();
    if wal {
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
    }
    let totals_cols = if totals {
        ", cost REAL, tokens_input INTEGER, tokens_output INTEGER, tokens_reasoning INTEGER, \
         tokens_cache_read INTEGER, tokens_cache_write INTEGER"
    } else {
        ""
    };
    c.execute_batch(&format!(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT,
            title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER, time_archived INTEGER{totals_cols});
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
         CREATE INDEX message_session ON message (session_id, time_created, id);
         CREATE TABLE credential (id TEXT, value TEXT);
         CREATE TABLE account (id TEXT, access_token TEXT, refresh_token TEXT);
         CREATE TABLE migration (id TEXT, time_completed INTEGER);
         INSERT INTO credential VALUES ('c1', 'SECRET-TOKEN');
         INSERT INTO account VALUES ('a1', 'ACCESS', 'REFRESH');"
    ))
    .unwrap();
    for i in 0..migrations {
        c.execute("INSERT INTO migration VALUES (?1, 0)", [format!("m{i}")])
            .unwrap();
    }
    for s in 0..3 {
        let id = format!("ses_{s}");
        let parent = (s == 2).then_some("ses_0");
        if totals {
            c.execute(
                "INSERT INTO session (id, project_id, parent_id, directory, title, version, time_created, time_updated,
                    cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write)
                 VALUES (?1, 'prj', ?2, '/p', ?3, '1.18.33', ?4, ?4, 0.25, 100, 20, 3, 4, 5)",
                rusqlite::params![id, parent, format!("Title {s}"), 1000 + s],
            )
            .unwrap();
        } else {
            c.execute(
                "INSERT INTO session (id, project_id, parent_id, directory, title, version, time_created, time_updated)
                 VALUES (?1, 'prj', ?2, '/p', ?3, '0.9.0', ?4, ?4)",
                rusqlite::params![id, parent, format!("Title {s}"), 1000 + s],
            )
            .unwrap();
        }
        for m in 0..(s + 1) * 5 {
            c.execute(
                "INSERT INTO message VALUES (?1, ?2, ?3, ?3, '{}')",
                rusqlite::params![format!("msg_{s}_{m:03}"), id, m],
            )
            .unwrap();
        }
    }
    path
}

fn one_line(e: &DbError) -> String {
    let text = e.to_string();
    assert!(!text.contains('\n'), "more than one line: {text:?}");
    assert!(!text.is_empty());
    text
}

#[test]
fn no_statement_can_read_a_credential_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = make_db(dir.path(), "o.db", true, 38, false);
    let db = Db::open(&path).unwrap();
    for sql in [
        "SELECT value FROM credential",
        "SELECT count(*) FROM credential",
        "SELECT * FROM main.credential",
        "SELECT s.id FROM session s JOIN credential c ON c.id = s.id",
        "SELECT (SELECT value FROM credential LIMIT 1) FROM session",
        "SELECT refresh_token FROM account",
        "WITH x AS (SELECT * FROM CREDENTIAL) SELECT * FROM x",
    ] {
        match db.query_strings(sql) {
            Err(e @ DbError::Denied(_)) => {
                assert!(one_line(&e).contains("credential"), "{e}");
            }
            other => panic!("{sql}: not refused: {other:?}"),
        }
    }
    // Other tables still read.
    assert_eq!(
        db.query_strings("SELECT id FROM session ORDER BY id")
            .unwrap(),
        ["ses_0", "ses_1", "ses_2"]
    );
}

#[test]
fn nothing_is_written_created_or_attached() {
    let dir = tempfile::tempdir().unwrap();
    let path = make_db(dir.path(), "o.db", true, 38, false);
    let before = std::fs::read(&path).unwrap();
    let db = Db::open(&path).unwrap();
    for sql in [
        "DELETE FROM session",
        "UPDATE session SET title = 'x'",
        "INSERT INTO session (id) VALUES ('new')",
        "CREATE TABLE t (x)",
        "DROP TABLE message",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "ATTACH DATABASE 'other.db' AS other",
        "VACUUM",
    ] {
        assert!(db.query_strings(sql).is_err(), "{sql} ran");
    }
    drop(db);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    // A missing file is not created.
    let missing = dir.path().join("nope.db");
    let e = Db::open(&missing).err().unwrap();
    assert!(matches!(e, DbError::Missing(_)), "{e}");
    assert!(one_line(&e).contains("no opencode database"));
    assert!(!missing.exists());
}

/// opencode before 1.2 kept sessions as JSON files under `storage/`: no
/// database is there, and ocview says which release it reads instead of
/// only "no opencode database".
#[test]
fn a_release_before_1_2_is_named_for_what_it_is() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("opencode");
    let sessions = data.join("storage/session/prj_1");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join("ses_old.json"),
        r#"{"id":"ses_old","title":"Old"}"#,
    )
    .unwrap();
    let e = Db::open(&data.join("opencode.db")).err().unwrap();
    assert!(matches!(e, DbError::OldRelease(_)), "{e}");
    let line = one_line(&e);
    assert!(
        line.contains("before 1.2") && line.contains("storage/"),
        "{line}"
    );
    assert!(line.contains("opencode 1.2 and later"), "{line}");
    assert!(!data.join("opencode.db").exists());
    for args in [&["stats"][..], &["history"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(args)
            .env("XDG_DATA_HOME", home.path())
            .env_remove("OPENCODE_DB")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {said}");
        assert!(said.contains("before 1.2"), "{args:?}: {said}");
    }
}

#[test]
fn sessions_and_message_counts_read_from_whatever_schema_is_there() {
    let dir = tempfile::tempdir().unwrap();
    // A current schema: totals stored.
    let db = Db::open(&make_db(dir.path(), "new.db", true, 38, false)).unwrap();
    let rows = db.sessions(2, None).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["ses_2", "ses_1"]
    );
    assert_eq!(rows[0].parent_id.as_deref(), Some("ses_0"));
    assert_eq!(rows[0].title.as_deref(), Some("Title 2"));
    let totals = rows[0].totals.clone().unwrap();
    assert_eq!(
        (totals.cost, totals.input, totals.cache_write),
        (0.25, 100, 5)
    );
    let cursor = ocview::source::opencode_db::sessions::SessionCursor {
        time_updated: rows[1].time_updated.unwrap(),
        id: rows[1].id.clone(),
    };
    let next = db.sessions(2, Some(&cursor)).unwrap();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].id, "ses_0");
    assert_eq!(db.session_count().unwrap(), 3);
    assert_eq!(db.message_count("ses_1").unwrap(), Some(10));
    // A session this database does not hold: no count, not zero.
    assert_eq!(db.message_count("ses_elsewhere").unwrap(), None);
    assert!(
        db.schema()
            .unreadable()
            .iter()
            .all(|w| !w.contains("totals"))
    );

    // An older schema: no totals columns, no part table; still listed.
    let old = Db::open(&make_db(dir.path(), "old.db", false, 20, false)).unwrap();
    let rows = old.sessions(10, None).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.totals.is_none()));
    let summary = old.schema().summary();
    assert!(summary.contains("stored session totals"), "{summary}");
    assert!(summary.contains("no part table"), "{summary}");

    // A column renamed (a future version's): the rest still reads.
    let renamed = make_db(dir.path(), "renamed.db", true, 38, false);
    Connection::open(&renamed)
        .unwrap()
        .execute_batch("ALTER TABLE session RENAME COLUMN title TO name")
        .unwrap();
    let db = Db::open(&renamed).unwrap();
    let rows = db.sessions(10, None).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r.title.is_none() && r.directory.is_some())
    );
    assert_eq!(db.message_count("ses_2").unwrap(), Some(15));

    // A newer schema than ocview knows: read as far as known, and said.
    let newer = Db::open(&make_db(dir.path(), "newer.db", true, 45, false)).unwrap();
    assert!(newer.schema().is_newer());
    assert!(newer.schema().summary().contains("newer schema"));
    assert_eq!(newer.sessions(10, None).unwrap().len(), 3);
}

#[test]
fn bad_files_get_a_clear_one_line_message() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let empty = d.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let e = Db::open(&empty).err().unwrap();
    assert!(one_line(&e).contains("is empty"), "{e}");

    let random = d.join("random.db");
    let mut x: u64 = 0x1234_5678;
    let bytes: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&random, &bytes).unwrap();
    let e = Db::open(&random).err().unwrap();
    assert!(one_line(&e).contains("not an SQLite database"), "{e}");

    let other = d.join("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch(
            "CREATE TABLE notes (id INTEGER, text TEXT); INSERT INTO notes VALUES (1, 'x');",
        )
        .unwrap();
    let e = Db::open(&other).err().unwrap();
    assert!(one_line(&e).contains("not opencode's"), "{e}");

    // A truncated copy of a database big enough to span many pages: it
    // opens or fails with a reason, and every read either works or says
    // why; nothing panics.
    let big = make_db(d, "big.db", true, 38, false);
    {
        let c = Connection::open(&big).unwrap();
        let text = "x".repeat(2000);
        for i in 0..400 {
            c.execute(
                "INSERT INTO message VALUES (?1, 'ses_1', ?2, ?2, ?3)",
                rusqlite::params![format!("msg_big_{i:04}"), 100 + i, text],
            )
            .unwrap();
        }
    }
    let full = std::fs::read(&big).unwrap();
    let truncated = d.join("truncated.db");
    std::fs::write(&truncated, &full[..full.len() / 2]).unwrap();
    let outcome = Db::open(&truncated).and_then(|db| {
        db.sessions(100, None)?;
        db.message_count("ses_1")
    });
    match outcome {
        Err(e) => {
            let text = one_line(&e);
            assert!(
                text.contains("damaged") || text.contains("not an SQLite"),
                "{text}"
            );
        }
        Ok(n) => panic!("a truncated copy read as whole: {n:?}"),
    }

    let missing = d.join("missing.db");
    let e = Db::open(&missing).err().unwrap();
    assert!(one_line(&e).contains("no opencode database"), "{e}");
}

#[test]
fn a_database_locked_by_a_writer_is_reported_locked_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let path = make_db(dir.path(), "o.db", true, 38, false);
    let db = Db::open(&path).unwrap();
    let writer = Connection::open(&path).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let start = Instant::now();
    let e = db
        .message_count("ses_1")
        .expect_err("read through an exclusive lock");
    let took = start.elapsed();
    assert!(matches!(e, DbError::Locked(_)), "{e}");
    assert!(one_line(&e).contains("locked"), "{e}");
    // Never waits long: opencode's writes come first, the reader says so.
    assert!(took < Duration::from_millis(1000), "waited {took:?}");
    // Opening while it is held says the same.
    let e = Db::open(&path).err().unwrap();
    assert!(matches!(e, DbError::Locked(_)), "{e}");
    writer.execute_batch("COMMIT").unwrap();
    assert_eq!(db.message_count("ses_1").unwrap(), Some(10));
}

#[test]
fn a_writer_in_wal_mode_is_read_beside_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let path = make_db(dir.path(), "w.db", true, 38, true);
    let writer = Connection::open(&path).unwrap();
    let db = Db::open(&path).unwrap();
    let v0 = db.data_version().unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    writer
        .execute(
            "INSERT INTO message VALUES ('msg_new', 'ses_0', 9, 9, '{}')",
            [],
        )
        .unwrap();
    // The writer's open transaction is not seen, and does not block.
    assert_eq!(db.message_count("ses_0").unwrap(), Some(5));
    writer.execute_batch("COMMIT").unwrap();
    assert_eq!(db.message_count("ses_0").unwrap(), Some(6));
    assert_ne!(
        db.data_version().unwrap(),
        v0,
        "a commit changes data_version"
    );
}

/// The next total the reader sends within `within`, if any.
async fn next_total(
    rx: &mut tokio::sync::mpsc::Receiver<ocview::source::msg::SourceMsg>,
    within: Duration,
) -> Option<(String, u64)> {
    match tokio::time::timeout(within, rx.recv()).await {
        Ok(Some(ocview::source::msg::SourceMsg::MessageTotal { session_id, total })) => {
            Some((session_id, total))
        }
        Ok(Some(other)) => panic!("not a total: {other:?}"),
        Ok(None) | Err(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reader_counts_the_watched_session_and_follows_new_messages() {
    use ocview::source::opencode_db::totals::{MessageTotals, REFRESH};
    let dir = tempfile::tempdir().unwrap();
    let path = make_db(dir.path(), "w.db", true, 38, true);
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let mut totals = MessageTotals::spawn(path.clone(), tx);
    totals.watch("ses_1");
    assert_eq!(
        next_total(&mut rx, Duration::from_secs(5)).await,
        Some(("ses_1".into(), 10))
    );
    // Asked again each frame: no new read, no new message.
    totals.watch("ses_1");
    assert_eq!(next_total(&mut rx, REFRESH + REFRESH / 2).await, None);
    // opencode commits a message: the count follows within a refresh.
    let writer = Connection::open(&path).unwrap();
    writer
        .execute(
            "INSERT INTO message VALUES ('msg_new', 'ses_1', 99, 99, '{}')",
            [],
        )
        .unwrap();
    let start = Instant::now();
    assert_eq!(
        next_total(&mut rx, REFRESH * 3).await,
        Some(("ses_1".into(), 11))
    );
    assert!(start.elapsed() <= REFRESH + Duration::from_millis(500));
    // A session this database does not hold: nothing, never a zero.
    totals.watch("ses_elsewhere");
    assert_eq!(next_total(&mut rx, REFRESH + REFRESH / 2).await, None);

    // A fleet: only the servers on this machine, their ids as scoped.
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let mut fleet = MessageTotals::spawn_for_fleet(
        path.clone(),
        tx,
        ["here:4096".to_string()].into_iter().collect(),
    );
    fleet.watch("ses_2@far:4096");
    assert_eq!(next_total(&mut rx, REFRESH + REFRESH / 2).await, None);
    fleet.watch("ses_2@here:4096");
    assert_eq!(
        next_total(&mut rx, Duration::from_secs(5)).await,
        Some(("ses_2@here:4096".into(), 15))
    );
}
