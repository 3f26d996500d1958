//! What only the archive's file engine has: the file's and folder's modes,
//! paths that are not an archive (left as they were), a corrupt, read-only
//! or locked file, and the writer saying what is wrong.

use std::path::Path;

use crate::archive::{found, open, write_two_sessions};
use crate::support::two_sessions::TWO_SESSIONS;

use ocview::archive::{Limits, Origin, Query, Setting, Trouble};
use ocview::source::ReplayReader;

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_file_is_private_and_its_folder_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/ocview/archive.db");
    let mut archive = open(&Setting::Sqlite(path.clone()));
    write_two_sessions(&mut *archive);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let wal = path.with_extension("db-wal");
    assert!(wal.exists());
    assert_eq!(mode(&wal), 0o600);
    drop(archive);
    // An archive someone made readable by others keeps that mode: ocview
    // changes no mode of a file that is there already.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    open(&Setting::Sqlite(path.clone()));
    assert_eq!(mode(&path), 0o640);
}

/// Pointed at a path that is not an archive of the user's, ocview refuses
/// it, naming it, and leaves it exactly as it was: a link (to a file of
/// someone else's), a device, a pipe, an empty file, another program's
/// database. A file of another user's is only read.
#[test]
fn a_path_that_is_not_an_archive_is_refused_and_left_as_it_was() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let theirs = at("theirs.txt");
    std::fs::write(&theirs, "someone's notes\n").unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&theirs, at("link.db")).unwrap();
    let fifo = std::ffi::CString::new(at("pipe.db").to_str().unwrap()).unwrap();
    // SAFETY: a path of our own, NUL-terminated.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::fs::write(at("empty.db"), "").unwrap();
    std::fs::set_permissions(at("empty.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let other = rusqlite::Connection::open(at("other.db")).unwrap();
    other
        .execute_batch("CREATE TABLE notes(x); INSERT INTO notes VALUES ('kept');")
        .unwrap();
    drop(other);
    let mut cases = vec![
        ("link.db", "symbolic link"),
        ("pipe.db", "not a regular file"),
        ("empty.db", "empty file"),
        ("other.db", "not an ocview archive"),
    ];
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        // A private device node like /dev/null, made here: the machine's
        // own is never put at risk.
        let node = std::ffi::CString::new(at("null.db").to_str().unwrap()).unwrap();
        // SAFETY: a path of our own; (1, 3) is the null device.
        let made =
            unsafe { libc::mknod(node.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        if made == 0 {
            cases.push(("null.db", "not a regular file"));
        }
    }
    let state = |name: &str| {
        let meta = std::fs::symlink_metadata(at(name)).unwrap();
        let bytes = if meta.is_file() {
            std::fs::read(at(name)).unwrap()
        } else {
            Vec::new()
        };
        (meta.mode(), meta.len(), bytes)
    };
    for (name, why) in cases {
        let before = (state(name), state("theirs.txt"));
        let e = Setting::Sqlite(at(name))
            .open()
            .err()
            .unwrap_or_else(|| panic!("{name} was taken"));
        let line = e.to_string();
        assert!(line.contains(name) && line.contains(why), "{name}: {line}");
        assert_eq!(
            (state(name), state("theirs.txt")),
            before,
            "{name} was changed"
        );
        let beside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(name) && n != name)
            .collect();
        assert!(
            beside.is_empty(),
            "{name}: files made beside it: {beside:?}"
        );
    }
    if root {
        // Another user's archive: searched, never written, its mode kept.
        let path = at("someone.db");
        write_two_sessions(&mut *open(&Setting::Sqlite(path.clone())));
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let archive = open(&Setting::Sqlite(path.clone()));
        let why = archive.read_only().expect("only read").to_string();
        assert!(why.contains("another user"), "{why}");
        assert_eq!(mode(&path), 0o644);
    }
}

#[test]
fn a_corrupt_file_is_said_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let e = Setting::Sqlite(path.clone()).open().err().expect("refused");
    assert_eq!(e.trouble, Trouble::Corrupt, "{e}");
    let line = e.to_string();
    assert!(
        line.contains("not an archive") && line.contains("archive.db"),
        "{line}"
    );
    assert!(!line.contains('\n'));
}

#[test]
fn a_read_only_file_is_searched_but_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    {
        let mut archive = open(&Setting::Sqlite(path.clone()));
        write_two_sessions(&mut *archive);
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    let mut archive = open(&Setting::Sqlite(path.clone()));
    let why = archive.read_only().expect("read-only").to_string();
    assert!(why.contains("read-only (mode 400)"), "{why}");
    assert_eq!(found(&mut *archive, &Query::new("billing")).len(), 2);
    let e = archive.write(&Default::default()).unwrap_err();
    assert_eq!(e.trouble, Trouble::ReadOnly);
}

#[test]
fn a_locked_file_is_said_and_nothing_waits_long() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut archive = open(&Setting::Sqlite(path.clone()));
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = std::time::Instant::now();
    let mut batch = ocview::archive::rows::Batch::default();
    batch.events.push(ocview::archive::rows::EventRow {
        key: "k".into(),
        session_id: "s".into(),
        time_ms: 0,
        json: "{}".into(),
    });
    let e = archive.write(&batch).unwrap_err();
    assert_eq!(e.trouble, Trouble::Locked, "{e}");
    assert!(e.to_string().contains("locked by another program"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn the_writer_says_what_is_wrong_and_gives_up_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let tap = ocview::archive::writer::spawn(
        Setting::Sqlite(path),
        Origin::default(),
        Box::new(move |line| {
            let _ = tx.send(line);
        }),
    );
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("a message");
    assert!(
        line.contains("not an archive") && line.ends_with("ocview goes on without it"),
        "{line}"
    );
    // Sends cost nothing afterwards, and never block.
    let env = ocview::model::Envelope::new(ocview::model::Event::SessionIdle {
        session_id: "s".into(),
    });
    for _ in 0..100_000 {
        tap.event(&env);
    }
    drop(tap);
}

#[test]
fn live_events_reach_the_archive_through_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let tap = ocview::archive::writer::spawn(
        Setting::Sqlite(path.clone()),
        Origin {
            server: Some("http://box:4096".into()),
            host: "h".into(),
            file: None,
        },
        Box::new(|line| panic!("{line}")),
    );
    let mut reader = ReplayReader::new(std::io::Cursor::new(TWO_SESSIONS.as_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        if let Ok(ocview::source::decode::record::Decoded::Event(env)) = &record.item {
            tap.event(env);
        }
    }
    drop(tap); // writes what is queued
    let mut archive = open(&Setting::Sqlite(path));
    let hits = archive.search(&Query::new("invoice")).unwrap();
    assert_eq!(hits.len(), 4);
    assert_eq!(hits[0].server.as_deref(), Some("http://box:4096"));
}

#[test]
fn the_writer_prunes_when_it_starts_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("archive.db"));
    write_two_sessions(&mut *open(&setting));
    let (said, heard) = std::sync::mpsc::channel();
    let tap = ocview::archive::writer::spawn_bounded(
        setting.clone(),
        Origin {
            server: Some("http://box:4096".into()),
            host: "h".into(),
            file: None,
        },
        // Both sessions are from 2023 and 2024: far past a year.
        Limits::from_settings(None, None),
        Box::new(move |line| {
            let _ = said.send(line);
        }),
    );
    drop(tap);
    let lines: Vec<String> = heard.try_iter().collect();
    assert_eq!(
        lines,
        ["archive: pruned 2 oldest sessions (older than 365 days)"]
    );
    assert_eq!(open(&setting).counts().unwrap().sessions, 0);
}

/// `ocview ARGS --archive DB` run through `wrap` (a command and its
/// arguments before ocview's): the exit code, and what it printed (out,
/// then err).
fn ocview_through(wrap: &[&str], args: &[&str], db: &Path) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(wrap[0])
        .args(&wrap[1..])
        .arg(env!("CARGO_BIN_EXE_ocview"))
        .args(args)
        .arg("--archive")
        .arg(db)
        .env("XDG_STATE_HOME", db.parent().unwrap())
        // Nothing of the user running the tests (another user may not read
        // its config).
        .env("HOME", db.parent().unwrap())
        .env("XDG_CONFIG_HOME", db.parent().unwrap())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Through `wrap`: the archive searched (2 hits for "billing") and its
/// stats saying it is read-only, and why.
fn searched_read_only(wrap: &[&str], db: &Path) -> String {
    let (code, out, err) = ocview_through(wrap, &["search", "--json", "billing"], db);
    assert_eq!(code, Some(0), "{out}{err}");
    let hits: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(hits.as_array().map(Vec::len), Some(2), "{out}");
    let (code, out, err) = ocview_through(wrap, &["archive", "stats", "--json"], db);
    assert_eq!(code, Some(0), "{out}{err}");
    let stats: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(stats["sessions"], 2, "{out}");
    stats["read_only"]
        .as_str()
        .unwrap_or_else(|| panic!("not read-only: {out}"))
        .to_string()
}

/// An archive where nothing can be written, though its mode allows it: on
/// a read-only mount, and in a folder of someone else's (where the log
/// kept beside an archive cannot be made), it is searched, and said to be
/// read-only; nothing is made beside it.
#[test]
fn an_archive_on_a_read_only_mount_or_in_another_users_folder_is_searched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let folder = dir.path().join("kept");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = folder.join("archive.db");
    write_two_sessions(&mut *open(&Setting::Sqlite(db.clone())));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let listing = || crate::support::names_in(&folder);
    assert_eq!(
        listing(),
        ["archive.db"],
        "closed cleanly: no log beside it"
    );

    // A read-only mount, in a mount namespace of its own.
    let f = folder.to_str().unwrap();
    let mount = format!("mount --bind {f} {f} && mount -o remount,bind,ro {f} && exec \"$@\"");
    let ro = [
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        &mount,
        "sh",
    ];
    let probe = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status();
    if probe.is_ok_and(|s| s.success()) {
        let why = searched_read_only(&ro, &db);
        assert!(why.contains("read-only file system"), "{why}");
    } else {
        eprintln!("SKIPPED: the read-only mount needs user namespaces (unshare)");
    }
    assert_eq!(listing(), ["archive.db"], "nothing made beside it");

    // Another user's file in another user's folder: run as nobody.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if root && setpriv {
        let nobody = [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ];
        let why = searched_read_only(&nobody, &db);
        assert!(why.contains("another user"), "{why}");
    } else {
        eprintln!("SKIPPED: another user's folder needs root and setpriv");
    }
    assert_eq!(listing(), ["archive.db"], "nothing made beside it");
}
