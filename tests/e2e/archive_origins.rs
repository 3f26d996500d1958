//! Each archived session keeps its own origin: in a fleet, every member's
//! sessions are kept with that member's server (the viewer's writer and
//! `ocview record` alike), and `ocview search --json` shows it; `ocview
//! record` writes to the archive when it is on, not only to its file.
//! Stand-in servers (tests/support/fleet_server.rs) serve the sessions.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use ocview::app::App;
use ocview::app::config::Config;
use ocview::archive::{Origin, Setting};
use ocview::source::live::fleet::{self, FleetServer};
use ocview::source::live::{Client, LiveOptions};
use support::fleet_server::FakeFleet;

/// (session id, server) of every archived session.
fn origins(archive: &Path) -> Vec<(String, Option<String>)> {
    let c = rusqlite::Connection::open(archive).unwrap();
    let mut st = c
        .prepare("SELECT id, server FROM sessions ORDER BY id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Each archived session is kept under its own id (as attach or a file
/// would keep it), with the server that served it as its origin.
fn assert_each_from_its_server(rows: &[(String, Option<String>)], fake: &FakeFleet) {
    assert!(!rows.is_empty());
    let mut seen = std::collections::HashSet::new();
    for (id, server) in rows {
        assert!(
            ocview::model::store::fleet::server_of(id).is_none(),
            "{id} is kept under a fleet's id"
        );
        let s = (0..fake.urls.len())
            .find(|&s| (0..64).any(|i| support::fleet_server::session_id(s, i) == *id))
            .unwrap_or_else(|| panic!("no server serves {id}"));
        assert_eq!(server.as_deref(), Some(fake.urls[s].as_str()), "{id}");
        seen.insert(s);
    }
    assert_eq!(seen.len(), fake.urls.len(), "{rows:?}");
}

#[test]
fn a_fleet_viewer_keeps_each_session_with_its_own_server() {
    let fake = FakeFleet::start(2, 4, 40.0);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let servers = fake
        .urls
        .iter()
        .map(|url| FleetServer {
            key: fleet::key_of(url),
            client: Client::new(url, None),
            options: LiveOptions::default(),
            directory: None,
        })
        .collect();
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let _handle = {
        let _guard = rt.enter();
        fleet::spawn(servers, tx, true, None)
    };
    let mut app = App::new(Config::default(), "fleet", false).unwrap();
    // As the fleet viewer starts it: the origin names this machine only.
    app.archive.tap = Some(ocview::archive::writer::spawn(
        Setting::Sqlite(archive.clone()),
        Origin {
            server: None,
            host: "this-box".into(),
            file: None,
        },
        Box::new(|line| panic!("{line}")),
    ));
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && (!fake.all_attached() || fake.events() < 40) {
        if let Ok(Some(msg)) =
            rt.block_on(async { tokio::time::timeout(Duration::from_millis(100), rx.recv()).await })
        {
            app.on_source(msg);
        }
    }
    while let Ok(msg) = rx.try_recv() {
        app.on_source(msg);
    }
    app.archive.tap = None; // writes what is queued
    assert_each_from_its_server(&origins(&archive), &fake);
    rt.shutdown_background();
}

fn ocview() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.env_remove("OCVIEW_ARCHIVE");
    c
}

/// Run `ocview record URLS… FILE` for a while, then stop it as a person
/// would (ctrl-c).
fn record(urls: &[String], file: &Path, archive: &Path) {
    let mut child = ocview()
        .arg("record")
        .args(urls)
        .arg(file)
        .arg("--archive")
        .arg(archive)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "record did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("recorded"), "{err}");
}

#[test]
fn record_writes_to_the_archive_with_its_server() {
    let fake = FakeFleet::start(1, 2, 20.0);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    record(&fake.urls, &dir.path().join("rec.jsonl"), &archive);
    let rows = origins(&archive);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (id, server) in &rows {
        assert_eq!(server.as_deref(), Some(fake.urls[0].as_str()), "{id}");
    }
    // `ocview search --json` names the server.
    let out = ocview()
        .args(["search", "--json", "--archive"])
        .arg(&archive)
        .arg("fleet")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let hits: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)));
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty(), "{text}");
    assert!(
        hits.iter().all(|h| h["server"] == fake.urls[0].as_str()),
        "{text}"
    );
}

#[test]
fn record_of_a_fleet_keeps_each_session_with_its_own_server() {
    let fake = FakeFleet::start(2, 4, 40.0);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    record(&fake.urls, &dir.path().join("rec.jsonl"), &archive);
    assert_each_from_its_server(&origins(&archive), &fake);
}

/// A fleet and an attach of one of its servers at once, into one archive:
/// that server's sessions are kept once each, under their own ids.
#[test]
fn a_fleet_and_an_attach_of_one_server_keep_each_session_once() {
    let fake = FakeFleet::start(2, 4, 40.0);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    std::thread::scope(|s| {
        s.spawn(|| record(&fake.urls, &dir.path().join("fleet.jsonl"), &archive));
        s.spawn(|| record(&fake.urls[..1], &dir.path().join("attach.jsonl"), &archive));
    });
    let rows = origins(&archive);
    assert_eq!(rows.len(), 4, "each session once: {rows:?}");
    assert_each_from_its_server(&rows, &fake);
}
