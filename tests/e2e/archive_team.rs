//! The team's archive: several writers on one PostgreSQL, bulk loads, and
//! the local spool that keeps what comes while the server is away.

use crate::support::postgres as postgres_support;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ocview::archive::Setting;
use ocview::archive::rows::{Batch, EventRow, Origin, PartRow, SessionRow};
use ocview::archive::spool::Spool;

/// A batch of `n` events and `n` parts of session `sid`, numbered from `from`.
pub(crate) fn synthetic(host: &str, sid: &str, from: usize, n: usize) -> Batch {
    let mut b = Batch {
        origin: Origin {
            server: None,
            host: host.into(),
            file: None,
        },
        ..Default::default()
    };
    b.sessions.push(SessionRow {
        id: sid.into(),
        parent_id: None,
        title: format!("synthetic {sid}"),
        directory: Some("/p".into()),
        server: None,
        created: 1,
        updated: (from + n) as i64,
        raw: format!(r#"{{"id":"{sid}"}}"#),
    });
    for i in from..from + n {
        b.events.push(EventRow {
            key: format!("{sid}:e{i}"),
            session_id: sid.into(),
            time_ms: i as i64,
            json: format!(r#"{{"type":"x","n":{i}}}"#),
        });
        b.parts.push(PartRow {
            id: format!("{sid}:p{i}"),
            message_id: format!("{sid}:m{}", i / 10),
            session_id: sid.into(),
            kind: "text".into(),
            tool: None,
            state: None,
            model: None,
            agent: None,
            time: i as i64,
            updated: i as i64,
            text: format!("part {i} of the invoice ledger in {sid}"),
            raw: format!(r#"{{"id":"{sid}:p{i}","type":"text"}}"#),
            logged_as: None,
            error: None,
            prepared: None,
        });
    }
    b
}

/// Rows (events + parts) a second into one PostgreSQL, in the writer's
/// batches; printed, never asserted.
#[test]
pub(crate) fn bulk_write_rate() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("rate");
    let mut archive = Setting::Postgres(url).open().unwrap().unwrap();
    let per_batch = 1000;
    let batches: usize = std::env::var("OCVIEW_RATE_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let started = Instant::now();
    for i in 0..batches {
        archive
            .write(&synthetic(
                "h",
                &format!("ses_{}", i % 4),
                i * per_batch,
                per_batch,
            ))
            .unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let rows = (batches * per_batch * 2) as f64;
    eprintln!(
        "PostgreSQL bulk write: {rows} rows in {secs:.2} s = {:.0} rows/s",
        rows / secs
    );
    let counts = archive.counts().unwrap();
    assert_eq!(counts.parts as usize, batches * per_batch);
    assert_eq!(counts.events as usize, batches * per_batch);
}

/// Where this test process keeps its spools: one folder for the whole run
/// (the environment is the process's), each archive its own file in it.
pub(crate) fn state_home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        // SAFETY: set once, before any thread of this test reads it (every
        // test calls this first, and OnceLock runs it once).
        unsafe { std::env::set_var("XDG_STATE_HOME", &dir) };
        dir
    })
}

/// A session's life as bus events, one a line: the session, a message,
/// `parts` parts each saying "invoice".
pub(crate) fn session_lines(sid: &str, parts: usize) -> Vec<String> {
    let mut out = vec![format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{sid}","title":"Invoices of {sid}","directory":"/work/{sid}","time":{{"created":1700000000000,"updated":1700000000000}}}}}}}}"#
    )];
    out.push(format!(
        r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_{sid}","sessionID":"{sid}","role":"assistant","agent":"build","providerID":"p","modelID":"m","time":{{"created":1700000000000}}}}}}}}"#
    ));
    for i in 0..parts {
        out.push(format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{sid}_{i:05}","messageID":"msg_{sid}","sessionID":"{sid}","type":"text","text":"invoice line {i} of {sid}"}}}}}}"#
        ));
    }
    out
}

/// Event keys, part ids and (session, host) of a PostgreSQL archive.
pub(crate) fn pg_contents(url: &str) -> (Vec<String>, Vec<String>, Vec<(String, String)>) {
    let col = |sql: &str| -> Vec<String> {
        postgres_support::rows(url, sql)
            .into_iter()
            .map(|mut r| r.swap_remove(0))
            .collect()
    };
    let keys = col("SELECT key FROM event_keys ORDER BY key");
    let parts = col("SELECT id FROM parts ORDER BY id");
    let hosts = postgres_support::rows(
        url,
        "SELECT id, coalesce(host, '') FROM sessions ORDER BY id",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect();
    (keys, parts, hosts)
}

/// What importing `lines` once, uninterrupted, keeps: event keys, part ids.
pub(crate) fn expected(lines: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let db = dir.path().join("oracle.db");
    let mut archive = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
    ocview::archive::import::import_file(&mut *archive, &file).unwrap();
    drop(archive);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let set = |sql: &str| -> BTreeSet<String> {
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    (
        set("SELECT key FROM event_keys"),
        set("SELECT id FROM parts"),
    )
}

pub(crate) fn spool_path(home: &Path, setting: &Setting) -> PathBuf {
    home.join("ocview/spool").join(format!(
        "{:016x}.jsonl",
        ocview::archive::encode::fnv(setting.place().as_bytes())
    ))
}

pub(crate) fn batch_of(lines: &[String], host: &str) -> Batch {
    let mut collector = ocview::archive::collect::Collector::new(Origin {
        server: None,
        host: host.into(),
        file: None,
    });
    let text = lines.join("\n");
    let mut reader = ocview::source::recording::replay::ReplayReader::new(std::io::Cursor::new(
        text.into_bytes(),
    ));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take()
}

#[test]
pub(crate) fn a_spool_flushes_in_order_and_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::at(dir.path().join("s/spool.jsonl"), 1 << 20);
    let lines = session_lines("ses_order", 6);
    // Three batches, each with its share of the events.
    for chunk in lines.chunks(3) {
        spool.append(&batch_of(chunk, "h")).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(spool.path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let db = dir.path().join("a.db");
    let mut archive = Setting::Sqlite(db).open().unwrap().unwrap();
    let done = spool.flush(&mut *archive).unwrap();
    assert_eq!((done.batches, done.events), (3, 8));
    assert!(!spool.path().exists(), "a flushed spool is deleted");
    // The log is in the order the events came.
    let log = archive.events("ses_order").unwrap();
    let want: Vec<String> = batch_of(&lines, "h")
        .events
        .into_iter()
        .map(|e| e.json)
        .collect();
    assert_eq!(log, want);
}

/// The spool's folder is made 0700 when ocview makes it, and left as it
/// is when it exists; a link put where the spool file goes is not followed.
#[test]
pub(crate) fn the_spool_makes_only_its_own_paths_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("new/deeper");
    Spool::at(made.join("spool.jsonl"), 1 << 20)
        .append(&batch_of(&session_lines("ses_a", 1), "h"))
        .unwrap();
    assert_eq!(mode(&made), 0o700);
    assert_eq!(mode(&dir.path().join("new")), 0o700);
    assert_eq!(mode(&made.join("spool.jsonl")), 0o600);

    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
    Spool::at(shared.join("spool.jsonl"), 1 << 20)
        .append(&batch_of(&session_lines("ses_b", 1), "h"))
        .unwrap();
    assert_eq!(mode(&shared), 0o755, "an existing folder keeps its mode");

    let target = dir.path().join("someone-elses.txt");
    std::fs::write(&target, "theirs\n").unwrap();
    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&target, linked.join("spool.jsonl")).unwrap();
    let refused = Spool::at(linked.join("spool.jsonl"), 1 << 20)
        .append(&batch_of(&session_lines("ses_c", 1), "h"));
    assert!(refused.is_err(), "a link was followed");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs\n");
}

#[test]
pub(crate) fn a_full_spool_refuses_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::at(dir.path().join("spool.jsonl"), 2048);
    let batch = batch_of(&session_lines("ses_full", 20), "h");
    let e = spool.append(&batch).unwrap_err();
    assert!(e.to_string().contains("the local spool is full"), "{e}");
    assert!(spool.is_empty());
}

#[test]
pub(crate) fn a_spool_left_by_a_killed_ocview_is_flushed_at_the_next_start() {
    let home = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("leftover");
    let setting = Setting::Postgres(url.clone());
    // What a killed ocview left: two batches and a line cut short.
    let path = spool_path(home, &setting);
    let spool = Spool::at(path.clone(), 1 << 20);
    let lines = session_lines("ses_left", 10);
    spool
        .append(&batch_of(&lines[..5], "gone-machine"))
        .unwrap();
    spool
        .append(&batch_of(&lines[5..], "gone-machine"))
        .unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"origin\":{\"ser")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["archive", "import", "/dev/null", "--archive", &url])
        .env("XDG_STATE_HOME", home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("spooled events written"), "{stderr}");
    assert!(!path.exists(), "the spool is deleted once written");
    let (keys, parts, hosts) = pg_contents(&url);
    let (want_keys, want_parts) = expected(&lines);
    assert_eq!(keys.into_iter().collect::<BTreeSet<_>>(), want_keys);
    assert_eq!(parts.into_iter().collect::<BTreeSet<_>>(), want_parts);
    assert_eq!(
        hosts,
        [("ses_left".to_string(), "gone-machine".to_string())]
    );
}

#[test]
pub(crate) fn a_batch_written_twice_or_by_two_writers_at_once_is_kept_once() {
    let _ = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("twice");
    let setting = Setting::Postgres(url.clone());
    let batches: Vec<Batch> = (0..8)
        .map(|i| synthetic("h", "ses_0", i * 200, 300))
        .collect();
    // Two writers, the same batches (overlapping rows), at the same time.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (setting, batches) = (setting.clone(), &batches);
            scope.spawn(move || {
                let mut archive = setting.open().unwrap().unwrap();
                for b in batches {
                    let mut tries = 0;
                    // Two writers crossing may be told to try again.
                    while let Err(e) = archive.write(b) {
                        tries += 1;
                        assert!(
                            e.trouble == ocview::archive::Trouble::Locked && tries < 5,
                            "{e}"
                        );
                    }
                }
            });
        }
    });
    // And a spool flushed twice (a flush cut short before its delete).
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::at(dir.path().join("spool.jsonl"), 1 << 24);
    for b in &batches {
        spool.append(b).unwrap();
    }
    let copy = std::fs::read(spool.path()).unwrap();
    let mut archive = setting.open().unwrap().unwrap();
    spool.flush(&mut *archive).unwrap();
    std::fs::write(spool.path(), copy).unwrap();
    let again = spool.flush(&mut *archive).unwrap();
    assert_eq!(again.written.events, 0, "nothing new the second time");
    let counts = archive.counts().unwrap();
    let distinct = 7 * 200 + 300;
    assert_eq!(counts.events, distinct as u64);
    assert_eq!(counts.parts, distinct as u64);
    assert_eq!(counts.sessions, 1);
}

#[test]
pub(crate) fn the_writer_spools_while_postgres_is_away_and_loses_nothing() {
    let home = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("away");
    let setting = Setting::Postgres(url.clone());
    drop(setting.open().unwrap()); // its tables, before they are counted
    let (said, heard) = std::sync::mpsc::channel::<String>();
    let tap = ocview::archive::writer::spawn(
        setting.clone(),
        Origin {
            server: Some("http://box:4096".into()),
            host: "writer-box".into(),
            file: None,
        },
        Box::new(move |line| {
            let _ = said.send(line);
        }),
    );
    let lines = session_lines("ses_away", 300);
    let feed = |part: &[String]| {
        let text = part.join("\n");
        let mut reader = ocview::source::recording::replay::ReplayReader::new(
            std::io::Cursor::new(text.into_bytes()),
        );
        while let Some(record) = reader.next_record().unwrap() {
            if let Ok(ocview::source::decode::record::Decoded::Event(env)) = &record.item {
                tap.event(env);
            }
        }
    };
    let count = |url: &str| pg_contents(url).0.len();
    feed(&lines[..100]);
    let until = Instant::now() + Duration::from_secs(10);
    while count(&url) < 100 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(count(&url), 100, "the first events are written");
    pg.kill();
    feed(&lines[100..200]);
    let line = heard
        .recv_timeout(Duration::from_secs(10))
        .expect("a message");
    assert!(
        line.starts_with("archive: PostgreSQL unreachable, spooling locally ("),
        "{line}"
    );
    let spooled = spool_path(home, &setting);
    assert!(
        spooled.exists(),
        "the batches are spooled at {}",
        spooled.display()
    );
    feed(&lines[200..250]);
    std::thread::sleep(Duration::from_secs(1));
    pg.start_again().unwrap();
    let line = heard
        .recv_timeout(Duration::from_secs(30))
        .expect("a message");
    assert!(line.contains("PostgreSQL is back"), "{line}");
    assert!(!spooled.exists());
    feed(&lines[250..]);
    drop(tap);
    let (keys, parts, hosts) = pg_contents(&url);
    let (want_keys, want_parts) = expected(&lines);
    assert_eq!(keys.len(), want_keys.len(), "none doubled");
    assert_eq!(keys.into_iter().collect::<BTreeSet<_>>(), want_keys);
    assert_eq!(parts.into_iter().collect::<BTreeSet<_>>(), want_parts);
    assert_eq!(hosts, [("ses_away".to_string(), "writer-box".to_string())]);
}
