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
