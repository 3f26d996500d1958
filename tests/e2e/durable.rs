//! Durable Stream recordings (seed 004): the sample replays through the
//! normal path to a session tree with its parts, costs and an answered
//! checkpoint; bad lines are counted and the rest still applies.

use crate::common;

use ocview::model::entity::part::PartBody;
use ocview::model::{Resolution, ToolStatus};
use ocview::source::ProblemKind;

const ROOT: &str = "ses_dfa4c27b3ffeK9mQ2vR7tW4xYz";
const CHILD: &str = "ses_dfa4c0f55ffe8HnB3kP6sL1qAe";

fn sample() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/durable-stream.jsonl"
    ))
    .unwrap()
}

#[test]
fn the_sample_replays_to_a_tree_with_parts_costs_and_an_answered_checkpoint() {
    let (store, stats) = common::replay_bytes(&sample());
    assert!(stats.problems().is_empty(), "{:?}", stats.problems());
    assert_eq!(
        (stats.malformed, stats.orphans, stats.ignored, stats.stale),
        (0, 0, 0, 0)
    );
    let dump = ocview::headless::dump::render(&store, &stats);
    insta::assert_snapshot!("sample_dump", dump);

    // The stream is the root; the spawned subagent's session hangs under it.
    let roots: Vec<&str> = store.root_sessions().map(|s| s.id()).collect();
    assert_eq!(roots, [ROOT]);
    let child = store.session(CHILD).unwrap();
    assert_eq!(child.info.parent_id.as_deref(), Some(ROOT));
    let children: Vec<&str> = store.children(ROOT).map(|s| s.id()).collect();
    assert_eq!(children, [CHILD]);
    assert!(store.sessions().iter().all(|s| !s.placeholder));

    // Two turns in the root, one in the child; every tool ended completed.
    let root = store.session(ROOT).unwrap();
    assert_eq!(root.turns().len(), 2);
    assert_eq!(child.turns().len(), 1);
    let parts = |s: &ocview::model::Session| {
        s.messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .cloned()
            .collect::<Vec<_>>()
    };
    let root_parts = parts(root);
    let tools: Vec<(&str, &ToolStatus)> = root_parts
        .iter()
        .filter_map(|p| p.tool())
        .map(|t| (t.tool.as_str(), &t.state.status))
        .collect();
    assert_eq!(
        tools,
        [
            ("read", &ToolStatus::Completed),
            ("edit", &ToolStatus::Completed),
            ("task", &ToolStatus::Completed),
            ("edit", &ToolStatus::Completed),
            ("bash", &ToolStatus::Completed),
        ]
    );
    let read = root_parts.iter().find_map(|p| p.tool()).unwrap();
    assert!(
        read.state
            .output
            .as_deref()
            .unwrap()
            .contains("def greet():")
    );
    // The edit kept the input of its `tool_use` and got the result's output.
    let edit = root_parts
        .iter()
        .find(|p| p.tool().is_some_and(|t| t.tool == "edit"))
        .unwrap();
    assert!(edit.tool_state_field("input").unwrap()["newString"].is_string());
    assert_eq!(
        edit.tool().unwrap().state.output.as_deref(),
        Some("Edit applied successfully.")
    );
    assert_eq!(
        root_parts
            .iter()
            .filter(|p| matches!(p.body, PartBody::Patch(_)))
            .count(),
        2
    );

    // Step costs and tokens, summed into their message and session.
    let step_cost: f64 = root_parts
        .iter()
        .filter_map(|p| match &p.body {
            PartBody::StepFinish(s) => Some(s.cost),
            _ => None,
        })
        .sum();
    assert!((step_cost - 0.02296).abs() < 1e-9, "{step_cost}");
    assert!((root.info.cost - step_cost).abs() < 1e-9);
    let message_cost: f64 = root.messages.iter().map(|m| m.info.cost).sum();
    assert!((message_cost - step_cost).abs() < 1e-9);
    assert!(child.info.cost > 0.0 && child.info.tokens.sum() > 0);

    // The checkpoint was asked and answered once; nothing waits.
    assert_eq!(store.prompts().len(), 1);
    let prompt = &store.prompts()[0];
    assert_eq!(prompt.request.session_id(), ROOT);
    assert_eq!(prompt.resolution, Some(Resolution::Replied("once".into())));
    assert_eq!(store.pending_prompts().count(), 0);

    // files.changed is the session's diff; both sessions ended idle.
    let files: Vec<&str> = root.diff.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(files, ["src/greet.py", "README.md"]);
    assert!(store.sessions().iter().all(|s| s.status.label() == "idle"));
}

#[test]
fn replaying_the_sample_twice_changes_nothing() {
    let once = sample();
    let mut twice = once.clone();
    twice.extend_from_slice(&once);
    let (a, sa) = common::replay_bytes(&once);
    let (b, sb) = common::replay_bytes(&twice);
    assert_eq!(sb.malformed + sb.orphans, 0, "{:?}", sb.problems());
    let state = |store, stats| {
        let dump = ocview::headless::dump::render(store, stats);
        dump.lines()
            .filter(|l| !l.starts_with("summary:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(state(&a, &sa), state(&b, &sb));
}

#[test]
fn the_session_list_shows_the_trace_as_a_tree() {
    let mut app = common::app_with(&sample());
    app.now_ms = 1_795_400_060_000;
    app.on_source(ocview::source::msg::SourceMsg::State(
        ocview::source::msg::SourceState::Ended,
    ));
    let text = common::screen(&mut app, 100, 30);
    // The rows of the session list: the left pane, under its heading.
    let rows: Vec<String> = text
        .lines()
        .map(|l| l.chars().take_while(|c| *c != '│').collect())
        .collect();
    let row = |title: &str| rows.iter().position(|r| r.contains(title)).unwrap();
    let (root_row, child_row) = (row("Greet by name"), row("Check README"));
    assert!(rows[child_row].starts_with("    "), "indented: {text}");
    assert_eq!(child_row, root_row + 1, "{text}");
    insta::assert_snapshot!("session_tree", text);
}

fn line(id: &str, kind: &str, payload: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"{kind}","stream_id":"ses_b","correlation_id":"01RUN","actor":"build","timestamp":1795400000000,"payload":{payload}}}"#
    )
}

#[test]
fn bad_durable_lines_are_counted_and_the_rest_applies() {
    let lines = [
        line(
            "01A",
            "lifecycle.session.created",
            r#"{"sessionID":"ses_b","title":"bad input"}"#,
        ),
        // 2: a type this version does not map: ignored, counted by type.
        line("01B", "agent.paused", r#"{"message":"waiting"}"#),
        // 3: a tool use whose state is not an object.
        line(
            "01C",
            "execution.tool_use",
            r#"{"tool":"read","callID":"c","state":"running"}"#,
        ),
        // 4: a payload that is not an object.
        line("01D", "execution.step_start", "[1,2]"),
        // 5: no stream_id.
        r#"{"id":"01E","type":"lifecycle.session.idle","correlation_id":"01RUN","actor":"build","timestamp":1,"payload":{}}"#.to_string(),
        // 6: a checkpoint answer for a request nobody asked.
        line("01F", "checkpoint.approved", r#"{"id":"per_nobody"}"#),
        // 7: step_finish tokens of the wrong shape.
        line(
            "01G",
            "execution.step_finish",
            r#"{"reason":"stop","tokens":"many"}"#,
        ),
        // 8: an id with a control character.
        line("01H\\u001b[2J", "execution.step_start", "{}"),
        // 9: a user input without any text.
        line("01I", "user.input", r#"{"sessionID":"ses_b"}"#),
        // Good lines after all that still apply.
        line("01J", "user.input", r#"{"text":"still here"}"#),
        line("01K", "execution.step_start", "{}"),
        line(
            "01L",
            "execution.tool_use",
            r#"{"tool":"read","callID":"c","state":{"status":"completed","input":{},"output":"ok"}}"#,
        ),
        line("01M", "lifecycle.session.idle", "{}"),
    ];
    let (store, stats) = common::replay_bytes(lines.join("\n").as_bytes());
    let problems: Vec<(u64, ProblemKind)> =
        stats.problems().iter().map(|p| (p.line, p.kind)).collect();
    assert_eq!(
        problems,
        [
            (3, ProblemKind::Malformed),
            (4, ProblemKind::Malformed),
            (5, ProblemKind::Malformed),
            (6, ProblemKind::Orphan),
            (7, ProblemKind::Malformed),
            (8, ProblemKind::Malformed),
            (9, ProblemKind::Malformed),
        ],
        "{:?}",
        stats.problems()
    );
    let text = |line: u64| {
        stats
            .problems()
            .iter()
            .find(|p| p.line == line)
            .unwrap()
            .message
            .clone()
    };
    assert!(text(3).contains("state"), "{}", text(3));
    assert!(text(5).contains("stream_id"), "{}", text(5));
    assert!(text(7).contains("step-finish"), "{}", text(7));
    assert_eq!(stats.ignored, 1);
    assert_eq!(store.ignored_counts().get("agent.paused"), Some(&1));

    let session = store.session("ses_b").unwrap();
    assert_eq!(session.title(), "bad input");
    assert_eq!(session.status.label(), "idle");
    let dump = ocview::headless::dump::render(&store, &stats);
    assert!(dump.contains("still here"), "{dump}");
    assert!(dump.contains("tool read [completed]"), "{dump}");
    assert!(dump.contains("ignored types: agent.paused×1"), "{dump}");
}

#[test]
fn the_commands_read_a_durable_stream() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/durable-stream.jsonl"
    );
    let run = |args: &[&str]| {
        let out = crate::support::succeeded(
            std::process::Command::new(env!("CARGO_BIN_EXE_ocview")).args(args),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let dump = run(&["replay", path, "--dump"]);
    assert!(dump.contains(&format!("== session {CHILD}")), "{dump}");
    assert!(
        dump.lines().last().unwrap().contains(" 0 malformed"),
        "{dump}"
    );
    let md = run(&["export", path, "--format", "md"]);
    assert!(
        md.contains("# Greet by name and check the README") && md.contains("**Tool `edit`**"),
        "{md}"
    );
}
