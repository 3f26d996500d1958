//! Answering permissions and questions from ocview, against the real
//! opencode server: keys pressed in the viewer, replies sent over REST, and
//! what the server and the model saw.

use crate::common;
use crate::support;

use std::time::Duration;

use common::press;
use ocview::app::App;
use ocview::app::config::Config;
use ocview::model::{PartBody, ToolStatus};
use ocview::source::live::{self, Client, LiveOptions};
use ocview::source::msg::SourceMsg;
use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, first_user_text, steps};
use support::opencode::Server;
use tokio::sync::mpsc;

struct Viewer {
    app: App,
    rx: mpsc::Receiver<SourceMsg>,
}

impl Viewer {
    fn attach(url: &str) -> Viewer {
        let (tx, rx) = mpsc::channel(100_000);
        let mut app = App::new(Config::default(), "e2e", false).unwrap();
        // Arming is tested on its own (tests/it/prompts.rs, tests/e2e/e2e_tmux.rs).
        app.panes.prompts.arming = Duration::ZERO;
        let client = Client::new(url, None);
        app.replies = Some(live::reply::spawn(client.clone(), tx.clone()));
        app.live = Some(live::spawn(
            client,
            LiveOptions {
                load_all_messages: true,
                ..Default::default()
            },
            tx,
            None,
        ));
        Viewer { app, rx }
    }

    async fn until(&mut self, what: &str, secs: u64, mut f: impl FnMut(&App) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        while !f(&self.app) {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(msg)) => {
                    self.app.on_source(msg);
                    self.app.prepare(ratatui::layout::Rect::new(0, 0, 120, 40));
                    // As if drawn: a prompt laid out counts as seen.
                    self.app.frame_flushed(tokio::time::Instant::now());
                }
                Ok(None) => panic!("the source ended while waiting for {what}"),
                Err(_) => panic!(
                    "timed out waiting for {what}; prompt: {:?}",
                    self.app
                        .current_prompt()
                        .map(|p| p.2.request.id().to_string())
                ),
            }
        }
    }

    fn screen(&mut self) -> String {
        common::screen(&mut self.app, 120, 40)
    }
}

fn tool_status(app: &App, session: &str, command: &str) -> Option<ToolStatus> {
    app.store
        .session(session)?
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .find_map(|p| match &p.body {
            PartBody::Tool(t)
                if p.tool_state_field("input")
                    .is_some_and(|i| i["command"] == command) =>
            {
                Some(t.state.status.clone())
            }
            _ => None,
        })
}

fn has_prompt(app: &App) -> bool {
    app.current_prompt().is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_runs_the_command_and_always_lets_the_next_match_run_unasked() {
    let model = FakeModel::start(steps(vec![
        Step::text("First.").then_tool(
            "bash",
            json!({"command": "echo one-e2e", "description": "one"}),
        ),
        Step::text("Second.").then_tool(
            "bash",
            json!({"command": "echo two-e2e", "description": "two"}),
        ),
        Step::text("Third.").then_tool(
            "bash",
            json!({"command": "echo two-e2e", "description": "two again"}),
        ),
        Step::text("Done."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&s).is_some())
        .await;
    server.prompt(&s, "run things").await;

    v.until("the first permission", 60, has_prompt).await;
    assert!(v.screen().contains("$ echo one-e2e"));
    press(&mut v.app, &["y"]);
    v.until("echo one-e2e completed", 60, |a| {
        tool_status(a, &s, "echo one-e2e") == Some(ToolStatus::Completed)
    })
    .await;

    v.until("the second permission", 60, |a| {
        has_prompt(a) && tool_status(a, &s, "echo two-e2e").is_some()
    })
    .await;
    press(&mut v.app, &["a"]);
    assert!(
        v.screen().contains("The server will remember"),
        "always asks for confirmation first"
    );
    press(&mut v.app, &["y"]);
    // The third call, same command: runs without asking.
    server.wait_idle(&s, 90).await;
    let msgs = server.messages(&s).await;
    let bash: Vec<&Value> = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .filter(|p| p["tool"] == "bash")
        .collect();
    assert_eq!(bash.len(), 3);
    assert!(
        bash.iter().all(|p| p["state"]["status"] == "completed"),
        "{bash:?}"
    );
    assert!(
        bash[0]["state"]["output"]
            .as_str()
            .unwrap()
            .contains("one-e2e")
    );
    assert!(
        server
            .get("/permission")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_with_a_message_fails_the_tool_and_tells_the_model() {
    let model = FakeModel::start(steps(vec![
        Step::text("Deleting.").then_tool(
            "bash",
            json!({"command": "rm -rf build", "description": "clean"}),
        ),
        Step::text("Understood, not deleting."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&s).is_some())
        .await;
    server.prompt(&s, "clean up").await;
    v.until("the permission", 60, has_prompt).await;
    press(
        &mut v.app,
        &[
            "m", "p", "l", "e", "a", "s", "e", " ", "k", "e", "e", "p", " ", "i", "t", "enter",
        ],
    );
    v.until("the tool to fail", 60, |a| {
        tool_status(a, &s, "rm -rf build") == Some(ToolStatus::Error)
    })
    .await;
    server.wait_idle(&s, 60).await;
    let last = model.requests().last().cloned().unwrap();
    assert!(
        last.to_string().contains("please keep it"),
        "the model's next request carries the message"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_are_answered_and_dismissed() {
    let questions = json!({"questions": [
        {"question": "Which extras?", "header": "Extras", "multiple": true, "options": [{"label": "Format on save", "description": "ruff format"}, {"label": "Strict mode", "description": "mypy"}]},
        {"question": "Project name?", "header": "Name", "options": [{"label": "demo", "description": "keep it"}]}
    ]});
    let q2 = json!({"questions": [{"question": "Continue?", "header": "Go", "options": [{"label": "Yes", "description": ""}]}]});
    let model = FakeModel::start(std::sync::Arc::new(move |req: &Value, n: usize| {
        let second = first_user_text(req).contains("second");
        match (second, n) {
            (false, 0) => Step::text("A few questions.").then_tool("question", questions.clone()),
            (true, 0) => Step::text("One more.").then_tool("question", q2.clone()),
            _ => Step::text("Thanks."),
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&s).is_some())
        .await;
    server.prompt(&s, "set up").await;
    v.until("the question", 60, has_prompt).await;
    press(&mut v.app, &["1", "2", "enter"]);
    press(
        &mut v.app,
        &[
            "down", "space", "m", "y", "-", "a", "p", "p", "enter", "enter",
        ],
    );
    server.wait_idle(&s, 60).await;
    let last = model.requests().last().cloned().unwrap().to_string();
    assert!(
        last.contains("Format on save") && last.contains("Strict mode") && last.contains("my-app"),
        "{last}"
    );
    let msgs = server.messages(&s).await;
    let answers = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "question")
        .map(|p| p["state"]["metadata"]["answers"].clone())
        .unwrap();
    assert_eq!(
        answers,
        json!([["Format on save", "Strict mode"], ["my-app"]])
    );

    let s2 = server.create_session().await;
    server.prompt(&s2, "second round").await;
    v.until("the second question", 60, |a| {
        a.current_prompt()
            .is_some_and(|p| format!("{:?}", p.2.request).contains("Continue?"))
    })
    .await;
    press(&mut v.app, &["x"]);
    v.until("the question tool to end", 60, |a| {
        a.store.session(&s2).is_some_and(|s| {
            s.messages.iter().flat_map(|m| m.parts.iter()).any(|p| matches!(&p.body, PartBody::Tool(t) if t.tool == "question" && t.state.status == ToolStatus::Error))
        })
    })
    .await;
}

/// A typed answer as meant: on a single-choice question it replaces the
/// option picked before (the server receives exactly one answer, the
/// text); on a multiple-choice question it is added to the options picked.
/// The own answer opens by its number, after the options'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_answer_replaces_a_single_pick_and_adds_to_multiple_ones() {
    let questions = json!({"questions": [
        {"question": "Which runner?", "header": "Runner", "options": [{"label": "pytest", "description": "the usual"}, {"label": "unittest", "description": "stdlib"}]},
        {"question": "Which checks?", "header": "Checks", "multiple": true, "options": [{"label": "lint", "description": ""}, {"label": "types", "description": ""}]}
    ]});
    let model = FakeModel::start(steps(vec![
        Step::text("Questions.").then_tool("question", questions),
        Step::text("Thanks."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&s).is_some())
        .await;
    server.prompt(&s, "set up").await;
    v.until("the question", 60, has_prompt).await;
    let screen = v.screen();
    assert!(screen.contains("3 ( ) ✎ type your own answer"), "{screen}");
    // Runner: pick pytest (the bar moves on), come back, type nose2 instead.
    press(
        &mut v.app,
        &["1", "left", "3", "n", "o", "s", "e", "2", "enter"],
    );
    // Checks: toggle lint, then add a typed one.
    press(&mut v.app, &["1", "3", "f", "m", "t", "enter", "s"]);
    let screen = v.screen();
    assert!(
        screen.contains("Which runner?: nose2") && screen.contains("Which checks?: lint, fmt"),
        "{screen}"
    );
    press(&mut v.app, &["enter"]);
    server.wait_idle(&s, 60).await;
    let part = server
        .messages(&s)
        .await
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["tool"] == "question")
        .unwrap();
    assert_eq!(part["state"]["status"], "completed", "{part}");
    assert_eq!(
        part["state"]["metadata"]["answers"],
        json!([["nose2"], ["lint", "fmt"]]),
        "what the server recorded: {part}"
    );
    let output = part["state"]["output"].as_str().unwrap_or_default();
    assert!(!output.contains("pytest"), "{output}");
    // And what the model was told.
    let last = model.requests().last().cloned().unwrap().to_string();
    assert!(
        last.contains("nose2") && last.contains("fmt") && !last.contains(r#"pytest, nose2"#),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_permission_shows_its_parent_chain_and_one_answered_elsewhere_leaves() {
    let model = FakeModel::start(std::sync::Arc::new(|req: &Value, n: usize| {
        let child = first_user_text(req).contains("SUBTASK");
        match (child, n) {
            (false, 0) => Step::text("Delegating.").then_tool("task", json!({"description": "Clean up", "prompt": "SUBTASK: remove tmp", "subagent_type": "general"})),
            (true, 0) => Step::text("Removing.").then_tool("bash", json!({"command": "echo child-e2e", "description": "child"})),
            (true, 1) => Step::text("Removed.").then_tool("bash", json!({"command": "echo child-two", "description": "child again"})),
            _ => Step::text("Done."),
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let parent = server.create_session().await;
    let mut v = Viewer::attach(&server.url());
    v.until("the session", 30, |a| a.store.session(&parent).is_some())
        .await;
    server.prompt(&parent, "delegate").await;
    v.until("the child's permission", 90, has_prompt).await;
    let screen = v.screen();
    assert!(
        screen.contains("›")
            && screen.contains("(@general subagent)")
            && screen.contains("echo child-e2e"),
        "{screen}"
    );
    press(&mut v.app, &["y"]);
    // The second one is answered by another client: it leaves our queue.
    v.until("the second child permission", 90, |a| {
        has_prompt(a)
            && a.current_prompt()
                .is_some_and(|p| format!("{:?}", p.2.request).contains("child-two"))
    })
    .await;
    assert_eq!(server.answer_permissions("once").await, 1);
    v.until("the prompt to leave", 30, |a| !has_prompt(a)).await;
    assert!(
        v.app
            .notice
            .as_deref()
            .unwrap_or("")
            .contains("another client")
    );
    server.wait_idle(&parent, 90).await;
}

/// Every answer on record, against the real server (#40): two viewers as
/// two machines writing one archive answer one permission each, and a
/// third client answers the last over REST (as OpenCode's TUI does); the
/// archive lists the three once each, with the right origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_machines_and_another_client_answers_are_on_record() {
    fn as_machine(name: &str) {
        // SAFETY: read on this thread only (each test is a process).
        unsafe { std::env::set_var("OCVIEW_MACHINE", name) };
    }
    let model = FakeModel::start(steps(vec![
        Step::text("One.").then_tool(
            "bash",
            json!({"command": "echo audit-one", "description": "one"}),
        ),
        Step::text("Two.").then_tool(
            "bash",
            json!({"command": "echo audit-two", "description": "two"}),
        ),
        Step::text("Three.").then_tool(
            "bash",
            json!({"command": "echo audit-three", "description": "three"}),
        ),
        Step::text("Done."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let dir = tempfile::tempdir().unwrap();
    let setting = ocview::archive::Setting::Sqlite(dir.path().join("archive.db"));
    let mut viewers = Vec::new();
    for machine in ["box-a", "box-b"] {
        as_machine(machine);
        let mut v = Viewer::attach(&server.url());
        v.app.archive.tap = Some(ocview::archive::writer::spawn(
            setting.clone(),
            ocview::archive::Origin {
                server: Some(server.url()),
                host: machine.into(),
                file: None,
            },
            Box::new(|_| {}),
        ));
        v.until("the session", 30, |a| a.store.session(&s).is_some())
            .await;
        viewers.push(v);
    }
    server.prompt(&s, "run things").await;
    let asks = |command: &'static str| {
        move |a: &App| {
            a.current_prompt()
                .is_some_and(|p| format!("{:?}", p.2.request).contains(command))
        }
    };
    // box-a answers the first, box-b sees it answered elsewhere.
    as_machine("box-a");
    viewers[0]
        .until("the first permission", 90, asks("audit-one"))
        .await;
    viewers[0].screen();
    press(&mut viewers[0].app, &["y"]);
    as_machine("box-b");
    viewers[1]
        .until("the second permission", 90, asks("audit-two"))
        .await;
    viewers[1].screen();
    press(&mut viewers[1].app, &["y"]);
    as_machine("box-a");
    viewers[0]
        .until("the third permission", 90, asks("audit-three"))
        .await;
    as_machine("box-b");
    viewers[1]
        .until("the third permission", 90, asks("audit-three"))
        .await;
    // Another client answers the third.
    assert_eq!(server.answer_permissions("once").await, 1);
    for (v, machine) in viewers.iter_mut().zip(["box-a", "box-b"]) {
        as_machine(machine);
        v.until("the third to be answered", 60, |a| !has_prompt(a))
            .await;
    }
    server.wait_idle(&s, 90).await;
    for (v, machine) in viewers.iter_mut().zip(["box-a", "box-b"]) {
        as_machine(machine);
        // What came last (the replies' outcomes, the events) is taken.
        v.until("the session idle", 30, |a| {
            a.store
                .session(&s)
                .is_some_and(|x| x.status == ocview::model::SessionStatus::Idle)
        })
        .await;
        v.app.archive.tap = None;
    }
    let mut archive = setting.open().unwrap().unwrap();
    let rows = archive
        .answers(&ocview::archive::engine::AnswerFilter {
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    let mut seen: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r.shown.clone(), r.by.clone(), r.machine.clone()))
        .collect();
    seen.sort();
    assert_eq!(rows.len(), 3, "{rows:#?}");
    assert_eq!(seen[0].0, "echo audit-one");
    assert_eq!(
        (seen[0].1.as_str(), seen[0].2.as_str()),
        ("ocview", "box-a")
    );
    assert_eq!(seen[1].0, "echo audit-three");
    assert_eq!(seen[1].1, "another client");
    assert_eq!(seen[2].0, "echo audit-two");
    assert_eq!(
        (seen[2].1.as_str(), seen[2].2.as_str()),
        ("ocview", "box-b")
    );
    assert!(
        rows.iter()
            .filter(|r| r.by == "ocview")
            .all(|r| r.outcome == "sent")
    );
    assert!(rows.iter().all(|r| r.session_id == s));
}
