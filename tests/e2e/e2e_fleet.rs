//! The fleet against real opencode servers: one `ocview` with no URL finds
//! three servers by itself (this machine's opencode processes; the third,
//! which wants a password, also named in `$OPENCODE_SERVER_URL`, since only
//! a named server is sent one), shows their sessions grouped by server,
//! answers a permission pending on the third, and marks a killed server
//! gone while the others keep streaming.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::Server;
use support::tmux::Tmux;

/// A `/proc` holding only `pids` (links to the real entries) and the
/// machine's socket tables: discovery walks it as it walks `/proc`, and
/// sees these servers and none of the other tests'.
fn proc_of(dir: &Path, pids: &[u32]) {
    for pid in pids {
        std::os::unix::fs::symlink(format!("/proc/{pid}"), dir.join(pid.to_string())).unwrap();
    }
    std::os::unix::fs::symlink("/proc/net", dir.join("net")).unwrap();
}

async fn tool_part(server: &Server, session: &str, tool: &str) -> Option<Value> {
    server
        .messages(session)
        .await
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["tool"] == tool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_viewer_watches_three_servers_answers_the_third_and_sees_one_go() {
    let model_a = FakeModel::start(steps(vec![Step::text("Alpha says hello.")])).await;
    let model_b = FakeModel::start(steps(vec![
        Step::text("Beta says hello."),
        Step::text("Beta streams on after alpha died."),
    ]))
    .await;
    let model_c = FakeModel::start(steps(vec![
        Step::text("Running it.").then_tool(
            "bash",
            json!({"command": "echo fleet-e2e", "description": "fleet"}),
        ),
        Step::text("Gamma is done."),
    ]))
    .await;
    let mut a = Server::start(&model_a.url()).await;
    let b = Server::start(&model_b.url()).await;
    let c = Server::start_with(&model_c.url(), Some("fleet-secret")).await;
    let (sa, sb, sc) = (
        a.create_session().await,
        b.create_session().await,
        c.create_session().await,
    );
    a.prompt(&sa, "hello alpha").await;
    b.prompt(&sb, "hello beta").await;
    a.wait_idle(&sa, 60).await;
    b.wait_idle(&sb, 60).await;

    let proc_dir = tempfile::tempdir().unwrap();
    let pids: Vec<u32> = [&a, &b, &c].iter().filter_map(|s| s.pid()).collect();
    proc_of(proc_dir.path(), &pids);
    // The list calls a server by its address as first given: the named
    // one as named.
    let key = |s: &Server| {
        let host = if s.port == c.port {
            "localhost"
        } else {
            "127.0.0.1"
        };
        format!("{host}:{}", s.port)
    };

    let t = Tmux::start_sized("fleet", 160, 45);
    // Everything is found; the password goes to the named server only
    // (named in another spelling of the address its process listens on).
    t.line(&format!(
        "OPENCODE_SERVER_URL=http://localhost:{}/ OCVIEW_DISCOVER_PROC={} OPENCODE_SERVER_PASSWORD=fleet-secret {} --follow",
        c.port,
        proc_dir.path().display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    let screen = t.wait_for_secs("three servers live", 60, |sc| {
        sc.contains("3 servers: 3 live")
    });
    // Grouped: each server's heading, in the list.
    for s in [&a, &b, &c] {
        assert!(screen.contains(&key(s)), "{}: {screen}", key(s));
    }

    // The third server asks; the bar names it; `y` allows once, there.
    c.prompt(&sc, "run it").await;
    t.wait_for_secs("the third server's permission", 60, |sc| {
        sc.contains("permission · bash") && sc.contains(&format!("{} ›", key(&c)))
    });
    t.wait_for("the prompt armed", |sc| !sc.contains("arming"));
    t.keys(&["y"]);
    c.wait_idle(&sc, 60).await;
    let bash = tool_part(&c, &sc, "bash").await.expect("a bash part");
    assert_eq!(bash["state"]["status"], "completed", "{bash}");
    assert!(c.get("/permission").await.as_array().unwrap().is_empty());

    // Alpha dies: marked gone, not dropped; beta keeps streaming.
    a.kill();
    t.wait_for_secs("alpha gone", 30, |sc| {
        sc.contains("3 servers: ") && sc.contains("1 gone") && sc.contains("2 live")
    });
    b.prompt(&sb, "again").await;
    let screen = t.wait_for_secs("beta streaming", 60, |sc| {
        sc.contains("Beta streams on after alpha died.")
    });
    assert!(screen.contains(&key(&a)), "alpha stays listed: {screen}");
    assert!(screen.contains("gone"), "{screen}");

    t.keys(&["q"]);
    t.assert_terminal_restored();
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// `record URL URL FILE` writes one recording of both servers, each line
/// naming its server; it replays to both servers' sessions, apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recording_two_servers_replays_them_apart() {
    // A script answers by the turn's place in its session: one model each.
    let model_one = FakeModel::start(steps(vec![Step::text("Recorded on one.")])).await;
    let model_other = FakeModel::start(steps(vec![Step::text("Recorded on the other.")])).await;
    let one = Server::start(&model_one.url()).await;
    let other = Server::start(&model_other.url()).await;
    let (s1, s2) = (one.create_session().await, other.create_session().await);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.jsonl");
    let mut rec = Killed(
        std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["record", &one.url(), &other.url()])
            .arg(&file)
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    one.prompt(&s1, "first").await;
    one.wait_idle(&s1, 60).await;
    other.prompt(&s2, "second").await;
    other.wait_idle(&s2, 60).await;
    // Until both sessions' finished text is in the file.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.contains("Recorded on one.") && text.contains("Recorded on the other.") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the recording:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &rec.0.id().to_string()])
        .status();
    assert!(rec.0.wait().unwrap().success());

    let text = std::fs::read_to_string(&file).unwrap();
    let key = |s: &Server| format!("127.0.0.1:{}", s.port);
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        let server = v["server"].as_str().unwrap_or_default().to_string();
        assert!(server == key(&one) || server == key(&other), "{line}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "--dump"])
        .arg(&file)
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{dump}");
    assert!(dump.contains(&format!("{s1}@{}", key(&one))), "{dump}");
    assert!(dump.contains(&format!("{s2}@{}", key(&other))), "{dump}");
    assert!(dump.contains("Recorded on one.") && dump.contains("Recorded on the other."));
}

/// A child process killed when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `attach URL URL` watches both; a server whose password ocview lacks
/// says so on its own, while the other stays live. And `ocview` alone
/// takes in a server that starts after it did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_servers_and_a_server_that_appears_later() {
    let model = FakeModel::start(steps(vec![Step::text("Hi.")])).await;
    let open = Server::start(&model.url()).await;
    let locked = Server::start_with(&model.url(), Some("not-given")).await;
    let t = Tmux::start_sized("fleet-named", 140, 30);
    let recording = t.home().join("named.jsonl");
    t.line(&format!(
        "unset OPENCODE_SERVER_PASSWORD; {} attach {} {} --record {}",
        env!("CARGO_BIN_EXE_ocview"),
        open.url(),
        locked.url(),
        recording.display()
    ));
    let screen = t.wait_for_secs("one live, one refused", 60, |sc| {
        sc.contains("2 servers: 1 live · 1 auth failed")
    });
    // The refused server's heading says so (its name gives way at this width).
    assert!(screen.contains("auth failed no sessions"), "{screen}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
    // The recording names each line's server, the refusal included, and
    // replays to the same two servers.
    let text = std::fs::read_to_string(&recording).unwrap();
    let key = |s: &Server| format!("127.0.0.1:{}", s.port);
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        let server = v["server"].as_str().unwrap_or_default().to_string();
        assert!(server == key(&open) || server == key(&locked), "{line}");
    }
    assert!(text.contains(r#""state":"auth-failed""#), "{text}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "--dump"])
        .arg(&recording)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // Alone, with only the open server to find; the locked one "starts"
    // (appears in the /proc discovery walks) a moment later.
    let proc_dir = tempfile::tempdir().unwrap();
    proc_of(proc_dir.path(), &[open.pid().unwrap()]);
    let t = Tmux::start_sized("fleet-later", 140, 30);
    t.line(&format!(
        "unset OPENCODE_SERVER_URL OPENCODE_SERVER_PASSWORD; OCVIEW_DISCOVER_PROC={} {}",
        proc_dir.path().display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for_secs("the first server", 60, |sc| sc.contains("1 server: 1 live"));
    let pid = locked.pid().unwrap();
    std::os::unix::fs::symlink(
        format!("/proc/{pid}"),
        proc_dir.path().join(pid.to_string()),
    )
    .unwrap();
    t.wait_for_secs("the later server joined", 30, |sc| {
        sc.contains("2 servers: 1 live · 1 auth failed")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
