//! This machine's opencode database can be left out of the archive on its
//! own: a viewer (the real binary, in tmux) started where opencode's
//! database is, with `--no-archive-opencode-db` or `archive_opencode_db =
//! false` in the config, archives the file it replays and nothing from the
//! database; without either, the database's sessions reach the archive.

use crate::support::history_db;
use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const NOW: i64 = 1_795_547_214_000;

/// `$XDG_DATA_HOME/opencode/opencode.db` under `data`, with one session.
fn opencode_db(data: &Path) -> PathBuf {
    let dir = data.join("opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("opencode.db");
    let c = history_db::create(&path, true);
    history_db::project(&c, "prj_a", "/work/alpha", NOW);
    history_db::session(&c, "ses_from_db", "prj_a", None, "From the db", NOW, None);
    history_db::message(
        &c,
        "msg_db",
        "ses_from_db",
        NOW,
        r#"{"role":"user","time":{"created":1795547214000},"agent":"build","model":{"providerID":"mock","modelID":"mock-1"}}"#,
    );
    history_db::part(
        &c,
        "prt_db",
        "msg_db",
        "ses_from_db",
        NOW,
        r#"{"type":"text","text":"a capybara question"}"#,
    );
    std::fs::canonicalize(&path).unwrap()
}

fn read_only(archive: &Path) -> Option<rusqlite::Connection> {
    rusqlite::Connection::open_with_flags(archive, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()
}

/// Sessions of the archive that came from `file`.
fn sessions_from(archive: &Path, file: &Path) -> i64 {
    read_only(archive)
        .and_then(|c| {
            c.query_row(
                "SELECT count(*) FROM sessions WHERE file = ?1",
                [file.display().to_string()],
                |r| r.get(0),
            )
            .ok()
        })
        .unwrap_or(0)
}

/// The replayed file's import is finished.
fn file_done(archive: &Path, file: &Path) -> bool {
    read_only(archive)
        .and_then(|c| {
            c.query_row(
                "SELECT done FROM imports WHERE file = ?1",
                [file.display().to_string()],
                |r| r.get::<_, bool>(0),
            )
            .ok()
        })
        .unwrap_or(false)
}

fn until(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A viewer replaying a recording, with opencode's database in its
/// `XDG_DATA_HOME`, `flag` on its command line and `config` in its config
/// file; once the recording is archived (and, when `expect_db`, the
/// database's session), how many sessions came from the database.
fn run_viewer(tag: &str, flag: &str, config: &str, expect_db: bool) -> i64 {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = opencode_db(&data);
    let archive = dir.path().join("archive.db");
    let recording = std::fs::canonicalize(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-run.ndjson"),
    )
    .unwrap();
    let t = tmux::Tmux::start_sized(tag, 100, 30);
    let config_dir = t.home().join("ocview");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("config.toml"), config).unwrap();
    t.line(&format!(
        "env -u OPENCODE_DB XDG_DATA_HOME={} {} --archive {} {flag} replay {}",
        data.display(),
        env!("CARGO_BIN_EXE_ocview"),
        archive.display(),
        recording.display()
    ));
    until("the recording archived", 60, || {
        file_done(&archive, &recording)
    });
    if expect_db {
        until("the database's session archived", 60, || {
            sessions_from(&archive, &db) > 0
        });
    } else {
        // The follower, when on, imports at once when it starts, beside
        // the recording: give it well more than the one session takes.
        std::thread::sleep(Duration::from_secs(4));
    }
    let from_db = sessions_from(&archive, &db);
    t.keys(&["q"]);
    from_db
}

#[test]
fn the_opencode_database_is_archived_unless_switched_off_alone() {
    assert_eq!(run_viewer("db-on", "", "", true), 1, "on by default");
    assert_eq!(
        run_viewer("db-flag-off", "--no-archive-opencode-db", "", false),
        0,
        "--no-archive-opencode-db"
    );
    assert_eq!(
        run_viewer("db-config-off", "", "archive_opencode_db = false\n", false),
        0,
        "archive_opencode_db = false"
    );
}
