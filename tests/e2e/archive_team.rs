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
fn synthetic(host: &str, sid: &str, from: usize, n: usize) -> Batch {
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
        });
    }
    b
}

/// Rows (events + parts) a second into one PostgreSQL, in the writer's
/// batches; printed, never asserted.
#[test]
fn bulk_write_rate() {
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
fn state_home() -> &'static Path {
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
fn session_lines(sid: &str, parts: usize) -> Vec<String> {
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
fn pg_contents(url: &str) -> (Vec<String>, Vec<String>, Vec<(String, String)>) {
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
fn expected(lines: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
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

fn spool_path(home: &Path, setting: &Setting) -> PathBuf {
    home.join("ocview/spool").join(format!(
        "{:016x}.jsonl",
        ocview::archive::encode::fnv(setting.place().as_bytes())
    ))
}

fn batch_of(lines: &[String], host: &str) -> Batch {
    let mut collector = ocview::archive::collect::Collector::new(Origin {
        server: None,
        host: host.into(),
        file: None,
    });
    let text = lines.join("\n");
    let mut reader =
        ocview::source::replay::ReplayReader::new(std::io::Cursor::new(text.into_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take()
}

#[test]
fn a_spool_flushes_in_order_and_is_gone() {
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
fn the_spool_makes_only_its_own_paths_private() {
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
fn a_full_spool_refuses_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::at(dir.path().join("spool.jsonl"), 2048);
    let batch = batch_of(&session_lines("ses_full", 20), "h");
    let e = spool.append(&batch).unwrap_err();
    assert!(e.to_string().contains("the local spool is full"), "{e}");
    assert!(spool.is_empty());
}

#[test]
fn a_spool_left_by_a_killed_ocview_is_flushed_at_the_next_start() {
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
fn a_batch_written_twice_or_by_two_writers_at_once_is_kept_once() {
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
fn the_writer_spools_while_postgres_is_away_and_loses_nothing() {
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
        let mut reader =
            ocview::source::replay::ReplayReader::new(std::io::Cursor::new(text.into_bytes()));
        while let Some(record) = reader.next_record().unwrap() {
            if let Ok(ocview::source::record::Decoded::Event(env)) = &record.item {
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

#[test]
fn a_read_only_role_is_said_on_the_status_line_and_still_searches() {
    let _ = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("ro");
    {
        let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
        archive
            .write(&batch_of(&session_lines("ses_ro", 3), "h"))
            .unwrap();
    }
    pg.sql("postgres", "CREATE ROLE reader LOGIN");
    pg.sql(
        "ro",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
    );
    let reader = Setting::Postgres(pg.url("ro", "reader"));
    let (said, heard) = std::sync::mpsc::channel::<String>();
    let tap = ocview::archive::writer::spawn(
        reader.clone(),
        Origin::default(),
        Box::new(move |line| {
            let _ = said.send(line);
        }),
    );
    let line = heard
        .recv_timeout(Duration::from_secs(10))
        .expect("a message");
    assert!(
        line.contains(
            "the database user reader may only read: search and replay work, nothing is written"
        ),
        "{line}"
    );
    drop(tap);
    let mut archive = reader.open().unwrap().unwrap();
    let hits = archive
        .search(&ocview::archive::Query::new("invoice"))
        .unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(archive.events("ses_ro").unwrap().len(), 5);
}

/// A password PostgreSQL refuses is said as refused at once (it was
/// "unreachable" after a minute of retries), and so is a missing one; the
/// viewer's writer says so and spools nothing; the right one logs in.
#[test]
fn a_refused_password_is_said_at_once_and_nothing_is_spooled() {
    let home = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    pg.database("pw");
    pg.sql("postgres", "CREATE ROLE keeper LOGIN PASSWORD 'right-one'");
    pg.sql("pw", "GRANT ALL ON SCHEMA public TO keeper");
    pg.require_password("keeper");
    let url = pg.url("pw", "keeper");
    let stats = |password: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
        c.args(["archive", "stats", "--archive", &url])
            .env("XDG_STATE_HOME", home)
            .env("PGPASSFILE", "/nonexistent")
            .env_remove("PGPASSWORD");
        if let Some(p) = password {
            c.env("PGPASSWORD", p);
        }
        let out = c.output().unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (ok, said) = stats(Some("wrong-one"));
    assert!(!ok, "{said}");
    assert!(said.contains("login refused"), "{said}");
    assert!(said.contains("password authentication failed"), "{said}");
    assert!(
        !said.contains("wrong-one") && !said.contains("reached"),
        "{said}"
    );
    let (ok, said) = stats(None);
    assert!(!ok, "{said}");
    assert!(
        said.contains("asks for a password and none was given"),
        "{said}"
    );
    let (ok, said) = stats(Some("right-one"));
    assert!(ok, "{said}");

    // The viewer's writer: one line saying so, nothing spooled. The wrong
    // password from a password file named in the URL.
    let passfile = home.join("wrong.pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:pw:keeper:wrong-one\n", pg.port),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let setting = Setting::Postgres(format!("{url}&passfile={}", passfile.display()));
    let (tx, heard) = std::sync::mpsc::channel::<String>();
    let tap = ocview::archive::writer::spawn(
        setting.clone(),
        Origin::default(),
        Box::new(move |line| {
            let _ = tx.send(line);
        }),
    );
    let line = heard.recv_timeout(Duration::from_secs(10)).expect("a line");
    assert!(line.contains("login refused"), "{line}");
    assert!(!line.contains("spool"), "{line}");
    drop(tap);
    assert!(!spool_path(home, &setting).exists());
}

/// The issue's acceptance: two ocview processes as two machines stream into
/// one PostgreSQL while a third searches; PostgreSQL is killed for five
/// seconds mid-stream and started again; the archive ends holding exactly
/// what both sent, once, each session with its machine.
#[test]
fn two_machines_write_while_a_third_searches_and_postgres_dies_for_five_seconds() {
    let _ = state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("team");
    drop(Setting::Postgres(url.clone()).open().unwrap()); // its tables
    let machines = ["alpha", "beta"];
    let streams: Vec<Vec<String>> = machines
        .iter()
        .map(|m| {
            (0..6)
                .flat_map(|s| session_lines(&format!("ses_{m}_{s}"), 2000))
                .collect()
        })
        .collect();
    let homes: Vec<tempfile::TempDir> = machines
        .iter()
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let mut writers: Vec<std::process::Child> = machines
        .iter()
        .zip(&homes)
        .map(|(m, home)| {
            Command::new(env!("CARGO_BIN_EXE_ocview"))
                .args(["archive", "import", "-", "--archive", &url])
                .env("OCVIEW_MACHINE", m)
                .env("XDG_STATE_HOME", home.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut inputs: Vec<std::process::ChildStdin> = writers
        .iter_mut()
        .map(|c| c.stdin.take().unwrap())
        .collect();
    // Each writer's lines from `from` to `to`, both at once, a chunk at a
    // time (a live pace).
    let send = |inputs: &mut Vec<std::process::ChildStdin>, from: usize, to: usize| {
        for start in (from..to).step_by(500) {
            for (input, lines) in inputs.iter_mut().zip(&streams) {
                let end = (start + 500).min(to).min(lines.len());
                if start < end {
                    input
                        .write_all((lines[start..end].join("\n") + "\n").as_bytes())
                        .unwrap();
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // The third: searching all along.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let total = streams[0].len();
    std::thread::scope(|scope| {
        let searcher = scope.spawn(|| {
            let mut runs = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
                    .args(["search", "invoice", "--archive", &url])
                    .output()
                    .unwrap();
                runs.push((
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                ));
                std::thread::sleep(Duration::from_millis(200));
            }
            runs
        });
        // A failure below must stop the searcher too, or the scope waits.
        struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let _stop_searching = StopOnDrop(&stop);
        send(&mut inputs, 0, 4500);
        let until = Instant::now() + Duration::from_secs(20);
        while pg_contents(&url).0.len() < 8000 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(
            pg_contents(&url).0.len() >= 8000,
            "both machines wrote before the kill"
        );
        pg.kill();
        let down = Instant::now();
        send(&mut inputs, 4500, 9000);
        std::thread::sleep(Duration::from_secs(5).saturating_sub(down.elapsed()));
        pg.start_again().unwrap();
        send(&mut inputs, 9000, total);
        inputs.clear(); // end of the streams
        for (w, m) in writers.iter_mut().zip(machines) {
            let status = w.wait().unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(w.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(status.success(), "{m}: {err}");
            assert!(
                err.contains("spooling locally") && err.contains("PostgreSQL is back"),
                "{m}: {err}"
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let runs = searcher.join().unwrap();
        assert!(runs.len() > 3, "the search ran all along");
        for (code, err) in &runs {
            assert!(
                matches!(code, Some(0 | 1)) && !err.contains("panicked"),
                "{code:?} {err}"
            );
        }
        assert!(
            runs.iter().any(|(code, _)| *code == Some(0)),
            "the search found something"
        );
    });
    let all: Vec<String> = streams.concat();
    let (keys, parts, hosts) = pg_contents(&url);
    let (want_keys, want_parts) = expected(&all);
    assert_eq!(keys.len(), want_keys.len(), "no event doubled");
    assert_eq!(
        keys.into_iter().collect::<BTreeSet<_>>(),
        want_keys,
        "no event lost"
    );
    assert_eq!(parts.len(), want_parts.len());
    assert_eq!(parts.into_iter().collect::<BTreeSet<_>>(), want_parts);
    assert_eq!(hosts.len(), 12);
    for (id, host) in hosts {
        assert!(id.starts_with(&format!("ses_{host}_")), "{id} from {host}");
    }
}
