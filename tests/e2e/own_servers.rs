//! Only your own servers, and your password only to the ones you named:
//! discovery passes over a listener another user owns; a server only
//! discovered is never sent the `Authorization` header, a named one always;
//! one address in two spellings is one server; `--read-only` and
//! `read_only = true` keep every answer unsent; a password file others may
//! read, or a big one, is refused.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::discover_json::{entry, found_by, listed};
use support::header_server::HeaderServer;
use support::opencode::free_port;
use support::tmux::Tmux;

/// The uid of user `nobody`, the other user here.
const NOBODY: u32 = 65534;

fn ocview(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.args(args)
        .stdin(Stdio::null())
        .env_remove("OPENCODE_SERVER_URL")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("OPENCODE_SERVER_USERNAME")
        .env_remove("OCVIEW_DISCOVER_PROC")
        .env("XDG_CONFIG_HOME", "/nonexistent-ocview-config");
    c
}

fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// Answers as opencode does where discovery looks (`/global/health`,
/// `/path`), whoever runs it.
const STAND_IN_PY: &str = r#"
import http.server, json, sys
port, name = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        answers = {
            "/global/health": {"healthy": True, "version": "1.18.33"},
            "/path": {"directory": "/srv/" + name, "state": "/state/" + name},
        }
        if self.path not in answers:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps(answers[self.path]).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

/// A Python interpreter user `uid` may run (pyenv's, under /root, is not
/// one for `nobody`).
fn python_for(uid: u32) -> Option<PathBuf> {
    let on_path = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .chain(on_path)
        .find(|p| {
            Command::new(p)
                .args(["-c", "pass"])
                .uid(uid)
                .gid(uid)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// A process named `opencode` that answers like one, run as user `uid`.
struct Listener {
    child: Child,
    port: u16,
}

impl Listener {
    fn start(python: &Path, uid: u32, name: &str) -> Listener {
        Listener::start_on(python, uid, name, free_port())
    }

    fn start_on(python: &Path, uid: u32, name: &str, port: u16) -> Listener {
        let child = Command::new(python)
            .arg0("opencode")
            .args(["-c", STAND_IN_PY, &port.to_string(), name])
            .uid(uid)
            .gid(uid)
            .current_dir("/")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the stand-in listener");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(20), "never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Listener { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The owner of its listening socket, as `/proc/net/tcp` says.
    fn socket_owner(&self) -> u32 {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let local = format!("0100007F:{:04X}", self.port);
        tcp.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.get(1) == Some(&local.as_str()) && f.get(3) == Some(&"0A"))
            .and_then(|f| f.get(7)?.parse().ok())
            .expect("its LISTEN entry")
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `/proc` holding only `pids` (links to the real entries) and the
/// machine's socket tables.
fn proc_of(dir: &Path, pids: &[u32]) {
    for pid in pids {
        std::os::unix::fs::symlink(format!("/proc/{pid}"), dir.join(pid.to_string())).unwrap();
    }
    std::os::unix::fs::symlink("/proc/net", dir.join("net")).unwrap();
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn discovery_passes_over_another_users_server() {
    if !is_root() {
        eprintln!("SKIPPED: a listener of another user needs root to start (setuid to nobody)");
        return;
    }
    let Some(python) = python_for(NOBODY) else {
        panic!("no python3 that both root and nobody can run (/usr/bin/python3)");
    };
    let theirs = Listener::start(&python, NOBODY, "theirs");
    let mine = Listener::start(&python, 0, "mine");
    assert_eq!(theirs.socket_owner(), NOBODY);
    assert_eq!(mine.socket_owner(), 0);
    let proc_dir = tempfile::tempdir().unwrap();
    proc_of(proc_dir.path(), &[theirs.child.id(), mine.child.id()]);
    // Root reads every process's files: both are opencode to look at.
    for l in [&theirs, &mine] {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", l.child.id())).unwrap();
        assert!(fds.count() > 0);
    }

    let out = ocview(&["discover", "--json"])
        .env("OCVIEW_DISCOVER_PROC", proc_dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let list = listed(&out);
    let s = entry(&list, &mine.url()).unwrap_or_else(|| panic!("{list:#?}"));
    assert_eq!(found_by(s), ["local"], "{s}");
    assert_eq!(s["directory"], "/srv/mine");
    assert!(entry(&list, &theirs.url()).is_none(), "{list:#?}");
    assert_eq!(list.len(), 1, "{list:#?}");

    // `ocview` alone watches the same: mine, not theirs.
    let out = ocview(&[])
        .env("OCVIEW_DISCOVER_PROC", proc_dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("watching 1 server"), "{err}");
    assert!(
        err.contains(&mine.url()) && !err.contains(&theirs.url()),
        "{err}"
    );

    // Named, theirs is watched: the person asked for it.
    let out = ocview(&["discover", "--json"])
        .env("OCVIEW_DISCOVER_PROC", proc_dir.path())
        .env("OPENCODE_SERVER_URL", theirs.url())
        .output()
        .unwrap();
    let list = listed(&out);
    let s = entry(&list, &theirs.url()).unwrap_or_else(|| panic!("{list:#?}"));
    assert_eq!(found_by(s), ["env"], "{s}");
    assert_eq!(s["directory"], "/srv/theirs");

    // `attach` with no URL goes to the default address, 127.0.0.1:4096:
    // not when theirs listens there.
    if std::net::TcpListener::bind("127.0.0.1:4096").is_err() {
        eprintln!("SKIPPED the default-address part: 127.0.0.1:4096 is taken");
        return;
    }
    let default = Listener::start_on(&python, NOBODY, "theirs", 4096);
    let attach = |extra: &[&str]| {
        ocview(&["attach", "--dump-when-idle", "--timeout", "1"])
            .args(extra)
            .env("OCVIEW_DISCOVER_PROC", proc_dir.path())
            .env("OPENCODE_SERVER_PASSWORD", "named-secret")
            .output()
            .unwrap()
    };
    let out = attach(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("another user's (uid 65534)"), "{err}");
    assert!(err.contains("ocview attach http://127.0.0.1:4096"), "{err}");
    // Named, it is attached to (this stand-in has no sessions to list:
    // the attach gets as far as that).
    let out = attach(&["http://127.0.0.1:4096"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("another user's"), "{err}");
    drop(default);
}

/// The `Authorization` value for user opencode and `password`.
fn basic(password: &str) -> String {
    let known = [
        ("named-secret", "b3BlbmNvZGU6bmFtZWQtc2VjcmV0"),
        ("file-secret", "b3BlbmNvZGU6ZmlsZS1zZWNyZXQ="),
    ];
    let (_, b64) = known.iter().find(|(p, _)| *p == password).unwrap();
    format!("Basic {b64}")
}

#[test]
fn a_discovered_server_is_never_sent_the_password() {
    let found = HeaderServer::start("found");
    let named = HeaderServer::start_with("named", Some(&basic("named-secret")));
    // Both run as opencode processes of this user: discovery finds both.
    let proc_dir = tempfile::tempdir().unwrap();
    found.fake_process(proc_dir.path(), 4_000_001);
    named.fake_process(proc_dir.path(), 4_000_002);

    // The probe alone (`discover`): the named one, in another spelling, is
    // the same server as the one found at 127.0.0.1 (which, only found,
    // would be asked without the password, refused, and listed apart).
    let named_as = format!("http://localhost:{}/", named.port);
    let out = ocview(&["discover", "--json"])
        .env("OCVIEW_DISCOVER_PROC", proc_dir.path())
        .env("OPENCODE_SERVER_URL", &named_as)
        .env("OPENCODE_SERVER_PASSWORD", "named-secret")
        .output()
        .unwrap();
    let list = listed(&out);
    assert_eq!(list.len(), 2, "{list:#?}");
    let s = entry(&list, named_as.trim_end_matches('/')).unwrap_or_else(|| panic!("{list:#?}"));
    assert_eq!(found_by(s), ["env", "local"], "{s}");
    assert_eq!(found_by(entry(&list, &found.url).unwrap()), ["local"]);

    // The fleet: both watched (re-discovery reads /proc and asks neither
    // again: tests/e2e/discovery_quiet.rs).
    let t = Tmux::start_sized("own-auth", 140, 30);
    t.line(&format!(
        "OCVIEW_DISCOVER_PROC={} OPENCODE_SERVER_URL={named_as} OPENCODE_SERVER_PASSWORD=named-secret {}",
        proc_dir.path().display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for_secs("both servers live", 30, |sc| {
        sc.contains("2 servers: 2 live")
    });
    // A few rounds of re-discovery.
    std::thread::sleep(Duration::from_secs(5));
    t.keys(&["q"]);
    t.assert_terminal_restored();

    let asked = found.requests();
    for path in [
        "/global/health",
        "/path",
        "/session",
        "/permission",
        "/event",
    ] {
        assert!(asked.iter().any(|r| r.path == path), "{path}: {asked:#?}");
    }
    let sent: Vec<&support::header_server::Request> =
        asked.iter().filter(|r| r.authorization.is_some()).collect();
    assert!(
        sent.is_empty(),
        "the found server was sent a password: {sent:#?}"
    );
    let asked = named.requests();
    assert!(asked.iter().any(|r| r.path == "/event"), "{asked:#?}");
    for r in &asked {
        assert_eq!(r.authorization, Some(basic("named-secret")), "{r:?}");
    }
}

#[test]
fn one_address_named_in_two_spellings_is_one_server() {
    let server = HeaderServer::start("twice");
    let a = format!("http://localhost:{}", server.port);
    let b = format!("http://127.0.0.1:{}/", server.port);
    // Two URLs for a headless dump would be refused ("take one server"):
    // these are one.
    let out = ocview(&["attach", &a, &b, "--dump-when-idle", "--timeout", "20"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains(&server.title), "{text}");
    assert_eq!(server.count("/event"), 1, "{:#?}", server.requests());

    // The environment, the config's `servers` and a `[[server]]` table
    // naming it, three ways spelled: one server to watch.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "servers = [\"{b}\"]\n[[server]]\nurl = \"http://LOCALHOST:{}\"\n",
            server.port
        ),
    )
    .unwrap();
    let out = ocview(&["--config"])
        .arg(&config)
        .env("OPENCODE_SERVER_URL", &a)
        .env("OCVIEW_DISCOVER_PROC", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("watching 1 server"), "{err}");
}

/// Waits for the permission in the bar, presses `y`, and says whether
/// the stand-in was sent the answer.
fn answer_with_y(t: &Tmux, server: &HeaderServer) -> bool {
    t.wait_for_secs("the permission", 30, |sc| sc.contains("permission · bash"));
    // Past the prompt's arming time (500 ms without a key).
    std::thread::sleep(Duration::from_millis(800));
    t.keys(&["y"]);
    let reply = format!("/permission/{}/reply", server.permission);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        if server.count(&reply) > 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn read_only_from_the_flag_or_the_config_sends_no_answer() {
    let server = HeaderServer::start("asks");
    let proc_dir = tempfile::tempdir().unwrap();
    server.fake_process(proc_dir.path(), 4_000_003);
    let ocview = |t: &Tmux, args: &str| {
        t.line(&format!(
            "unset OPENCODE_SERVER_URL OPENCODE_SERVER_PASSWORD; OCVIEW_DISCOVER_PROC={} {} {args}",
            proc_dir.path().display(),
            env!("CARGO_BIN_EXE_ocview")
        ));
    };

    // `ocview --read-only`: the bar says the prompt cannot be answered
    // here (it takes no focus); `y` sends nothing.
    let t = Tmux::start_sized("own-ro-flag", 120, 30);
    ocview(&t, "--read-only");
    assert!(!answer_with_y(&t, &server), "{:#?}", server.requests());
    let screen = t.capture();
    assert!(screen.contains("(not answerable here)"), "{screen}");
    t.keys(&["q"]);
    t.assert_terminal_restored();

    // `read_only = true` in the config (the shell's own config file).
    let t = Tmux::start_sized("own-ro-config", 120, 30);
    let config = t.home().join("ocview/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "read_only = true\n").unwrap();
    ocview(&t, "");
    assert!(!answer_with_y(&t, &server), "{:#?}", server.requests());
    assert!(t.capture().contains("(not answerable here)"));
    t.keys(&["q"]);
    t.assert_terminal_restored();

    // Neither: the same `y` is sent, so the two above would have been seen.
    let t = Tmux::start_sized("own-ro-off", 120, 30);
    ocview(&t, "");
    assert!(answer_with_y(&t, &server), "{:#?}", server.requests());
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn a_password_file_others_may_read_or_a_big_one_is_refused() {
    let server = HeaderServer::start("pwfile");
    let dir = tempfile::tempdir().unwrap();
    let dump = |pw: &Path| {
        ocview(&["attach", &server.url, "--dump-when-idle", "--timeout", "20"])
            .arg("--password-file")
            .arg(pw)
            .output()
            .unwrap()
    };

    let open = file(dir.path(), "open.pw", "file-secret\n", 0o644);
    let out = dump(&open);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&open.display().to_string()), "{err}");
    assert!(
        err.contains("readable by group or others (mode 644): chmod 600"),
        "{err}"
    );

    let big = file(dir.path(), "big.pw", &"x".repeat(5000), 0o600);
    let out = dump(&big);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("big.pw") && err.contains("larger than 4 KiB"),
        "{err}"
    );
    assert!(server.requests().is_empty(), "{:#?}", server.requests());

    // A config's `[[server]]` password file is held to the same.
    let config = file(
        dir.path(),
        "config.toml",
        &format!(
            "[[server]]\nurl = \"{}\"\npassword_file = \"{}\"\n",
            server.url,
            open.display()
        ),
        0o600,
    );
    let out = ocview(&["--config"]).arg(&config).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("open.pw") && err.contains("chmod 600"),
        "{err}"
    );
    assert!(server.requests().is_empty(), "{:#?}", server.requests());

    // Yours alone, and small: sent.
    let good = file(dir.path(), "good.pw", "file-secret\n", 0o600);
    let out = dump(&good);
    assert!(out.status.success(), "{out:?}");
    let asked = server.requests();
    assert!(!asked.is_empty());
    for r in &asked {
        assert_eq!(r.authorization, Some(basic("file-secret")), "{r:?}");
    }
}
