//! The team archive's people: a read-only role searches and is said so, a refused password is said at once, and two machines write while a third searches through an outage.

use crate::archive_team::*;
use crate::support::postgres as postgres_support;
use ocview::archive::Setting;
use ocview::archive::rows::Origin;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

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
    // Where it was looked for, and why none came of it.
    assert!(
        said.contains("the password file /nonexistent does not exist"),
        "{said}"
    );
    let (ok, said) = stats(Some("right-one"));
    assert!(ok, "{said}");

    // A password file others may read is named, and not used; so is one
    // without a line for this server. The password itself is never said.
    use std::os::unix::fs::PermissionsExt;
    let with_file = |text: String, mode: u32| {
        let file = home.join(format!("pgpass-{mode:o}"));
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["archive", "stats", "--archive", &url])
            .env("XDG_STATE_HOME", home)
            .env("PGPASSFILE", &file)
            .env_remove("PGPASSWORD")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), said, file)
    };
    let (ok, said, file) = with_file(
        format!("127.0.0.1:{}:pw:keeper:right-one\n", pg.port),
        0o644,
    );
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("{} is readable by others", file.display()))
            && said.contains("chmod 600"),
        "{said}"
    );
    assert!(!said.contains("right-one"), "{said}");
    let (ok, said, _) = with_file("127.0.0.1:1:pw:keeper:right-one\n".into(), 0o600);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("has no line for 127.0.0.1:{}:pw:keeper", pg.port)),
        "{said}"
    );
    let (ok, said, _) = with_file(
        format!("127.0.0.1:{}:pw:keeper:right-one\n", pg.port),
        0o600,
    );
    assert!(ok, "{said}");

    // A password in the URL is refused however it is spelled, before any
    // connection, and never echoed.
    for spelled in ["pass%77ord=SECRET", "%70assword=SECRET", "PASSWORD=SECRET"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["archive", "stats", "--archive", &format!("{url}&{spelled}")])
            .env("XDG_STATE_HOME", home)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spelled}: {said}");
        assert!(said.contains("has a password in it"), "{spelled}: {said}");
        assert!(!said.contains("SECRET"), "{spelled}: {said}");
    }

    // The viewer's writer: one line saying so, nothing spooled. The wrong
    // password from a password file named in the URL.
    let passfile = home.join("wrong.pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:pw:keeper:wrong-one\n", pg.port),
    )
    .unwrap();
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

/// The acceptance: two ocview processes as two machines stream into
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
