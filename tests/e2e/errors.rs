//! Errors a person can act on (issue 13, point 7): each case runs the real
//! binary and checks the exit code, the message, how long it took to fail,
//! and that no file is left behind. Servers are faked on loopback (a port
//! nobody listens on, or a tiny HTTP server that hangs, stays busy or
//! rejects the password); the terminal cases run in tmux.

use crate::support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::opencode::free_port;
use support::stalling_server::{Mode, SESSION, fake_server};
use support::tmux::Tmux;

/// A fixture recording (JSON lines of a real server's events).
pub(crate) fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/opencode-1.18.33/a_bash_permission_once/event.jsonl")
}

/// The binary, with no server settings from the environment and logs kept
/// out of the way.
pub(crate) fn ocview(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.env_remove("OPENCODE_SERVER_URL")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("OPENCODE_SERVER_USERNAME")
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .stdin(Stdio::null());
    c
}

pub(crate) struct Ran {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) took: Duration,
    /// CPU time (user + system, clock ticks) when sampled.
    pub(crate) cpu_ticks: Option<u64>,
}

impl Ran {
    /// It failed with `code`, said `says` on stderr, and took less than `within`.
    pub(crate) fn failed(&self, code: i32, says: &str, within: Duration) {
        assert_eq!(self.code, Some(code), "{}", self.stderr);
        assert!(self.stderr.contains(says), "{}", self.stderr);
        assert!(self.took < within, "took {:?}", self.took);
    }
}

/// Run to the end (30 s at most); sample its CPU time at `sample_at`.
pub(crate) fn run(mut c: Command, sample_at: Option<Duration>) -> Ran {
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
pub(crate) fn cpu_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces): state is the
    // third field, utime the 14th and stime the 15th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The viewer in tmux, started from a shell, on a wide terminal.
pub(crate) fn viewer(tag: &str, args: &str) -> Tmux {
    let t = Tmux::start_sized(tag, 140, 20);
    t.line(&format!(
        "{} {args} 2>/dev/null",
        env!("CARGO_BIN_EXE_ocview")
    ));
    t
}

// a. No server at the URL.

#[test]
pub(crate) fn no_server_says_so_and_how_to_start_one() {
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
pub(crate) fn the_viewer_keeps_retrying_and_shows_the_attempt() {
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
pub(crate) fn bad_urls_fail_at_once_with_exit_2() {
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
pub(crate) const IDLE_CPU_TICKS: u64 = 30;

#[test]
pub(crate) fn a_dump_that_cannot_sync_gives_up_at_its_timeout_without_spinning() {
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
pub(crate) fn a_dump_of_a_busy_server_gives_up_at_its_timeout_without_spinning() {
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
pub(crate) fn a_request_left_unanswered_is_sent_again_within_seconds() {
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
