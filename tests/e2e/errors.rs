//! Errors a person can act on (issue 13, point 7): each case runs the real
//! binary and checks the exit code, the message, how long it took to fail,
//! and that no file is left behind. Servers are faked on loopback (a port
//! nobody listens on, or a tiny HTTP server that hangs, stays busy or
//! rejects the password); the terminal cases run in tmux.

use crate::support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::opencode::free_port;
use support::stalling_server::{Mode, SESSION, fake_server};
use support::tmux::Tmux;

/// A fixture recording (JSON lines of a real server's events).
fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/opencode-1.18.33/a_bash_permission_once/event.jsonl")
}

/// The binary, with no server settings from the environment and logs kept
/// out of the way.
fn ocview(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.env_remove("OPENCODE_SERVER_URL")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("OPENCODE_SERVER_USERNAME")
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .stdin(Stdio::null());
    c
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    /// CPU time (user + system, clock ticks) when sampled.
    cpu_ticks: Option<u64>,
}

impl Ran {
    /// It failed with `code`, said `says` on stderr, and took less than `within`.
    fn failed(&self, code: i32, says: &str, within: Duration) {
        assert_eq!(self.code, Some(code), "{}", self.stderr);
        assert!(self.stderr.contains(says), "{}", self.stderr);
        assert!(self.took < within, "took {:?}", self.took);
    }
}

/// Run to the end (30 s at most); sample its CPU time at `sample_at`.
fn run(mut c: Command, sample_at: Option<Duration>) -> Ran {
    let start = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut cpu_ticks = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(at) = sample_at
            && cpu_ticks.is_none()
            && start.elapsed() >= at
        {
            cpu_ticks = Some(cpu_of(child.id()));
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still running after 30 s: {c:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        took: start.elapsed(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        cpu_ticks,
    }
}

/// User plus system time of a running process, in clock ticks.
fn cpu_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces): state is the
    // third field, utime the 14th and stime the 15th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The viewer in tmux, started from a shell, on a wide terminal.
fn viewer(tag: &str, args: &str) -> Tmux {
    let t = Tmux::start_sized(tag, 140, 20);
    t.line(&format!(
        "{} {args} 2>/dev/null",
        env!("CARGO_BIN_EXE_ocview")
    ));
    t
}

// a. No server at the URL.

#[test]
fn no_server_says_so_and_how_to_start_one() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let file = state.path().join("rec.jsonl");
    let commands: Vec<Vec<String>> = vec![
        vec!["attach".into(), url.clone(), "--dump-when-idle".into()],
        vec![
            "attach".into(),
            url.clone(),
            "--dump-after".into(),
            "5".into(),
        ],
        vec!["export".into(), url.clone()],
        vec!["record".into(), url.clone(), file.display().to_string()],
    ];
    for args in commands {
        let mut c = ocview(state.path());
        c.args(&args);
        let r = run(c, None);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("no server at {url}"))
                && r.stderr
                    .contains(&format!("start one: opencode serve --port {port}")),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.took < Duration::from_secs(2),
            "{args:?} took {:?}",
            r.took
        );
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(!file.exists(), "{args:?} left {}", file.display());
    }
    // The default server, from $OPENCODE_SERVER_URL.
    let mut c = ocview(state.path());
    c.env("OPENCODE_SERVER_URL", &url)
        .args(["attach", "--dump-when-idle"]);
    let r = run(c, None);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("no server at"), "{}", r.stderr);
}

#[test]
fn the_viewer_keeps_retrying_and_shows_the_attempt() {
    let port = free_port();
    let t = viewer("noserver", &format!("attach http://127.0.0.1:{port}"));
    let screen = t.wait_for("the third attempt", |s| s.contains("attempt 3"));
    assert!(
        screen.contains(&format!(
            "no server at http://127.0.0.1:{port} (start one: opencode serve --port {port})"
        )),
        "{screen}"
    );
    t.wait_for("the fourth attempt", |s| s.contains("attempt 4"));
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

// b. URLs that are not http(s)://host[:port].

#[test]
fn bad_urls_fail_at_once_with_exit_2() {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("rec.jsonl");
    let cases = [
        ("localhost:4096", "did you mean http://localhost:4096"),
        ("ftp://x", "ftp:// is not supported"),
        ("what is this", "not a server URL"),
        ("http://", "has no host"),
        ("http://:4096", "has no host"),
        ("http://127.0.0.1:0", "port 0 is out of range"),
        ("http://127.0.0.1:70000", "port 70000 is out of range"),
        ("http://127.0.0.1:port", "is not a number"),
        ("", "is empty"),
    ];
    for (url, says) in cases {
        let mut commands = vec![
            vec!["attach", url],
            vec!["attach", url, "--dump-when-idle"],
            vec!["record", url, file.to_str().unwrap()],
        ];
        // export takes a file too: only what has a scheme is a URL there.
        if url.contains("://") || url == "localhost:4096" {
            commands.push(vec!["export", url]);
        }
        for args in commands {
            let mut c = ocview(state.path());
            c.args(&args);
            let r = run(c, None);
            assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
            assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
            assert!(
                r.took < Duration::from_secs(2),
                "{args:?} took {:?}",
                r.took
            );
            assert!(!file.exists(), "{args:?} left a file");
        }
    }
    // The same check for $OPENCODE_SERVER_URL, which the message names.
    let mut c = ocview(state.path());
    c.env("OPENCODE_SERVER_URL", "ftp://x")
        .args(["attach", "--dump-when-idle"]);
    let r = run(c, None);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("$OPENCODE_SERVER_URL") && r.stderr.contains("ftp://"),
        "{}",
        r.stderr
    );
    // Credentials in the URL: refused, and never echoed.
    let mut c = ocview(state.path());
    c.args([
        "attach",
        "http://u:hunter2@127.0.0.1:4096",
        "--dump-when-idle",
    ]);
    let r = run(c, None);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("OPENCODE_SERVER_PASSWORD"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
}

// c. Dumps give up at their time limit, and wait without spinning.

/// CPU time allowed while waiting: a few ticks of work, far from the
/// seconds a loop that polls would burn even on a busy 2-core machine.
const IDLE_CPU_TICKS: u64 = 30;

#[test]
fn a_dump_that_cannot_sync_gives_up_at_its_timeout_without_spinning() {
    let state = tempfile::tempdir().unwrap();
    let url = fake_server(Mode::Hang);
    let mut c = ocview(state.path());
    c.args(["attach", &url, "--dump-when-idle", "--timeout", "4"]);
    let r = run(c, Some(Duration::from_millis(3_700)));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("gave up after 4 s") && r.stderr.contains("could not sync"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    assert!(r.took < Duration::from_secs(6), "took {:?}", r.took);
    let cpu = r.cpu_ticks.expect("sampled while waiting");
    assert!(cpu < IDLE_CPU_TICKS, "{cpu} ticks of CPU while waiting");

    let mut c = ocview(state.path());
    c.args(["attach", &url, "--dump-after", "3"]);
    let r = run(c, Some(Duration::from_millis(2_700)));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("gave up after 3 s"), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    let cpu = r.cpu_ticks.expect("sampled while waiting");
    assert!(cpu < IDLE_CPU_TICKS, "{cpu} ticks of CPU while waiting");

    // A server that accepts the connection and never answers.
    let mut c = ocview(state.path());
    c.args([
        "attach",
        &fake_server(Mode::Mute),
        "--dump-when-idle",
        "--timeout",
        "2",
    ]);
    let r = run(c, None);
    r.failed(
        1,
        "gave up after 2 s: the server did not answer",
        Duration::from_secs(4),
    );
}

#[test]
fn a_dump_of_a_busy_server_gives_up_at_its_timeout_without_spinning() {
    let state = tempfile::tempdir().unwrap();
    let url = fake_server(Mode::Busy);
    let cases: [&[&str]; 2] = [
        &["attach", &url, "--dump-when-idle", "--timeout", "4"],
        &["export", &url, "--timeout", "4"],
    ];
    for args in cases {
        let mut c = ocview(state.path());
        c.args(args);
        let r = run(c, Some(Duration::from_millis(3_700)));
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("gave up after 4 s")
                && r.stderr
                    .contains(&format!("1 session is still busy ({SESSION})")),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(
            r.took < Duration::from_secs(6),
            "{args:?} took {:?}",
            r.took
        );
        let cpu = r.cpu_ticks.expect("sampled while waiting");
        assert!(
            cpu < IDLE_CPU_TICKS,
            "{args:?}: {cpu} ticks of CPU while waiting"
        );
    }
    // --dump-after prints the state as it is, busy or not.
    let mut c = ocview(state.path());
    c.args(["attach", &url, "--dump-after", "1.5"]);
    let r = run(c, None);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("Busy for ever"), "{}", r.stdout);
}

/// A request the server took and never answered (as opencode does with
/// one that comes while it starts), the first health check or the first
/// event stream, is given up on within seconds and sent again: the state
/// is there long before the 10 s a slow link may take.
#[test]
fn a_request_left_unanswered_is_sent_again_within_seconds() {
    let state = tempfile::tempdir().unwrap();
    for path in ["/global/health", "/event"] {
        let mut c = ocview(state.path());
        c.args([
            "attach",
            &fake_server(Mode::MuteFirst(path)),
            "--dump-after",
            "7",
        ]);
        let r = run(c, None);
        assert_eq!(r.code, Some(0), "{path}: {}", r.stderr);
        assert!(r.stdout.contains("Busy for ever"), "{path}: {}", r.stdout);
    }
}

// d. record: a failed connection or a rejected password.

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
