//! The real binary in tmux, attached to the real server: a person answers a
//! bash permission and a question with key presses, and the server's state
//! shows the answers.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, last_turn};
use support::opencode::Server;
use support::tmux::Tmux;

/// A model that asks two questions when told "ask me" and runs
/// `echo <word>` (asking for permission) otherwise.
async fn question_or_bash_model(word: &'static str) -> FakeModel {
    let questions = json!({"questions": [
        {"question": "Which runner?", "header": "Runner", "options": [{"label": "pytest", "description": "the usual"}, {"label": "unittest", "description": "stdlib"}]},
        {"question": "Which checks?", "header": "Checks", "multiple": true, "options": [{"label": "lint", "description": ""}, {"label": "types", "description": ""}]}
    ]});
    FakeModel::start(std::sync::Arc::new(move |req: &Value, _: usize| {
        let (text, step) = last_turn(req);
        match (text.contains("ask me"), step) {
            (false, 0) => Step::text("Running.").then_tool(
                "bash",
                json!({"command": format!("echo {word}"), "description": "say it"}),
            ),
            (true, 0) => Step::text("Questions.").then_tool("question", questions.clone()),
            _ => Step::text("Done."),
        }
    }))
    .await
}

/// The first part of `tool` in a session, as the server stores it.
async fn tool_part(server: &Server, session: &str, tool: &str) -> Value {
    server
        .messages(session)
        .await
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == tool)
        .cloned()
        .unwrap_or_else(|| panic!("no {tool} part"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answering_a_permission_and_a_question_with_keys() {
    let model = question_or_bash_model("tmux-e2e").await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let t = Tmux::attached("e2e", 100, 30, &server.url());

    server.prompt(&s, "run it").await;
    let screen = t.wait_for("the permission in the prompt bar", |sc| {
        sc.contains("permission · bash") && sc.contains("$ echo tmux-e2e")
    });
    assert!(screen.contains("[y] allow once"), "{screen}");
    // A prompt that took focus arms for half a second before it answers.
    t.wait_for("the prompt armed", |sc| !sc.contains("arming"));
    t.keys(&["y"]);
    server.wait_idle(&s, 60).await;
    let bash = tool_part(&server, &s, "bash").await;
    assert_eq!(bash["state"]["status"], "completed");
    t.wait_for("the bar to go", |sc| !sc.contains("permission · bash"));

    server.prompt(&s, "ask me").await;
    t.wait_for("the question", |sc| sc.contains("Which runner?"));
    t.wait_for("the question armed", |sc| !sc.contains("arming"));
    // Runner: pick 2 (and move on); Checks: toggle 1 and 2, Enter to review.
    t.keys(&["2"]);
    t.wait_for("the second question", |sc| sc.contains("Which checks?"));
    t.keys(&["1", "2", "Enter"]);
    t.wait_for("the review", |sc| sc.contains("Which checks?: lint, types"));
    t.keys(&["Enter"]);
    server.wait_idle(&s, 60).await;
    assert_eq!(
        tool_part(&server, &s, "question").await["state"]["metadata"]["answers"],
        json!([["unittest"], ["lint", "types"]])
    );
    tokio::time::sleep(Duration::from_millis(300)).await;

    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// Keys typed for one prompt never answer the next. A question and a bash
/// permission wait at once; the question is answered with the README's
/// keys at human speed, then more of them follow at machine speed (a double
/// Enter, a digit, arrows) while the permission takes focus: the server
/// receives no permission reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_for_a_question_never_answer_the_permission_after_it() {
    let model = question_or_bash_model("never-allowed").await;
    let server = Server::start(&model.url()).await;
    let asking = server.create_session().await;
    let running = server.create_session().await;
    let t = Tmux::attached("arming", 100, 30, &server.url());
    server.prompt(&asking, "ask me").await;
    t.wait_for("the question", |sc| sc.contains("Which runner?"));
    server.prompt(&running, "run it").await;
    server
        .until("the permission pending", 60, || async {
            !server
                .get("/permission")
                .await
                .as_array()
                .unwrap()
                .is_empty()
        })
        .await;
    t.wait_for("both prompts queued", |sc| sc.contains("1 of 2"));
    t.wait_for("the question armed", |sc| !sc.contains("arming"));
    // At human speed: pick, pick and toggle, review, submit.
    for k in ["2", "1", "2", "Enter", "Enter"] {
        t.keys(&[k]);
        std::thread::sleep(Duration::from_millis(150));
    }
    // Beyond: the keys a fast typist or a held key adds after the submit.
    t.keys(&[
        "Enter", "1", "Enter", "Right", "Enter", "Left", "Enter", "Space",
    ]);
    t.wait_for("the permission in the bar", |sc| {
        sc.contains("permission · bash")
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pending = server.get("/permission").await;
    assert_eq!(
        pending.as_array().map(Vec::len),
        Some(1),
        "the permission is still waiting: {pending}"
    );
    let bash = tool_part(&server, &running, "bash").await;
    assert_eq!(bash["state"]["status"], "running", "{bash}");
    // The question got its answer.
    assert_eq!(
        tool_part(&server, &asking, "question").await["state"]["metadata"]["answers"],
        json!([["unittest"], ["lint", "types"]])
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
