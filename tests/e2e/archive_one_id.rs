//! One session, one id: a session watched through a fleet, through attach
//! and from a file is one session in the archive, under its own id, on
//! both engines. An archive from before (tests/fixtures/archive-scoped-ids,
//! made by the ocview that kept a fleet's ids) is merged on upgrade: each
//! session once, with every message and part, its log under its own id and
//! replayed without a stand-in, a fleet's recording imported again adding
//! nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::support::postgres as postgres_support;

use ocview::archive::{Engine, Query, Setting};

const PARENT: &str = "ses_dfd6f7417ffe6AJBvibXVs0PH5";
const CHILD: &str = "ses_dfd6f6cb2ffewxMhviEyTeJrgz";
const SERVER: &str = "127.0.0.1:4121";

/// The fixture's scenario as attach records it, and as a fleet does (each
/// line naming its server): (attach, fleet).
fn recordings(dir: &Path) -> (PathBuf, PathBuf) {
    let source = common::fixtures_dir().join("e_task_subagent/event.jsonl");
    let text = std::fs::read_to_string(source).unwrap();
    let mut attach = String::new();
    let mut fleet = format!(
        r#"{{"server":"{SERVER}","type":"ocview.server","properties":{{"url":"http://{SERVER}","state":"live"}}}}"#
    );
    fleet.push('\n');
    for line in text.lines() {
        let wrapped: serde_json::Value = serde_json::from_str(line).unwrap();
        let mut event = wrapped["event"].clone();
        attach.push_str(&event.to_string());
        attach.push('\n');
        event["server"] = SERVER.into();
        fleet.push_str(&event.to_string());
        fleet.push('\n');
    }
    let (a, f) = (dir.join("attach.jsonl"), dir.join("fleet.jsonl"));
    std::fs::write(&a, attach).unwrap();
    std::fs::write(&f, fleet).unwrap();
    (a, f)
}

/// `ocview archive import --archive ARCHIVE FILE`: its report.
fn import(archive: &str, file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["archive", "import", "--archive", archive])
        .arg(file)
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    said
}

/// The scenario's two sessions, each once under its own id, with every
/// message and part, each event of the log once, found by search under
/// its own id, and replayed from its log with no stand-in nor orphan.
fn assert_one_copy(archive: &mut dyn Engine, events: u64) {
    let listed: Vec<(String, Option<String>)> = archive
        .list_page(None, 50)
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.server))
        .collect();
    let mut ids: Vec<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, [CHILD, PARENT], "{listed:?}");
    let counts = archive.counts().unwrap();
    assert_eq!(
        (counts.sessions, counts.messages, counts.parts),
        (2, 7, 20),
        "{counts:?}"
    );
    assert_eq!(counts.events, events, "each event once: {counts:?}");

    for (id, messages) in [(PARENT, 3), (CHILD, 4)] {
        let snapshot = archive.snapshot(id).unwrap();
        let said = snapshot
            .iter()
            .filter(|l| l.contains(r#""type":"message.updated""#))
            .count();
        assert_eq!(said, messages, "{id}");
        let log = ocview::archive::export::session_log(archive, id).unwrap();
        assert!(!log.is_empty(), "{id}");
        for line in &log {
            assert!(!line.contains(&format!("@{SERVER}")), "{line}");
        }
        let (store, stats) = common::replay_bytes(log.join("\n").as_bytes());
        assert_eq!(stats.orphans, 0, "{id}: {stats:?}");
        let session = store.session(id).unwrap_or_else(|| panic!("{id} replays"));
        assert!(!session.placeholder, "{id}");
        assert_eq!(session.messages.len(), messages, "{id}");
        assert!(
            store
                .sessions()
                .iter()
                .all(|s| !s.info.id.contains('@') && !s.placeholder),
            "{id}: {:?}",
            store
                .sessions()
                .iter()
                .map(|s| &s.info.id)
                .collect::<Vec<_>>()
        );
    }
    let hits = archive.search(&Query::new("subagent")).unwrap();
    assert!(!hits.is_empty());
    for hit in hits {
        assert!(
            hit.session_id == PARENT || hit.session_id == CHILD,
            "{}",
            hit.session_id
        );
    }
}

#[test]
fn a_fleet_and_an_attach_of_one_server_keep_one_session_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (attach, fleet) = recordings(dir.path());
    let archive = dir.path().join("archive.db");
    let place = archive.display().to_string();
    import(&place, &fleet);
    let again = import(&place, &attach);
    assert!(again.contains(" 0 new events"), "{again}");
    let mut engine = Setting::Sqlite(archive).open().unwrap().unwrap();
    assert_one_copy(&mut *engine, 114);
}

#[test]
fn a_fleet_and_an_attach_of_one_server_keep_one_session_in_postgres() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (attach, fleet) = recordings(dir.path());
    let url = pg.database("fleet_attach");
    import(&url, &attach);
    let again = import(&url, &fleet);
    assert!(again.contains(" 0 new events"), "{again}");
    let mut engine = Setting::Postgres(url).open().unwrap().unwrap();
    // A team archive keeps its 24 text deltas home (`archive_redact`).
    assert_one_copy(&mut *engine, 114 - 24);
}

fn scoped_fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/archive-scoped-ids")
        .join(file)
}

#[test]
fn an_sqlite_archive_with_a_fleets_ids_is_merged_on_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    std::fs::copy(scoped_fixture("archive.db"), &archive).unwrap();
    {
        let c = rusqlite::Connection::open(&archive).unwrap();
        let scoped: i64 = c
            .query_row(
                "SELECT count(*) FROM sessions WHERE id LIKE '%@%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(scoped, 2, "the fixture holds a fleet's copies");
    }
    let mut engine = Setting::Sqlite(archive.clone()).open().unwrap().unwrap();
    assert_one_copy(&mut *engine, 114);
    drop(engine);
    let c = rusqlite::Connection::open(&archive).unwrap();
    for table in ["messages", "parts", "event_blocks"] {
        let scoped: i64 = c
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE session_id LIKE '%@%'"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(scoped, 0, "{table}");
    }
    let parent: Option<String> = c
        .query_row(
            "SELECT parent_id FROM sessions WHERE id = ?1",
            [CHILD],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(parent.as_deref(), Some(PARENT));
    // The fleet's recording read once more: every event is known.
    let (_, fleet) = recordings(dir.path());
    let said = import(&archive.display().to_string(), &fleet);
    assert!(said.contains(" 0 new events"), "{said}");
}

#[test]
fn a_postgres_archive_with_a_fleets_ids_is_merged_on_upgrade() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("scoped_ids");
    pg.sql_file("scoped_ids", &scoped_fixture("postgres.sql"));
    let scoped = postgres_support::rows(&url, "SELECT count(*) FROM sessions WHERE id LIKE '%@%'");
    assert_eq!(scoped, [["2"]], "the fixture holds a fleet's copies");
    let mut engine = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    // Written before redaction: its deltas are kept as they were.
    assert_one_copy(&mut *engine, 114);
    drop(engine);
    for table in ["messages", "parts", "event_blocks"] {
        let scoped = postgres_support::rows(
            &url,
            &format!("SELECT count(*) FROM {table} WHERE session_id LIKE '%@%'"),
        );
        assert_eq!(scoped, [["0"]], "{table}");
    }
    let parent = postgres_support::rows(
        &url,
        &format!("SELECT parent_id FROM sessions WHERE id = '{CHILD}'"),
    );
    assert_eq!(parent, [[PARENT]]);
    let dir = tempfile::tempdir().unwrap();
    let (_, fleet) = recordings(dir.path());
    let said = import(&url, &fleet);
    assert!(said.contains(" 0 new events"), "{said}");
}
