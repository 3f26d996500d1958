//! The real binary in tmux, attached to the real server: a person answers a
//! bash permission and a question with key presses, and the server's state
//! shows the answers.

mod common;
mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, last_turn};
use support::opencode::Server;
use support::tmux::Tmux;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answering_a_permission_and_a_question_with_keys() {
    let questions = json!({"questions": [
        {"question": "Which runner?", "header": "Runner", "options": [{"label": "pytest", "description": "the usual"}, {"label": "unittest", "description": "stdlib"}]},
        {"question": "Which checks?", "header": "Checks", "multiple": true, "options": [{"label": "lint", "description": ""}, {"label": "types", "description": ""}]}
    ]});
    let model = FakeModel::start(std::sync::Arc::new(move |req: &Value, _: usize| {
        let (text, step) = last_turn(req);
        match (text.contains("ask me"), step) {
            (false, 0) => Step::text("Running.").then_tool(
                "bash",
                json!({"command": "echo tmux-e2e", "description": "say it"}),
            ),
            (true, 0) => Step::text("Questions.").then_tool("question", questions.clone()),
            _ => Step::text("Done."),
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let t = Tmux::start("e2e");
    t.line(&format!(
        "{} attach {}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    t.wait_for("the viewer, live", |sc| {
        sc.contains("live") && sc.contains("Sessions")
    });

    server.prompt(&s, "run it").await;
    let screen = t.wait_for("the permission in the prompt bar", |sc| {
        sc.contains("permission · bash") && sc.contains("$ echo tmux-e2e")
    });
    assert!(screen.contains("[y] allow once"), "{screen}");
    // A prompt that took focus arms for half a second before it answers.
    t.wait_for("the prompt armed", |sc| !sc.contains("arming"));
    t.keys(&["y"]);
    server.wait_idle(&s, 60).await;
    let msgs = server.messages(&s).await;
    let bash = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "bash")
        .unwrap();
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
    let msgs = server.messages(&s).await;
    let q = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "question")
        .unwrap();
    assert_eq!(
        q["state"]["metadata"]["answers"],
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
    let questions = json!({"questions": [
        {"question": "Which runner?", "header": "Runner", "options": [{"label": "pytest", "description": ""}, {"label": "unittest", "description": ""}]},
        {"question": "Which checks?", "header": "Checks", "multiple": true, "options": [{"label": "lint", "description": ""}, {"label": "types", "description": ""}]}
    ]});
    let model = FakeModel::start(std::sync::Arc::new(move |req: &Value, _: usize| {
        let (text, step) = last_turn(req);
        match (text.contains("ask me"), step) {
            (false, 0) => Step::text("Running.").then_tool(
                "bash",
                json!({"command": "echo never-allowed", "description": "say it"}),
            ),
            (true, 0) => Step::text("Questions.").then_tool("question", questions.clone()),
            _ => Step::text("Done."),
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let asking = server.create_session().await;
    let running = server.create_session().await;
    let t = Tmux::start("arming");
    t.line(&format!(
        "{} attach {}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    t.wait_for("the viewer, live", |sc| {
        sc.contains("live") && sc.contains("Sessions")
    });
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
    let msgs = server.messages(&running).await;
    let bash = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "bash")
        .unwrap();
    assert_eq!(bash["state"]["status"], "running", "{bash}");
    // The question got its answer.
    let msgs = server.messages(&asking).await;
    let q = msgs
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "question")
        .unwrap();
    assert_eq!(
        q["state"]["metadata"]["answers"],
        json!([["unittest"], ["lint", "types"]])
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
