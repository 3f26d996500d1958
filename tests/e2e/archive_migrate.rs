//! The archive's migrations run by refinery, on both engines: an archive
//! written at each version by the runner before refinery (SQLite's
//! `user_version`, PostgreSQL's `ocview_schema`) is adopted on its first
//! open (its versions recorded with refinery's checksums, nothing run
//! twice, the later ones run, its data kept); an old-style marker above
//! `LATEST` opens read-only. (The newer-history case is in tests/e2e/archive.rs,
//! openers at once in tests/it/archive_layout.rs.)

use crate::support::postgres as postgres_support;

use ocview::archive::migrate::{HISTORY, refinery_list};
use ocview::archive::{Engine, Setting, schema};

const T: i64 = 1_710_000_000_000;

/// What refinery records for a list: (version, name, checksum).
fn expected_history(list: &[schema::Migration]) -> Vec<(i64, String, String)> {
    refinery_list(list)
        .unwrap()
        .iter()
        .map(|m| {
            (
                m.version() as i64,
                m.name().to_string(),
                m.checksum().to_string(),
            )
        })
        .collect()
}

fn open(setting: &Setting) -> Box<dyn Engine> {
    setting
        .open()
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("on")
}

// ---- SQLite ----

/// An archive as the runner before refinery left it at `version`, with
/// one session in it.
fn old_sqlite(path: &std::path::Path, version: i64) {
    let c = rusqlite::Connection::open(path).unwrap();
    for (v, _, sql) in ocview::archive::sqlite::schema::MIGRATIONS
        .iter()
        .filter(|m| m.0 <= version)
    {
        c.execute_batch(sql).unwrap();
        c.pragma_update(None, "user_version", v).unwrap();
    }
    c.execute_batch(&format!(
        r#"INSERT INTO sessions (pk, id, title, directory, created, updated, raw)
             VALUES (1, 'ses_old', 'Old', '/work/old', {T}, {T}, '{{"id":"ses_old"}}');"#
    ))
    .unwrap();
}

fn sqlite_history(c: &rusqlite::Connection) -> Vec<(i64, String, String)> {
    c.prepare(&format!(
        "SELECT version, name, checksum FROM {HISTORY} ORDER BY version"
    ))
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// The tables and indexes of an SQLite archive.
fn sqlite_shape(c: &rusqlite::Connection) -> Vec<(String, String)> {
    c.prepare("SELECT type, name FROM sqlite_master ORDER BY type, name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn sqlite_archives_of_every_old_version_adopt_refinery_and_run_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.db");
    drop(open(&Setting::Sqlite(fresh.clone())));
    let fresh_shape = sqlite_shape(&rusqlite::Connection::open(&fresh).unwrap());
    for version in 1..=schema::LAST_BEFORE_REFINERY {
        let path = dir.path().join(format!("v{version}.db"));
        old_sqlite(&path, version);
        let mut archive = open(&Setting::Sqlite(path.clone()));
        assert!(archive.read_only().is_none(), "v{version}");
        assert_eq!(archive.counts().unwrap().sessions, 1, "v{version}");
        // Its word index built again (`sqlite::reindex`), as the viewer
        // does when idle: then it is shaped as a new archive.
        while archive.reindex(1000).unwrap().is_some() {}
        drop(archive);
        let c = rusqlite::Connection::open(&path).unwrap();
        assert_eq!(
            sqlite_history(&c),
            expected_history(ocview::archive::sqlite::schema::MIGRATIONS),
            "v{version}"
        );
        let user_version: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(user_version, schema::LATEST, "v{version}");
        assert_eq!(sqlite_shape(&c), fresh_shape, "v{version}");
        // Opened again, refinery finds its history as it left it.
        drop(c);
        assert!(open(&Setting::Sqlite(path)).read_only().is_none());
    }
}

#[test]
fn an_sqlite_archive_marked_newer_the_old_way_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.db");
    old_sqlite(&path, schema::LATEST);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let archive = open(&Setting::Sqlite(path.clone()));
    let why = archive.read_only().expect("read-only");
    assert!(why.contains("newer ocview (schema 99"), "{why}");
    drop(archive);
    // Nothing was written to it: no history table.
    let c = rusqlite::Connection::open(&path).unwrap();
    assert!(!sqlite_shape(&c).iter().any(|(_, n)| n == HISTORY));
}

// ---- PostgreSQL ----

fn pg_shape(url: &str) -> Vec<Vec<String>> {
    postgres_support::rows(
        url,
        "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = 'public'
         UNION ALL SELECT tablename, '' FROM pg_tables WHERE schemaname = 'public'
         ORDER BY 1, 2",
    )
}

/// A database as the runner before refinery left it at `version` (it had
/// no version 3: it went from 2 to 4), with one session in it.
fn old_postgres(pg: &postgres_support::Postgres, db: &str, version: i64) {
    let mut sql = String::from("CREATE TABLE ocview_schema (version BIGINT NOT NULL);");
    for (v, _, step) in ocview::archive::postgres::schema::MIGRATIONS
        .iter()
        .filter(|m| m.0 <= version)
    {
        if !step.is_empty() {
            sql.push_str(step);
            sql.push_str(&format!(
                ";\nINSERT INTO ocview_schema (version) VALUES ({v});"
            ));
        }
    }
    sql.push_str(&format!(
        "INSERT INTO sessions (id, title, directory, created, updated, raw)
           VALUES ('ses_old', 'Old', '/work/old', {T}, {T}, '{{}}');"
    ));
    pg.sql(db, &sql);
}

#[test]
fn postgres_archives_of_every_old_version_adopt_refinery_and_run_only_what_is_new() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let fresh = pg.database("fresh");
    drop(open(&Setting::Postgres(fresh.clone())));
    let fresh_shape = pg_shape(&fresh);
    let expected: Vec<Vec<String>> =
        expected_history(ocview::archive::postgres::schema::MIGRATIONS)
            .into_iter()
            .map(|(v, n, c)| vec![v.to_string(), n, c])
            .collect();
    // The versions the old runner could leave a database at.
    let old: Vec<i64> = ocview::archive::postgres::schema::MIGRATIONS
        .iter()
        .filter(|m| !m.2.is_empty() && m.0 <= schema::LAST_BEFORE_REFINERY)
        .map(|m| m.0)
        .collect();
    for version in old {
        let db = format!("v{version}");
        let url = pg.database(&db);
        old_postgres(&pg, &db, version);
        let mut archive = open(&Setting::Postgres(url.clone()));
        assert!(archive.read_only().is_none(), "v{version}");
        assert_eq!(archive.counts().unwrap().sessions, 1, "v{version}");
        drop(archive);
        let history = postgres_support::rows(
            &url,
            &format!("SELECT version, name, checksum FROM {HISTORY} ORDER BY version"),
        );
        assert_eq!(history, expected, "v{version}");
        let legacy = postgres_support::rows(&url, "SELECT max(version) FROM ocview_schema");
        assert_eq!(legacy, [[schema::LATEST.to_string()]], "v{version}");
        assert_eq!(pg_shape(&url), fresh_shape, "v{version}");
        assert!(open(&Setting::Postgres(url)).read_only().is_none());
    }
}

#[test]
fn a_postgres_archive_marked_newer_the_old_way_opens_read_only() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("newer");
    old_postgres(&pg, "newer", schema::LATEST);
    pg.sql("newer", "INSERT INTO ocview_schema (version) VALUES (99)");
    let archive = open(&Setting::Postgres(url.clone()));
    let why = archive.read_only().expect("read-only");
    assert!(why.contains("newer ocview (schema 99"), "{why}");
    drop(archive);
    let history = postgres_support::rows(&url, &format!("SELECT to_regclass('{HISTORY}') IS NULL"));
    assert_eq!(history, [["t"]]);
}

/// Two machines (here four threads) open a new PostgreSQL archive at the
/// same moment: each opens it, and every migration ran once.
#[test]
fn postgres_openers_at_once_on_a_new_archive_all_open_it() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    for round in 0..5 {
        let url = pg.database(&format!("at_once_{round}"));
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (url, start) = (url.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    Setting::Postgres(url)
                        .open()
                        .map(|e| e.is_some_and(|e| e.read_only().is_none()))
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for opener in openers {
            assert_eq!(opener.join().unwrap(), Ok(true), "round {round}");
        }
        let history = postgres_support::rows(&url, &format!("SELECT count(*) FROM {HISTORY}"));
        assert_eq!(history, [[schema::LATEST.to_string()]], "round {round}");
    }
}

/// A migration's Rust step on PostgreSQL: run after its SQL, before the
/// next migration, once; a failing one takes its migration back.
#[test]
fn a_postgres_rust_step_runs_after_its_sql_once_and_in_its_transaction() {
    use ocview::archive::migrate::{MigrateError, Ran};
    use ocview::archive::postgres::migrate::Step as PgStep;
    use ocview::archive::postgres::migrate::run;
    type Step<'a> = std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<(), MigrateError<tokio_postgres::Error>>>
                + Send
                + 'a,
        >,
    >;
    fn fill<'a>(tx: &'a tokio_postgres::Transaction<'a>) -> Step<'a> {
        Box::pin(async move {
            let words: bool = tx
                .query_one("SELECT to_regclass('words') IS NULL", &[])
                .await?
                .get(0);
            assert!(words, "the step runs before the next migration");
            Ok(tx
                .batch_execute("INSERT INTO numbers VALUES (1), (2), (3)")
                .await?)
        })
    }
    fn refuse<'a>(tx: &'a tokio_postgres::Transaction<'a>) -> Step<'a> {
        Box::pin(async move { Ok(tx.batch_execute("SELECT 1/0").await?) })
    }
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("steps");
    let list: &[schema::Migration] = &[
        (1, "numbers", "CREATE TABLE numbers (n INTEGER NOT NULL);"),
        (2, "words", "CREATE TABLE words (w TEXT NOT NULL);"),
    ];
    let longer: Vec<schema::Migration> = list
        .iter()
        .copied()
        .chain([(3, "more", "CREATE TABLE more (m INTEGER);")])
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (mut client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let steps: &[(i64, PgStep)] = &[(1, fill)];
        for _ in 0..2 {
            assert_eq!(run(&mut client, list, steps).await.unwrap(), Ran::Current);
        }
        let failing: &[(i64, PgStep)] = &[(1, fill), (3, refuse)];
        assert!(run(&mut client, &longer, failing).await.is_err());
    });
    assert_eq!(
        postgres_support::rows(&url, "SELECT count(*) FROM numbers"),
        [["3"]]
    );
    assert_eq!(
        postgres_support::rows(&url, "SELECT to_regclass('more') IS NULL"),
        [["t"]]
    );
    let history = postgres_support::rows(&url, &format!("SELECT max(version) FROM {HISTORY}"));
    assert_eq!(history, [["2"]]);
}
