//! Every captured stream replays to exactly the server's final state.
//!
//! Walks tests/fixtures/opencode-1.18.33: a new scenario folder is covered by dropping it in.

use crate::common;

use std::path::Path;

use ocview::model::Store;
use serde_json::Value;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Compare the store's state of one session with a `GET /session/{id}/message` result.
fn assert_matches_messages(store: &Store, expected: &Value, what: &str) {
    let expected = expected.as_array().expect("messages.json is a list");
    let session_id = expected[0]["info"]["sessionID"].as_str().unwrap();
    let session = store
        .session(session_id)
        .unwrap_or_else(|| panic!("{what}: session {session_id} missing"));
    let got_ids: Vec<&str> = session.messages.iter().map(|m| m.id()).collect();
    let want_ids: Vec<&str> = expected
        .iter()
        .map(|m| m["info"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(got_ids, want_ids, "{what}: message order");
    for (message, want) in session.messages.iter().zip(expected) {
        assert!(
            !message.placeholder,
            "{what}: {} is a placeholder",
            message.id()
        );
        let info: Value = serde_json::from_str(message.info.raw.as_ref().unwrap().get()).unwrap();
        assert_eq!(info, want["info"], "{what}: info of {}", message.id());
        let parts: Vec<_> = message
            .parts
            .iter()
            .filter(|p| !p.is_stream_only())
            .collect();
        let want_parts = want["parts"].as_array().unwrap();
        let got_part_ids: Vec<&str> = parts.iter().map(|p| p.id.as_str()).collect();
        let want_part_ids: Vec<&str> = want_parts
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            got_part_ids,
            want_part_ids,
            "{what}: part order of {}",
            message.id()
        );
        for (part, want) in parts.iter().zip(want_parts) {
            // Typed view and full JSON both agree with the server.
            if let Some(text) = part.text() {
                assert_eq!(
                    Some(text),
                    want["text"].as_str(),
                    "{what}: text of {}",
                    part.id
                );
            }
            if let Some(tool) = part.tool() {
                assert_eq!(
                    tool.state.status.label(),
                    want["state"]["status"],
                    "{what}: state of {}",
                    part.id
                );
            }
            assert_eq!(part.to_value(), *want, "{what}: part {}", part.id);
        }
    }
}

fn check_stream(scenario: &Path, file: &str) {
    let what = format!("{}/{file}", scenario.file_name().unwrap().to_string_lossy());
    let (store, stats) = common::replay_file(&scenario.join(file));
    assert_eq!(stats.malformed, 0, "{what}: {:?}", stats.problems());
    assert_eq!(stats.orphans, 0, "{what}: {:?}", stats.problems());
    assert_eq!(
        store.held_delta_count(),
        0,
        "{what}: deltas never matched a part"
    );
    assert!(stats.applied > 0, "{what}: nothing applied");
    assert_matches_messages(&store, &read_json(&scenario.join("messages.json")), &what);
    let mut children = 0;
    for entry in std::fs::read_dir(scenario).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("child-") && name.ends_with("-messages.json") {
            children += 1;
            let child = read_json(&path);
            assert_matches_messages(&store, &child, &format!("{what} ({name})"));
            let child_id = child[0]["info"]["sessionID"].as_str().unwrap();
            let parent = store.session(child_id).unwrap().info.parent_id.clone();
            assert!(parent.is_some(), "{what}: child {child_id} has no parent");
        }
    }
    // Todos equal the server's list, when the scenario captured one.
    let todo_path = scenario.join("todo.json");
    if todo_path.is_file() {
        let want = read_json(&todo_path);
        let session_id = read_json(&scenario.join("messages.json"))[0]["info"]["sessionID"].clone();
        let session = store.session(session_id.as_str().unwrap()).unwrap();
        let got: Vec<(&str, &str)> = session
            .todos
            .iter()
            .map(|t| (t.content.as_str(), t.status.label()))
            .collect();
        let want: Vec<(&str, &str)> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["content"].as_str().unwrap(),
                    t["status"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{what}: todos");
    }
    // Nothing left pending when the run ended with no pending prompts.
    let pending_path = scenario.join("permission-pending.json");
    if pending_path.is_file() && read_json(&pending_path) == Value::Array(vec![]) {
        assert_eq!(
            store.pending_prompts().count(),
            0,
            "{what}: pending prompts"
        );
    }
    let _ = children;
}

#[test]
fn every_fixture_replays_to_the_server_state_from_event_jsonl() {
    for scenario in common::scenarios() {
        check_stream(&scenario, "event.jsonl");
    }
}

#[test]
fn every_fixture_replays_to_the_server_state_from_event_sse() {
    for scenario in common::scenarios() {
        check_stream(&scenario, "event.sse");
    }
}

#[test]
fn every_fixture_replays_to_the_server_state_from_global_event_jsonl() {
    for scenario in common::scenarios() {
        check_stream(&scenario, "global-event.jsonl");
    }
}

#[test]
fn the_dump_command_prints_a_transcript_and_summary() {
    for scenario in common::scenarios() {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["replay", "--dump"])
            .arg(scenario.join("event.jsonl"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let last = text.lines().last().unwrap();
        assert!(
            last.starts_with("summary: ") && last.contains(" 0 malformed"),
            "{last}"
        );
        assert!(text.contains("== session ses_"), "{text}");
        assert!(text.contains("-- turn 1"), "{text}");
    }
}

#[test]
fn a_captured_opencode_run_json_replays() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    ))
    .unwrap();
    let (store, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let session = &store.sessions()[0];
    let dump = ocview::headless::dump::render(&store, &stats);
    assert!(
        dump.contains("tool read [completed]") && dump.contains("It defines add(a, b)."),
        "{dump}"
    );
    assert!(session.messages.iter().all(|m| m.info.is_assistant()));
}

#[test]
fn a_captured_opencode_export_replays() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-export.json"
    ))
    .unwrap();
    let (store, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let dump = ocview::headless::dump::render(&store, &stats);
    assert!(
        dump.contains("something to export") && dump.contains("Exported answer with **markdown**."),
        "{dump}"
    );
    // A document that is not an export is one clear problem, not a panic.
    let (_, stats) = common::replay_bytes(b"{\n  \"hello\": 1\n}\n");
    assert_eq!(stats.malformed, 1);
}
