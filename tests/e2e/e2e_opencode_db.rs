//! opencode 1.18.33's own database, checked against the real binary: where
//! it is (`XDG_DATA_HOME`, `OPENCODE_DB`), the tables and columns ocview
//! reads, a session made through the server read back from the file while
//! the server runs, and the credential tables refused on the real file.

use crate::support;

use ocview::source::opencode_db::{Db, DbEnv, DbError};
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::{Server, binary};

fn env_of(server: &Server) -> DbEnv {
    DbEnv {
        opencode_db: None,
        xdg_data_home: Some(server.home.join("data")),
        home: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_database_is_where_ocview_looks_and_reads_while_the_server_runs() {
    let model = FakeModel::start(steps(vec![Step::text("Hello from the fake model.")])).await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    server.prompt(&session, "Say hello").await;
    server.wait_idle(&session, 60).await;
    let info = server.get(&format!("/session/{session}")).await;
    let messages = server.messages(&session).await;
    assert!(messages.len() >= 2, "{messages:?}");

    // Where: $XDG_DATA_HOME/opencode/opencode.db for a release build.
    let path = env_of(&server).database().unwrap();
    assert_eq!(path, server.home.join("data/opencode/opencode.db"));
    assert!(path.exists(), "no database at {}", path.display());
    assert!(
        !std::fs::read_dir(server.home.join("data/opencode"))
            .unwrap()
            .any(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.starts_with("opencode-") && name.ends_with(".db")
            }),
        "a release build wrote a channel database"
    );

    // Read while the server is up (it holds the file open, WAL mode).
    let db = Db::open(&path).unwrap();
    let schema = db.schema();
    for table in [
        "session",
        "message",
        "part",
        "todo",
        "project",
        "event",
        "migration",
    ] {
        assert!(
            schema.has_table(table),
            "no {table} table: {:?}",
            schema.tables.keys()
        );
    }
    for column in [
        "id",
        "project_id",
        "parent_id",
        "directory",
        "title",
        "version",
        "time_created",
        "time_updated",
        "time_archived",
        "summary_additions",
        "agent",
        "model",
    ] {
        assert!(schema.has("session", column), "session.{column} missing");
    }
    assert!(schema.has_totals(), "per-session totals columns missing");
    for (table, column) in [
        ("message", "session_id"),
        ("message", "data"),
        ("part", "message_id"),
        ("part", "session_id"),
        ("part", "data"),
        ("event", "aggregate_id"),
        ("event", "type"),
        ("event", "data"),
        ("event", "seq"),
        ("todo", "session_id"),
        ("todo", "content"),
        ("todo", "status"),
        ("todo", "priority"),
        ("todo", "position"),
        ("project", "id"),
        ("project", "worktree"),
        ("migration", "id"),
    ] {
        assert!(schema.has(table, column), "{table}.{column} missing");
    }
    for secret in ["account", "control_account", "credential", "account_state"] {
        assert!(schema.has_table(secret), "1.18.33 has {secret}");
    }
    assert_eq!(schema.migrations, Some(38), "1.18.33 applies 38 migrations");
    assert!(schema.unreadable().is_empty(), "{:?}", schema.unreadable());

    // The session the server made, read back from the file.
    let rows = db.sessions(100, None).unwrap();
    let row = rows
        .iter()
        .find(|r| r.id == session)
        .expect("the session is listed");
    assert_eq!(row.title.as_deref(), info["title"].as_str());
    assert_eq!(row.version.as_deref(), Some("1.18.33"));
    assert_eq!(row.directory.as_deref(), info["directory"].as_str());
    assert_eq!(row.project_id.as_deref(), info["projectID"].as_str());
    assert_eq!(row.time_created, info["time"]["created"].as_i64());
    assert!(row.totals.is_some());
    assert_eq!(
        db.message_count(&session).unwrap(),
        Some(messages.len() as u64)
    );

    // The event log has no time column; ids carry the time: the first 12
    // hex digits are ms × 0x1000 modulo 2^48.
    assert!(!schema.has("event", "time_created") && !schema.has("event", "time"));
    let types = db
        .query_strings(&format!(
            "SELECT DISTINCT type FROM event WHERE aggregate_id = '{session}' ORDER BY type"
        ))
        .unwrap();
    eprintln!("event types: {types:?}");
    assert!(!types.is_empty(), "no event rows for the session");
    let event_ids = db
        .query_strings(&format!(
            "SELECT id FROM event WHERE aggregate_id = '{session}'"
        ))
        .unwrap();
    assert!(
        event_ids.iter().all(|id| id.starts_with("evt_")),
        "{event_ids:?}"
    );
    assert!(
        types
            .iter()
            .all(|t| t.contains("updated") || t.contains("created")),
        "{types:?}"
    );
    assert!(
        !types
            .iter()
            .any(|t| t.contains("delta") || t.contains("status")),
        "{types:?}"
    );
    let ids = db
        .query_strings(&format!(
            "SELECT id || ' ' || time_created FROM message WHERE session_id = '{session}'"
        ))
        .unwrap();
    for row in &ids {
        let (id, created) = row.split_once(' ').unwrap();
        let stamp = u64::from_str_radix(&id[4..16], 16).unwrap() / 0x1000;
        let created: u64 = created.parse().unwrap();
        let diff = (stamp as i64 - (created % (1 << 36)) as i64).abs();
        assert!(diff < 5_000, "{id}: {stamp} vs {created}");
    }
    // A message's data is its info without the ids.
    let data = db
        .query_strings(&format!(
            "SELECT data FROM message WHERE session_id = '{session}' LIMIT 1"
        ))
        .unwrap();
    let data: serde_json::Value = serde_json::from_str(&data[0]).unwrap();
    assert!(
        data.get("role").is_some() && data.get("id").is_none() && data.get("sessionID").is_none(),
        "{data}"
    );

    // The credential tables are refused on the real file too.
    for sql in ["SELECT * FROM credential", "SELECT count(*) FROM account"] {
        assert!(
            matches!(db.query_strings(sql), Err(DbError::Denied(_))),
            "{sql} not refused"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_db_moves_the_database_as_ocview_expects() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::prepare(&model.url(), None);
    // An absolute OPENCODE_DB is used as is; a relative one is in the
    // data folder.
    let absolute = server.home.join("elsewhere/mine.db");
    std::fs::create_dir_all(absolute.parent().unwrap()).unwrap();
    for value in [absolute.display().to_string(), "relative.db".to_string()] {
        let out = server
            .command(&binary())
            .args(["session", "list"])
            .env("OPENCODE_DB", &value)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "opencode session list: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env = DbEnv {
            opencode_db: Some(value.clone()),
            ..env_of(&server)
        };
        let expected = env.database().unwrap();
        assert!(
            expected.exists(),
            "OPENCODE_DB={value}: nothing at {}",
            expected.display()
        );
        let db = Db::open(&expected).unwrap();
        assert_eq!(db.session_count().unwrap(), 0);
    }
    assert!(server.home.join("data/opencode/relative.db").exists());
    assert!(!server.home.join("data/opencode/opencode.db").exists());
}
