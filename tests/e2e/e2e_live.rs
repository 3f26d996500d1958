//! `ocview attach` against the real opencode server, driven by the scripted
//! fake model.

use crate::common;
use crate::support;

use std::time::Duration;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::model::{PartBody, ToolStatus};
use ocview::source::live::{self, Client, LiveOptions};
use ocview::source::msg::{SourceMsg, SourceState};
use ocview::source::recording::recorder::{Feed, Recorder};
use serde_json::json;
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::Server;
use tokio::sync::mpsc;

/// An in-process viewer fed by the live source, as the app would be.
struct Viewer {
    app: App,
    rx: mpsc::Receiver<SourceMsg>,
    states: Vec<SourceState>,
    raw: mpsc::UnboundedReceiver<Feed>,
}

impl Viewer {
    fn attach(url: &str) -> Viewer {
        Viewer::attach_with(url, false)
    }

    fn attach_with(url: &str, load_all_messages: bool) -> Viewer {
        let (tx, rx) = mpsc::channel(100_000);
        let (raw_tx, raw) = mpsc::unbounded_channel();
        let mut app = App::new(Config::default(), "e2e", false).unwrap();
        let options = LiveOptions {
            idle_timeout: Duration::from_secs(5),
            load_all_messages,
            ..Default::default()
        };
        app.live = Some(live::spawn(
            Client::new(url, None),
            options,
            tx,
            Some(raw_tx),
        ));
        Viewer {
            app,
            rx,
            states: Vec::new(),
            raw,
        }
    }

    /// A recording of everything the source handed the recorder so far,
    /// written by the recorder `attach --record` uses.
    fn recorded(&mut self) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let mut recorder = Recorder::create(&path, "e2e", Some("1.18.33")).unwrap();
        while let Ok(feed) = self.raw.try_recv() {
            recorder.feed(feed).unwrap();
        }
        std::fs::read(&path).unwrap()
    }

    /// Apply whatever arrives until `ms` pass without a message.
    async fn settle(&mut self, ms: u64) {
        while let Ok(Some(msg)) =
            tokio::time::timeout(Duration::from_millis(ms), self.rx.recv()).await
        {
            if let SourceMsg::State(s) = &msg {
                self.states.push(s.clone());
            }
            self.app.on_source(msg);
        }
    }

    /// Apply messages until `f` holds (the viewer's state is re-checked after
    /// each one), or panic after `secs`.
    async fn until(&mut self, what: &str, secs: u64, mut f: impl FnMut(&App) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        while !f(&self.app) {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(msg)) => {
                    if let SourceMsg::State(s) = &msg {
                        self.states.push(s.clone());
                    }
                    self.app.on_source(msg);
                    // What a frame would do: ask for the open session's messages.
                    self.app.prepare(ratatui::layout::Rect::new(0, 0, 120, 40));
                }
                Ok(None) => panic!("the source ended while waiting for {what}"),
                Err(_) => panic!("timed out waiting for {what}; states {:?}", self.states),
            }
        }
    }
}

fn bash_status(app: &App, session: &str) -> Option<ToolStatus> {
    let s = app.store.session(session)?;
    s.messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .find_map(|p| match &p.body {
            PartBody::Tool(t) if t.tool == "bash" => Some(t.state.status.clone()),
            _ => None,
        })
}

fn texts(app: &App, session: &str) -> String {
    app.store.session(session).map_or(String::new(), |s| {
        s.messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .filter_map(|p| p.text())
            .collect::<Vec<_>>()
            .join("|")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_follows_a_streaming_session_with_a_tool_and_new_sessions() {
    let answer =
        "Here is a fairly long answer that streams in several pieces so the viewer sees it grow.";
    let model = FakeModel::start(steps(vec![
        Step::text("Let me run it.")
            .reasoning("I should run echo.")
            .then_tool(
                "bash",
                json!({"command": "echo hi-from-e2e", "description": "Say hi"}),
            ),
        Step::text(answer),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let first = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the first session in the list", 30, |a| {
        a.store.session(&first).is_some()
    })
    .await;
    v.app.selected = Some(first.clone());

    server.prompt(&first, "please say hi").await;
    // The tool card goes through its states as the user sees them.
    let mut seen = Vec::new();
    v.until("the bash permission", 60, |a| {
        if let Some(s) = bash_status(a, &first)
            && seen.last() != Some(&s)
        {
            seen.push(s);
        }
        a.store.pending_prompts().next().is_some()
    })
    .await;
    assert_eq!(server.answer_permissions("once").await, 1);
    let mut lengths = Vec::new();
    v.until("the final answer", 60, |a| {
        if let Some(s) = bash_status(a, &first)
            && seen.last() != Some(&s)
        {
            seen.push(s);
        }
        let t = texts(a, &first);
        if lengths.last() != Some(&t.len()) {
            lengths.push(t.len());
        }
        t.contains(answer)
    })
    .await;
    assert!(
        seen.contains(&ToolStatus::Running) && seen.last() == Some(&ToolStatus::Completed),
        "tool states seen: {seen:?}"
    );
    assert!(lengths.len() > 3, "the text grew in steps: {lengths:?}");
    server.wait_idle(&first, 30).await;

    // A session created after attach appears.
    let second = server.create_session().await;
    v.until("the second session", 30, |a| {
        a.store.session(&second).is_some()
    })
    .await;

    // The model was told the tool's output.
    let reqs = model.requests();
    assert!(
        reqs.iter().any(|r| r.to_string().contains("hi-from-e2e")),
        "the tool result reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_tool_child_session_appears_under_its_parent() {
    let model = FakeModel::start(std::sync::Arc::new(|req: &serde_json::Value, n: usize| {
        let child = support::fake_model::first_user_text(req).contains("SUBTASK");
        match (child, n) {
            (false, 0) => Step::text("Delegating.").then_tool("task", json!({"description": "Inspect util", "prompt": "SUBTASK: read src/util.py", "subagent_type": "general"})),
            (true, 0) => Step::text("It adds two numbers."),
            _ => Step::text("Done."),
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let parent = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the parent session", 30, |a| {
        a.store.session(&parent).is_some()
    })
    .await;
    server.prompt(&parent, "delegate").await;
    let mut child_id = String::new();
    v.until("a child session", 60, |a| {
        if let Some(c) = a
            .store
            .sessions()
            .iter()
            .find(|s| s.info.parent_id.as_deref() == Some(&parent))
        {
            child_id = c.info.id.clone();
            true
        } else {
            false
        }
    })
    .await;
    v.app.prepare(ratatui::layout::Rect::new(0, 0, 120, 40));
    let rows = &v.app.panes.list.rows;
    let pi = rows
        .iter()
        .position(|r| v.app.store.sessions()[r.index].info.id == parent)
        .unwrap();
    let ci = rows
        .iter()
        .position(|r| v.app.store.sessions()[r.index].info.id == child_id)
        .unwrap();
    assert_eq!(ci, pi + 1, "the child is listed right under its parent");
    assert_eq!(rows[ci].depth, rows[pi].depth + 1);
    server.wait_idle(&parent, 60).await;
}

async fn fresh_dump(url: &str, extra: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ocview"));
    cmd.args(["attach", url, "--dump-when-idle", "--timeout", "60"])
        .args(extra);
    cmd.env_remove("OPENCODE_SERVER_PASSWORD");
    tokio::time::timeout(Duration::from_secs(90), cmd.output())
        .await
        .expect("the dump finished")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_shows_reconnecting_and_a_restart_resyncs_to_a_fresh_attach() {
    let model = FakeModel::start(steps(vec![Step::text("Running it.").then_tool(
        "bash",
        json!({"command": "echo never", "description": "Wait for permission"}),
    )]))
    .await;
    let mut server = Server::start(&model.url()).await;
    let a = server.create_session().await;
    let b = server.create_session().await;
    server.prompt(&a, "run something").await;
    let mut v = Viewer::attach_with(&server.url(), true);
    v.until("a busy session with a waiting permission", 60, |app| {
        app.store.pending_prompts().next().is_some() && app.store.session(&b).is_some()
    })
    .await;
    v.app.selected = Some(a.clone());

    // The server dies mid-turn: the viewer says it is reconnecting.
    server.kill();
    v.until("reconnecting", 30, |app| {
        matches!(app.source.state, SourceState::Reconnecting { .. })
    })
    .await;
    // Back, with the same data: the run and its permission died with the old process.
    server.launch().await;
    v.until("live again", 60, |app| {
        app.source.state == SourceState::Live
    })
    .await;
    v.settle(1500).await;
    assert!(
        v.app.store.pending_prompts().next().is_none(),
        "the dead permission was reconciled away"
    );

    let fresh = fresh_dump(&server.url(), &[]).await;
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    let ours =
        ocview::headless::dump::render(&v.app.store, &ocview::source::IngestStats::default());
    assert_eq!(
        common::dump_state(&ours),
        common::dump_state(&String::from_utf8_lossy(&fresh.stdout))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_come_from_a_file_or_the_environment_never_the_command_line() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start_with(&model.url(), Some("s3cret-pw")).await;
    server.create_session().await;
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        // Yours alone, as ocview wants a password file (as ssh a key).
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o600);
        std::fs::set_permissions(&path, mode).unwrap();
        path.display().to_string()
    };
    let (wrong, right) = (file("wrong", "wrong-pw\n"), file("right", "s3cret-pw\n"));

    // None given, and a wrong one: two different messages, no password shown.
    let out = fresh_dump(&server.url(), &[]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the server wants a password"), "{err}");
    let out = fresh_dump(&server.url(), &["--password-file", &wrong]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("authentication failed (HTTP 401"), "{err}");
    assert!(
        !err.contains("wrong-pw") && !String::from_utf8_lossy(&out.stdout).contains("wrong-pw"),
        "the password is never shown"
    );

    // The right one from a file: while it runs, no argument holds it.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ocview"));
    cmd.args([
        "attach",
        &server.url(),
        "--dump-when-idle",
        "--timeout",
        "60",
    ])
    .args(["--password-file", &right])
    .env_remove("OPENCODE_SERVER_PASSWORD")
    .stdout(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let cmdline =
        std::fs::read(format!("/proc/{}/cmdline", child.id().unwrap())).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&cmdline).contains("s3cret-pw"),
        "ps would show it"
    );
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("summary:"));

    // The same options for record and export.
    let rec = dir.path().join("rec.jsonl");
    let mut record = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"));
    record
        .args(["record", &server.url()])
        .arg(&rec)
        .args(["--password-file", &right])
        .env_remove("OPENCODE_SERVER_PASSWORD");
    let mut child = record.spawn().unwrap();
    let start = std::time::Instant::now();
    while !rec.exists() && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(rec.exists(), "record wrote its file: {status:?}");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args([
            "export",
            &server.url(),
            "--format",
            "json",
            "--password-file",
            &right,
        ])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A password on the command line is refused before anything is sent.
    let out = fresh_dump(&server.url(), &["--password", "not-a-secret"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--password-file"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_stream_replays_to_the_live_final_state() {
    let model = FakeModel::start(steps(vec![
        Step::text("Checking.").reasoning("Think first.").then_tool(
            "bash",
            json!({"command": "echo recorded", "description": "Echo"}),
        ),
        Step::text("All done, the output was recorded."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let mut v = Viewer::attach_with(&server.url(), true);
    v.until("live", 30, |app| app.source.state == SourceState::Live)
        .await;
    let s = server.create_session().await;
    server.prompt(&s, "echo something").await;
    v.until("the permission", 60, |app| {
        app.store.pending_prompts().next().is_some()
    })
    .await;
    server.answer_permissions("once").await;
    server.wait_idle(&s, 60).await;
    v.settle(1500).await;
    let recording = v.recorded();
    assert!(!recording.is_empty());
    let (replayed, stats) = common::replay_bytes(&recording);
    assert_eq!(stats.malformed, 0);
    let empty = ocview::source::IngestStats::default();
    let live_state = common::dump_state(&ocview::headless::dump::render(&v.app.store, &empty));
    assert_eq!(
        common::dump_state(&ocview::headless::dump::render(&replayed, &empty)),
        live_state
    );

    // Recording from the middle: attached after the work is done, the
    // recording holds what was loaded over REST, and replays to the same.
    let mut late = Viewer::attach_with(&server.url(), true);
    late.until("live", 30, |app| app.source.state == SourceState::Live)
        .await;
    late.settle(1500).await;
    let recording = late.recorded();
    assert!(
        String::from_utf8_lossy(&recording).contains(r#""from":"rest""#),
        "the loaded state is recorded"
    );
    let (replayed, stats) = common::replay_bytes(&recording);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(
        common::dump_state(&ocview::headless::dump::render(&replayed, &empty)),
        common::dump_state(&ocview::headless::dump::render(&late.app.store, &empty))
    );
    assert!(replayed.session(&s).is_some_and(|x| x.messages.len() >= 2));

    // The context gauge: the model's limit comes from the server's
    // provider list (GET /config/providers, as configured for the test
    // server), and the recording keeps it, so the replay shows the same.
    let limits = late.app.store.model_limits();
    let mock = limits
        .get(&("mock".to_string(), "mock-1".to_string()))
        .expect("the mock model's limits");
    assert_eq!((mock.context, mock.output), (200_000, 32_000));
    let live_use =
        ocview::model::entity::context::context_use(late.app.store.session(&s).unwrap(), limits)
            .expect("the last assistant message has tokens");
    assert_eq!(live_use.limit, Some(200_000));
    assert!(live_use.used > 0 && live_use.percent().is_some());
    let replayed_use = ocview::model::entity::context::context_use(
        replayed.session(&s).unwrap(),
        replayed.model_limits(),
    );
    assert_eq!(replayed_use, Some(live_use));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_all_shows_every_project_of_the_server() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    let here = server.create_session().await;
    // A second project: another git directory, addressed with ?directory=.
    let other = tempfile::tempdir().unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(other.path())
        .status()
        .unwrap();
    let dir = other.path().to_str().unwrap().to_string();
    let there = server
        .post(&format!("/session?directory={dir}"), json!({}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let one = fresh_dump(&server.url(), &[]).await;
    let one = String::from_utf8_lossy(&one.stdout).to_string();
    assert!(one.contains(&here) && !one.contains(&there), "{one}");
    let all = fresh_dump(&server.url(), &["--all"]).await;
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let all = String::from_utf8_lossy(&all.stdout).to_string();
    assert!(all.contains(&here) && all.contains(&there), "{all}");
}

/// A provider stream that fails after some text, then succeeds on opencode's
/// retry: the streamed text of the failed attempt is not what the server
/// stores. Once the session is idle the viewer shows what the server stored,
/// live and in a replay of what it recorded (seed 000: wire parts overwrite
/// what streaming captured).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_failing_midway_then_retried_ends_with_the_servers_stored_text() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = std::sync::Arc::new(AtomicUsize::new(0));
    let model = FakeModel::start(std::sync::Arc::new(move |_: &serde_json::Value, _| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Step::text("Streamed words of a first attempt that the provider then drops halfway")
                .fail_midway()
        } else {
            Step::text("The retried answer, whole.")
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&session).is_some())
        .await;
    v.app.selected = Some(session.clone());
    server.prompt(&session, "answer me").await;
    v.until("the first attempt's text", 60, |a| {
        texts(a, &session).contains("Streamed words")
    })
    .await;
    v.until("the retried answer", 90, |a| {
        texts(a, &session).contains("The retried answer")
    })
    .await;
    server.wait_idle(&session, 60).await;
    v.settle(1500).await;
    let stored: Vec<String> = server
        .messages(&session)
        .await
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["type"] == "text")
        .map(|p| p["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        stored.iter().filter(|t| t.is_empty()).count(),
        1,
        "the server keeps the failed attempt's part, empty: {stored:?}"
    );
    assert_eq!(texts(&v.app, &session), stored.join("|"), "live");
    let recording = v.recorded();
    let (replayed, _) = common::replay_bytes(&recording);
    let replayed_texts: Vec<String> = replayed
        .session(&session)
        .unwrap()
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.text().map(str::to_string))
        .collect();
    assert_eq!(replayed_texts, stored, "replayed from the recording");
}
