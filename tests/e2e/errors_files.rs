//! Errors around files: a recording that cannot be made, a full disk under a recording or an output, a closed pipe, a recording that cannot be read or holds no event.

use crate::errors::*;
use crate::support;
use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::opencode::free_port;
use support::stalling_server::{Mode, fake_server};

#[test]
fn record_fails_fast_and_leaves_no_file() {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("rec.jsonl");
    for (url, says) in [
        (
            format!("http://127.0.0.1:{}", free_port()),
            "no server at".to_string(),
        ),
        (
            fake_server(Mode::Unauthorized),
            "authentication failed (HTTP 401".to_string(),
        ),
    ] {
        let mut c = ocview(state.path());
        c.env("OPENCODE_SERVER_PASSWORD", "wrong")
            .args(["record", &url])
            .arg(&file);
        let r = run(c, None);
        assert_eq!(r.code, Some(1), "{url}: {}", r.stderr);
        assert!(r.stderr.contains(&says), "{url}: {}", r.stderr);
        assert!(!r.stderr.contains("wrong"), "the password is never shown");
        assert!(r.took < Duration::from_secs(2), "{url}: took {:?}", r.took);
        assert!(!file.exists(), "{url}: a file was left");
    }
    // A server that takes the connection and never answers: `record` gives
    // up after its 2 s wait for the first answer, not the request timeout.
    let mut c = ocview(state.path());
    c.args(["record", &fake_server(Mode::Mute)]).arg(&file);
    let r = run(c, None);
    r.failed(1, "no answer from", Duration::from_secs(4));
    assert!(!file.exists(), "a mute server left a file");
    // A recording appended to is left as it was.
    std::fs::write(&file, "{\"ocview_recording\":1}\n").unwrap();
    let mut c = ocview(state.path());
    c.args(["record", &format!("http://127.0.0.1:{}", free_port())])
        .arg(&file);
    assert_eq!(run(c, None).code, Some(1));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"ocview_recording\":1}\n"
    );
    // A file that cannot be written is said before anything else.
    let mut c = ocview(state.path());
    c.args(["record", &fake_server(Mode::Busy)])
        .arg(state.path().join("no/such/dir/rec.jsonl"));
    let r = run(c, None);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("cannot record to") && r.stderr.contains("No such file"),
        "{}",
        r.stderr
    );
}

// e. A full disk stops the recording.

#[test]
fn record_to_a_full_disk_stops_with_a_message() {
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let before = std::fs::metadata("/dev/full").unwrap().permissions().mode();
    let mut c = ocview(state.path());
    c.args(["record", &fake_server(Mode::Busy), "/dev/full"]);
    let r = run(c, None);
    r.failed(
        1,
        "recording stopped: cannot write /dev/full: No space left on device",
        Duration::from_secs(2),
    );
    let after = std::fs::metadata("/dev/full").unwrap().permissions().mode();
    assert_eq!(before, after, "a device is never made private");
}

#[test]
fn the_viewer_goes_on_when_its_recording_stops() {
    let url = fake_server(Mode::Busy);
    let t = viewer("fullrec", &format!("attach {url} --record /dev/full"));
    let screen = t.wait_for("the recording to stop", |s| s.contains("recording stopped"));
    assert!(
        screen.contains("recording stopped: cannot write /dev/full: No space left on device"),
        "{screen}"
    );
    // Still live: the session is there and the viewer answers keys.
    assert!(screen.contains("Busy for ever"), "{screen}");
    t.keys(&["?"]);
    t.wait_for("the help", |s| s.contains("Keys ("));
    t.keys(&["Escape"]);
    let screen = t.wait_for("the status line again", |s| {
        !s.contains("Keys (") && s.contains("recording stopped")
    });
    assert!(screen.contains(" live"), "{screen}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

// f. Plain output into a full disk or a closed pipe.

#[test]
fn output_into_a_full_disk_exits_1() {
    let state = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let fixture = fixture.to_str().unwrap();
    for args in [
        vec!["replay", fixture, "--plain"],
        vec!["replay", fixture, "--dump"],
        vec!["export", fixture],
        vec!["demo", "--plain", "--instant"],
    ] {
        let mut c = ocview(state.path());
        c.args(&args);
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let start = Instant::now();
        let out = c.stdout(full).stderr(Stdio::piped()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}

#[test]
fn a_closed_pipe_ends_plain_output_quietly() {
    // The demo at its recorded pace takes half a minute; the reader stops
    // after one line.
    let state = tempfile::tempdir().unwrap();
    let mut c = ocview(state.path());
    c.args(["demo", "--plain", "--speed", "1"]);
    let start = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("== session"), "{first}");
    drop(out);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("still printing into a closed pipe");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(141), "128 + SIGPIPE: {stderr}");
    assert!(stderr.is_empty(), "no message for a closed pipe: {stderr}");
}

// g. Recordings that cannot be read, or hold nothing.

#[test]
fn replay_names_what_it_cannot_read() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("a-directory");
    std::fs::create_dir(&dir).unwrap();
    let missing = state.path().join("missing.jsonl");
    let locked = state.path().join("locked.jsonl");
    std::fs::write(&locked, "{}\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cases = vec![
        (dir.clone(), "it is a directory"),
        (missing.clone(), "No such file or directory"),
    ];
    // root reads any file: the case only holds for other users.
    if std::fs::read(&locked).is_err() {
        cases.push((locked.clone(), "Permission denied"));
    } else {
        eprintln!("note: running as root; the permission-denied case is skipped");
    }
    for (path, says) in cases {
        for mode in [&["--dump"][..], &["--plain"], &[]] {
            let mut c = ocview(state.path());
            c.arg("replay").arg(&path).args(mode);
            let r = run(c, None);
            assert_eq!(r.code, Some(1), "{path:?} {mode:?}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("cannot read {}", path.display()))
                    && r.stderr.contains(says),
                "{path:?} {mode:?}: {}",
                r.stderr
            );
            assert!(r.took < Duration::from_secs(2));
        }
    }
    let mut c = ocview(state.path());
    c.arg("export").arg(&dir);
    let r = run(c, None);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("it is a directory"), "{}", r.stderr);
}

#[test]
fn an_empty_recording_says_it_had_no_events() {
    let state = tempfile::tempdir().unwrap();
    let empty = state.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let header = state.path().join("header.jsonl");
    std::fs::write(
        &header,
        "{\"ocview_recording\":1,\"server\":\"http://x\",\"opencode\":null,\"started_ms\":1}\n",
    )
    .unwrap();
    for (path, says) in [(&empty, "no events (it is empty)"), (&header, "no events")] {
        for mode in ["--dump", "--plain"] {
            let mut c = ocview(state.path());
            c.arg("replay").arg(path).arg(mode);
            let r = run(c, None);
            assert_eq!(r.code, Some(1), "{path:?} {mode}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!("{}: {says}", path.display())),
                "{path:?} {mode}: {}",
                r.stderr
            );
        }
    }
    let mut c = ocview(state.path());
    c.arg("replay").arg("-").arg("--dump");
    let r = run(c, None);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("standard input: no events"),
        "{}",
        r.stderr
    );

    let t = viewer("empty", &format!("replay {}", empty.display()));
    t.wait_for("the notice", |s| {
        s.contains("replay empty.jsonl") && s.contains("empty: no events")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
