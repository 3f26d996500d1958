//! The answer keys are always on screen (issue 24, point 6): the real
//! binary in tmux at 80×24, attached to the real server, asked for a write
//! with a 200-line diff and a 200-line bash command. The line of choices
//! stays, `v` names the answer keys, the rejection's text box says how to
//! send and cancel, and the server receives what was answered.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, last_turn};
use support::opencode::Server;
use support::tmux::Tmux;

const CHOICES: &str = "[y] allow once  [a] allow always  [n] reject  [m] reject with a message";

fn lines(len: usize, line: impl Fn(usize) -> String) -> String {
    (1..=len).map(line).collect::<Vec<_>>().join("\n")
}

/// "write big": a new 200-line file (a permission with a 200-line diff);
/// "run long": a 200-line bash command.
async fn long_prompts_model() -> FakeModel {
    FakeModel::start(std::sync::Arc::new(|req: &Value, _: usize| {
        let (text, step) = last_turn(req);
        match (text.as_str(), step) {
            (t, 0) if t.contains("write big") => Step::text("Writing.").then_tool(
                "write",
                json!({"filePath": "src/big.py", "content": lines(200, |i| format!("value_{i} = {i}")) + "\n"}),
            ),
            (t, 0) if t.contains("run long") => Step::text("Running.").then_tool(
                "bash",
                json!({"command": lines(200, |i| format!("echo step-{i}")), "description": "many steps"}),
            ),
            _ => Step::text("Done."),
        }
    }))
    .await
}

async fn tool_part(server: &Server, session: &str, tool: &str) -> Value {
    server
        .messages(session)
        .await
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["tool"] == tool)
        .unwrap_or_else(|| panic!("no {tool} part"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_80x24_a_big_diff_and_a_long_command_keep_their_answer_keys() {
    let model = long_prompts_model().await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    let t = Tmux::attached("room", 80, 24, &server.url());

    server.prompt(&s, "write big").await;
    // Its choices too: a capture can fall between two writes of a frame.
    let screen = t.wait_for_secs("the write permission", 60, |sc| {
        sc.contains("permission · edit") && sc.contains("value_1 = 1") && sc.contains(CHOICES)
    });
    assert!(screen.contains("more lines (v shows all)"), "{screen}");
    t.wait_for("the prompt armed", |sc| !sc.contains("arming"));
    // The whole prompt names the keys that answer it.
    t.keys(&["v"]);
    t.wait_for("the whole prompt with its answer keys", |sc| {
        sc.contains("answer: y allow once · a allow always · n reject · m reject with a message")
    });
    // m from the view: the text box opens in the bar, saying how to send.
    t.keys(&["m"]);
    let screen = t.wait_for("the rejection's text box", |sc| {
        sc.contains("enter send · esc cancel")
    });
    assert!(screen.contains("value_1 = 1"), "{screen}");
    t.line("not this file");
    server.wait_idle(&s, 60).await;
    let write = tool_part(&server, &s, "write").await;
    assert_eq!(write["state"]["status"], "error", "{write}");
    assert!(
        write["state"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not this file")),
        "{write}"
    );
    t.wait_for("the bar to go", |sc| !sc.contains("permission · edit"));

    server.prompt(&s, "run long").await;
    let screen = t.wait_for_secs("the bash permission", 60, |sc| {
        sc.contains("permission · bash") && sc.contains("$ echo step-1") && sc.contains(CHOICES)
    });
    assert!(screen.contains("197 more lines (v shows all)"), "{screen}");
    t.wait_for("the prompt armed", |sc| !sc.contains("arming"));
    t.keys(&["n"]);
    server.wait_idle(&s, 60).await;
    assert_eq!(
        tool_part(&server, &s, "bash").await["state"]["status"],
        "error"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
