//! Pruning forgets what it took: a file whose sessions were all pruned is
//! imported again (its checkpoint went with them), one with sessions left
//! is still "already archived"; an opencode database whose sessions were
//! all pruned for age is not brought back by an importer that keeps the
//! same age limit, and is brought back whole once the limit is lifted
//! (its import mark went too). Run on both engines: SQLite in a temporary
//! directory and a real PostgreSQL.

use crate::support::fresh_archive;
use crate::support::history_db;
use crate::support::postgres as postgres_support;

use fresh_archive::{Files, Fresh, Server};
use std::path::{Path, PathBuf};

use ocview::archive::import::{Imported, import_file};
use ocview::archive::import_db::{DbImported, import_db, import_db_within};
use ocview::archive::{Engine, Limits, Setting, prune};

const DAY: i64 = 24 * 3600 * 1000;
const NOW: i64 = 1_795_547_214_000;

fn open(setting: &Setting) -> Box<dyn Engine> {
    setting
        .open()
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("on")
}

use crate::support::fresh_archive::session_ids as sessions;

/// A recording of one session last updated at `updated`, with a part.
fn recording(dir: &Path, id: &str, updated: i64) -> PathBuf {
    let path = dir.join(format!("{id}.jsonl"));
    let text = format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{id}","title":"Session {id}","directory":"/work/a","time":{{"created":{updated},"updated":{updated}}}}}}}}}
{{"type":"message.updated","properties":{{"info":{{"id":"msg_{id}","sessionID":"{id}","role":"assistant","agent":"build","providerID":"p","modelID":"m","time":{{"created":{updated}}}}}}}}}
{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{id}","messageID":"msg_{id}","sessionID":"{id}","type":"text","text":"words of {id}"}}}}}}
"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn import(archive: &mut dyn Engine, path: &Path) -> Imported {
    import_file(archive, path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn suite(engines: &mut dyn Fresh) {
    a_full_archive_takes_only_the_databases_sessions_it_would_keep(engines);
    a_file_whose_sessions_all_went_imports_again(engines);
    a_pruned_database_stays_out_under_the_age_limit_and_comes_back_without(engines);
}

fn a_file_whose_sessions_all_went_imports_again(engines: &mut dyn Fresh) {
    let dir = tempfile::tempdir().unwrap();
    let old = recording(dir.path(), "ses_old", NOW - 100 * DAY);
    let new = recording(dir.path(), "ses_new", NOW - DAY);
    let mut archive = open(&engines.fresh());
    for f in [&old, &new] {
        assert!(!import(&mut *archive, f).already);
        assert!(import(&mut *archive, f).already, "{}", f.display());
    }
    let limits = Limits {
        max_bytes: None,
        max_age_days: Some(30),
    };
    let pruned = prune::prune(&mut *archive, &limits, NOW).unwrap();
    assert_eq!(pruned.by_age, ["ses_old"]);
    assert_eq!(sessions(&mut *archive), ["ses_new"]);

    // Its only session went: the file is not "already archived" any more.
    let again = import(&mut *archive, &old);
    assert!(!again.already, "{again:?}");
    assert!(
        again.written.events > 0 && again.written.parts > 0,
        "{again:?}"
    );
    assert_eq!(sessions(&mut *archive), ["ses_new", "ses_old"]);
    assert!(import(&mut *archive, &old).already);
    // The other file lost nothing: it is still in.
    assert!(import(&mut *archive, &new).already);
}

/// An archive at its size cap takes a database's sessions newest first
/// until the next is older than every session it keeps (a prune would
/// take it first), and says so.
fn a_full_archive_takes_only_the_databases_sessions_it_would_keep(engines: &mut dyn Fresh) {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = open(&engines.fresh());
    import(
        &mut *archive,
        &recording(dir.path(), "ses_kept_old", NOW - 100 * DAY),
    );
    import(
        &mut *archive,
        &recording(dir.path(), "ses_kept_new", NOW - DAY),
    );
    let full = archive.size().unwrap();
    let db = database(
        dir.path(),
        &[
            ("ses_db_new", 0),
            ("ses_db_mid", 50),
            ("ses_db_older", 200),
            ("ses_db_oldest", 300),
        ],
    );
    let within = ocview::archive::import_db::Within {
        floor: None,
        cap: Some(full),
    };
    let done = import_db_within(&mut *archive, &db, within, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(done.at_cap, "{done:?}");
    assert_eq!(
        sessions(&mut *archive),
        ["ses_db_mid", "ses_db_new", "ses_kept_new", "ses_kept_old"]
    );
}

/// A database of two sessions, both older than the age limit used below.
fn old_database(dir: &Path) -> PathBuf {
    database(dir, &[("ses_db_older", 200), ("ses_db_old", 150)])
}

/// A database of these sessions, each last updated so many days ago.
fn database(dir: &Path, sessions: &[(&str, i64)]) -> PathBuf {
    let path = dir.join("opencode.db");
    let c = history_db::create(&path, true);
    history_db::project(&c, "prj_a", "/work/alpha", NOW - 300 * DAY);
    for &(id, days) in sessions {
        let t = NOW - days * DAY;
        history_db::session(&c, id, "prj_a", None, &format!("Title {id}"), t, None);
        let msg = format!("msg_{id}");
        history_db::message(
            &c,
            &msg,
            id,
            t,
            &format!(
                r#"{{"role":"user","time":{{"created":{t}}},"agent":"build","model":{{"providerID":"mock","modelID":"mock-1"}}}}"#
            ),
        );
        history_db::part(
            &c,
            &format!("prt_{id}"),
            &msg,
            id,
            t,
            r#"{"type":"text","text":"an old question"}"#,
        );
    }
    path
}

fn import_db_now(archive: &mut dyn Engine, db: &Path, limits: &Limits) -> DbImported {
    import_db_within(
        archive,
        db,
        ocview::archive::import_db::Within {
            floor: limits.age_floor(NOW),
            cap: None,
        },
        &mut |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn a_pruned_database_stays_out_under_the_age_limit_and_comes_back_without(engines: &mut dyn Fresh) {
    let dir = tempfile::tempdir().unwrap();
    let db = old_database(dir.path());
    let mut archive = open(&engines.fresh());
    // Imported with no age limit (or by an ocview without one).
    import_db(&mut *archive, &db, &mut |_, _| {}).unwrap();
    assert_eq!(sessions(&mut *archive), ["ses_db_old", "ses_db_older"]);
    let limits = Limits {
        max_bytes: None,
        max_age_days: Some(60),
    };
    let pruned = prune::prune(&mut *archive, &limits, NOW).unwrap();
    assert_eq!(pruned.by_age.len(), 2, "{pruned:?}");

    // Under the same limit, the importer brings back nothing it would
    // prune again.
    let under_limit = import_db_now(&mut *archive, &db, &limits);
    assert_eq!(under_limit.sessions, 0, "{under_limit:?}");
    assert_eq!(under_limit.written.events + under_limit.written.parts, 0);
    assert!(sessions(&mut *archive).is_empty());
    assert_eq!(
        prune::prune(&mut *archive, &limits, NOW)
            .unwrap()
            .sessions(),
        0
    );

    // The limit lifted: every session comes back (the mark went with the
    // last of them, not only those updated since it).
    let lifted = import_db_now(&mut *archive, &db, &Limits::NONE);
    assert_eq!(lifted.sessions, 2, "{lifted:?}");
    assert_eq!(sessions(&mut *archive), ["ses_db_old", "ses_db_older"]);
    // And the mark is back: a second run reads nothing new.
    let second = import_db_now(&mut *archive, &db, &Limits::NONE);
    assert_eq!(
        second.written.events + second.written.parts,
        0,
        "{second:?}"
    );
}

#[test]
fn sqlite_pruning_forgets_the_imports_of_what_it_took() {
    suite(&mut Files(tempfile::tempdir().unwrap(), 0));
}

#[test]
fn postgres_pruning_forgets_the_imports_of_what_it_took() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    suite(&mut Server(pg, 0));
}

/// `ocview archive prune --dry-run` says what a prune would take and takes
/// nothing; the prune itself goes on record, and `ocview archive log`
/// says when, from which archive, which session and why (issue 40,
/// point 2). The log is private.
#[test]
fn a_dry_run_takes_nothing_and_every_prune_is_on_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("ocview")).unwrap();
    // The fixtures are from 2026-11-22: older than a day from then on.
    let limit = |days: u32| {
        std::fs::write(
            config.join("ocview/config.toml"),
            format!("archive_max_mb = 0\narchive_max_age_days = {days}\n"),
        )
        .unwrap()
    };
    // No limit while it is imported (an import keeps the archive within
    // its limits as it goes: it would take it at once).
    limit(0);
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(args)
            .args(["--archive", &db.display().to_string()])
            .env("XDG_CONFIG_HOME", &config)
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let fixture = crate::common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    run(&["archive", "import", &fixture.display().to_string()]);
    let said = run(&["archive", "log"]);
    assert!(
        said.starts_with("nothing was pruned on this machine"),
        "{said}"
    );
    limit(1);
    let plan = run(&["archive", "prune", "--dry-run"]);
    assert!(
        plan.contains("a prune now would take 1 session")
            && plan.contains("List project files")
            && plan.contains("(older than 1 days)"),
        "{plan}"
    );
    let mut archive = open(&Setting::Sqlite(db.clone()));
    assert_eq!(sessions(&mut *archive).len(), 1, "a dry run takes nothing");
    drop(archive);
    run(&["archive", "prune"]);
    let log = run(&["archive", "log"]);
    assert!(
        log.contains("pruned ses_") && log.contains("“List project files” (older than 1 days)"),
        "{log}"
    );
    assert!(log.contains(&db.display().to_string()), "{log}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(state.join("ocview/prune.log"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}
