//! Crash safety of file imports, on SQLite and on a real PostgreSQL: a large
//! import is killed with SIGKILL once the archive has committed one batch,
//! and again (a fresh archive) once it has committed several; each time
//! the archive is intact and holds exactly whole batches (the same as a
//! clean import of the records its checkpoint names); search works; the
//! next import resumes after the checkpoint, sends the archive only the
//! events of the records past it (not every event again), and ends with
//! the same archive as a clean import (counts, search results, each
//! session's log and latest state). Then a finished file is skipped and a
//! changed one is imported again.
//!
//! `OCVIEW_CRASH_SESSIONS` sets the file's size (sessions of 40 message
//! pairs, about 200 KB each).

use crate::support::big_events;
use crate::support::postgres as postgres_support;

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ocview::archive::{Query, Setting};

const MESSAGES: usize = 40;

fn sessions() -> usize {
    std::env::var("OCVIEW_CRASH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120)
}

fn session_ids(n: usize) -> Vec<String> {
    (0..n).map(|s| format!("ses_{s:06}bigsession")).collect()
}

/// Where archives are made: files in a folder, or databases of one server.
enum Place {
    Files(tempfile::TempDir),
    Server(postgres_support::Postgres),
}

impl Place {
    fn fresh(&self, name: &str) -> Setting {
        match self {
            Place::Files(dir) => Setting::Sqlite(dir.path().join(format!("{name}.db"))),
            Place::Server(pg) => Setting::Postgres(pg.database(name)),
        }
    }

    /// How many records of `file` the archive has committed, and whether
    /// all of them: read without writing (SQLite read-only; PostgreSQL a
    /// SELECT), and nothing while the archive is not made yet.
    fn committed(&self, setting: &Setting, file: &str) -> Option<(i64, bool)> {
        match setting {
            Setting::Sqlite(path) => {
                let conn = rusqlite::Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .ok()?;
                conn.query_row(
                    "SELECT records, done FROM imports WHERE file = ?1",
                    [file],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .ok()
            }
            Setting::Postgres(_) => {
                let mut engine = setting.open().ok()??;
                let c = engine.checkpoint(file).ok()??;
                Some((c.records, c.done))
            }
            Setting::Off => None,
        }
    }

    /// The engine's own check that nothing is damaged.
    fn assert_intact(&self, setting: &Setting) {
        match setting {
            Setting::Sqlite(path) => {
                let conn = rusqlite::Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .unwrap();
                let check: String = conn
                    .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                    .unwrap();
                assert_eq!(check, "ok");
            }
            Setting::Postgres(_) => {
                // No half-written rows survive a server's crash recovery
                // or a client's death; what can be said is that it opens
                // and answers writable.
                let engine = setting.open().unwrap().unwrap();
                assert_eq!(engine.read_only(), None);
            }
            Setting::Off => unreachable!(),
        }
    }
}

fn archive_arg(setting: &Setting) -> String {
    match setting {
        Setting::Sqlite(path) => path.display().to_string(),
        Setting::Postgres(url) => url.clone(),
        Setting::Off => unreachable!(),
    }
}

fn import_command(setting: &Setting, file: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ocview"));
    cmd.arg("--config")
        .arg(unredacted_config())
        .arg("--archive")
        .arg(archive_arg(setting))
        .args(["archive", "import"])
        .arg(file);
    cmd
}

/// A config that keeps a team archive unredacted: these tests count the
/// events an import sends against those written, and a redacted archive
/// keeps no text deltas.
fn unredacted_config() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ocview-crash-config-{}", std::process::id()));
    let path = dir.join("config.toml");
    if !path.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let part = dir.join("config.toml.part");
        std::fs::write(&part, "archive_redact = \"off\"\n").unwrap();
        std::fs::rename(&part, &path).unwrap();
    }
    path
}

/// Run an import to its end: (its stderr, events written, parts written).
fn import(setting: &Setting, file: &Path) -> (String, u64, u64) {
    let out = import_command(setting, file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let number_before = |word: &str| -> u64 {
        err.find(word).map_or(0, |at| {
            err[..at]
                .split_whitespace()
                .last()
                .and_then(|n| n.parse().ok())
                .unwrap()
        })
    };
    (
        err.clone(),
        number_before(" new events"),
        number_before(" parts written"),
    )
}

/// Everything a person can see of an archive: its counts, what several
/// searches find, and each session's log and latest state.
#[derive(Debug, PartialEq)]
struct Seen {
    counts: ocview::archive::engine::Counts,
    found: Vec<Vec<String>>,
    logs: Vec<Vec<String>>,
    states: Vec<Vec<String>>,
}

fn seen(setting: &Setting, sessions: &[String], with_file: bool) -> Seen {
    let mut engine = setting.open().unwrap().unwrap();
    let mut found = Vec::new();
    for words in ["billing", "invoices", "marker3x7", "done step", "pad"] {
        let mut q = Query::new(words);
        q.limit = 100_000;
        let mut hits: Vec<String> = engine
            .search(&q)
            .unwrap()
            .into_iter()
            .map(|mut h| {
                if !with_file {
                    h.file = None;
                }
                format!("{h:?}")
            })
            .collect();
        // Ties in time may come in either order.
        hits.sort();
        found.push(hits);
    }
    Seen {
        counts: engine.counts().unwrap(),
        found,
        logs: sessions.iter().map(|s| engine.events(s).unwrap()).collect(),
        states: sessions
            .iter()
            .map(|s| engine.snapshot(s).unwrap())
            .collect(),
    }
}

/// The numbers a resumed import's last line says it sent: "(E events, P
/// parts sent)".
fn sent(said: &str) -> (u64, u64) {
    let tail = said
        .rsplit_once(" (")
        .and_then(|(_, t)| t.strip_suffix(" parts sent)\n"))
        .unwrap_or_else(|| panic!("no sent counts: {said}"));
    let (events, parts) = tail.split_once(" events, ").unwrap();
    (events.parse().unwrap(), parts.parse().unwrap())
}

/// Start an import into `crashed` and kill it with SIGKILL once its
/// checkpoint was seen to move `batches` times (at least that many
/// batches committed); the records the checkpoint then says.
fn kill_after(place: &Place, crashed: &Setting, big: &Path, file: &str, batches: usize) -> i64 {
    let mut child = import_command(crashed, big)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut seen_at = 0;
    let mut moves = 0;
    let at_kill = loop {
        if let Some((records, _)) = place.committed(crashed, file)
            && records > seen_at
        {
            seen_at = records;
            moves += 1;
            if moves >= batches {
                child.kill().unwrap();
                break records;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended after {moves} checkpoints were seen, before {batches}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no checkpoint"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL");
    place.assert_intact(crashed);
    let (records, done) = place.committed(crashed, file).unwrap();
    assert!(records >= at_kill);
    assert!(
        !done,
        "the file is too small to be caught mid-import: raise OCVIEW_CRASH_SESSIONS"
    );
    records
}

fn crash_and_resume(place: &Place) {
    let n = sessions();
    let ids = session_ids(n);
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    big_events::write(
        &mut std::io::BufWriter::new(std::fs::File::create(&big).unwrap()),
        n,
        MESSAGES,
    );
    let size = std::fs::metadata(&big).unwrap().len();
    eprintln!("big.jsonl: {:.1} MB", size as f64 / 1e6);
    let file = std::fs::canonicalize(&big).unwrap().display().to_string();
    let lines = std::io::BufReader::new(std::fs::File::open(&big).unwrap())
        .lines()
        .count() as i64;

    // A clean import, to compare with.
    let clean = place.fresh("clean");
    let (_, clean_events, clean_parts) = import(&clean, &big);
    assert!(clean_events > 0 && clean_parts > 0);
    let clean_seen = seen(&clean, &ids, true);

    // Killed after the first committed batch, and after several: the
    // resumed import starts where each one's checkpoint says.
    let mut killed_at = Vec::new();
    let mut last = None;
    for batches in [1, 4] {
        let crashed = place.fresh(&format!("crashed{batches}"));
        let records = kill_after(place, &crashed, &big, &file, batches);
        eprintln!("killed after {batches}+ batches: {records} of {lines} records");
        assert!(records < lines);
        assert!(
            killed_at.last().is_none_or(|&before| records > before),
            "a later kill point: {records} after {killed_at:?}"
        );
        killed_at.push(records);

        // Exactly whole batches: what a clean import of the committed
        // records makes, no more, no less.
        let prefix = dir.path().join(format!("prefix{batches}.jsonl"));
        {
            let mut out = std::io::BufWriter::new(std::fs::File::create(&prefix).unwrap());
            for line in std::io::BufReader::new(std::fs::File::open(&big).unwrap())
                .lines()
                .take(records as usize)
            {
                writeln!(out, "{}", line.unwrap()).unwrap();
            }
        }
        let reference = place.fresh(&format!("reference{batches}"));
        import(&reference, &prefix);
        let half = seen(&crashed, &ids, false);
        assert!(half.counts.events > 0);
        assert!(half.counts.events < clean_seen.counts.events);
        assert_eq!(half, seen(&reference, &ids, false));
        // Search works on what is there.
        let mut engine = crashed.open().unwrap().unwrap();
        assert!(!engine.search(&Query::new("billing")).unwrap().is_empty());
        drop(engine);

        // The next import resumes after the checkpoint: it sends the
        // archive only the events of the records past it (a redo would
        // send every event again, the archive's upserts hiding it), and
        // ends with the same archive as a clean import.
        let (said, events, parts) = import(&crashed, &big);
        assert!(
            said.contains(&format!("resuming after record {records} ")),
            "{said}"
        );
        let (sent_events, sent_parts) = sent(&said);
        assert_eq!(
            sent_events,
            clean_events - half.counts.events,
            "the resumed import sent events of records it had committed: {said}"
        );
        assert!(sent_parts < clean_parts, "{said}");
        assert_eq!(events, sent_events, "{said}");
        assert!(
            events + parts < clean_events + clean_parts,
            "resumed: {events} events + {parts} parts; clean: {clean_events} + {clean_parts}"
        );
        assert_eq!(seen(&crashed, &ids, true), clean_seen);
        last = Some(crashed);
    }
    let crashed = last.unwrap();

    // A finished file is skipped; a changed one is read again.
    let (said, events, _) = import(&crashed, &big);
    assert!(said.contains("already archived"), "{said}");
    assert_eq!(events, 0);
    let mut more = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
    let extra = serde_json::json!({"t": 1_900_000_000_000i64, "event": {"type": "session.updated",
        "properties": {"sessionID": ids[0], "info": {"id": ids[0], "title": "renamed after the crash",
        "directory": "/work/project0", "time": {"created": 1, "updated": 1_900_000_000_000i64}}}}});
    writeln!(more, "{extra}").unwrap();
    drop(more);
    let (said, events, _) = import(&crashed, &big);
    assert!(!said.contains("resuming"), "{said}");
    assert_eq!(events, 1, "{said}");
    let mut engine = crashed.open().unwrap().unwrap();
    let hits = engine.search(&Query::new("renamed")).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, ids[0]);
}

#[test]
fn sqlite_import_killed_mid_way_resumes_to_the_same_archive() {
    crash_and_resume(&Place::Files(tempfile::tempdir().unwrap()));
}

#[test]
fn postgres_import_killed_mid_way_resumes_to_the_same_archive() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    crash_and_resume(&Place::Server(pg));
}
