//! `ocview export`: Markdown transcripts, and normalised JSON that reads
//! back as the same session.

use crate::common;

use ocview::headless::export::{self, ExportFormat};

#[test]
fn markdown_transcripts() {
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("b_edit_write_diff/event.jsonl"));
    let md = markdown(&store);
    assert!(
        md.contains("**Tool `edit`** (completed)")
            && md.contains("```diff")
            && md.contains("+    # friendlier greeting"),
        "{md}"
    );
    insta::assert_snapshot!("edit_write_diff_md", md);
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("f_reasoning_markdown/event.jsonl"));
    let sessions = export::pick(&store, None).unwrap();
    let with = export::render(&sessions, ExportFormat::Markdown, true);
    let without = export::render(&sessions, ExportFormat::Markdown, false);
    assert!(
        with.contains("> The user wants a refactoring plan")
            && !without.contains("> The user wants")
    );
}

#[test]
fn normalised_json_reads_back_as_the_same_session() {
    for scenario in common::scenarios() {
        let (store, _) = common::replay_file(&scenario.join("event.jsonl"));
        let root = store.root_sessions().next().unwrap().info.id.clone();
        let json = export::render(
            &export::pick(&store, Some(&root)).unwrap(),
            ExportFormat::Json,
            false,
        );
        let (back, stats) = common::replay_bytes(json.as_bytes());
        assert_eq!(
            stats.malformed,
            0,
            "{}: {:?}",
            scenario.display(),
            stats.problems()
        );
        let a = store.session(&root).unwrap();
        let b = back.session(&root).unwrap();
        assert_eq!(a.messages.len(), b.messages.len());
        for (ma, mb) in a.messages.iter().zip(&b.messages) {
            assert_eq!(ma.info.id, mb.info.id);
            let pa: Vec<String> = ma
                .parts
                .iter()
                .filter(|p| !p.is_stream_only())
                .map(|p| p.to_value().to_string())
                .collect();
            let pb: Vec<String> = mb.parts.iter().map(|p| p.to_value().to_string()).collect();
            assert_eq!(pa, pb, "{}", scenario.display());
        }
    }
}

#[test]
fn an_unknown_session_is_a_clear_error() {
    let path = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["export"])
        .arg(&path)
        .args(["--session", "ses_nope", "--format", "json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session ses_nope"));
}

/// A whole source exports in reading order: the oldest root session first,
/// each followed by its subagents' sessions; sessions whose parents loop
/// (bad input) still come out, last.
#[test]
fn a_whole_source_exports_parents_before_their_subagents() {
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("e_task_subagent/event.jsonl"));
    let order: Vec<Option<&str>> = export::pick(&store, None)
        .unwrap()
        .iter()
        .map(|s| s.info.parent_id.as_deref())
        .collect();
    assert_eq!(order.len(), 2);
    assert_eq!(order[0], None, "the root first");
    assert!(order[1].is_some(), "then its subagent");

    let created = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"{id}","parentID":"{parent}"}}}}}}"#
        )
    };
    let text = [
        r#"{"type":"session.created","properties":{"info":{"id":"ses_9root","title":"root"}}}"#
            .to_string(),
        r#"{"type":"session.created","properties":{"info":{"id":"ses_1old","title":"old root"}}}"#
            .to_string(),
        created("ses_5child", "ses_9root"),
        created("ses_3loopa", "ses_2loopb"),
        created("ses_2loopb", "ses_3loopa"),
    ]
    .join("\n");
    let (store, _) = common::replay_bytes(text.as_bytes());
    let ids: Vec<&str> = export::pick(&store, None)
        .unwrap()
        .iter()
        .map(|s| s.info.id.as_str())
        .collect();
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert_eq!(&ids[..3], ["ses_9root", "ses_5child", "ses_1old"]);
}

/// What ocview adds for itself (a todo list materialised as a card) is not
/// a second tool call; each changed file is listed once; a session's error
/// is in the transcript; ids and input keys from the input are made inert.
#[test]
fn markdown_lists_each_call_and_change_once_and_keeps_input_inert() {
    let (store, _) = common::replay_file(&common::fixtures_dir().join("c_todowrite/event.jsonl"));
    let md = markdown(&store);
    let calls = common::tool_calls(&store, "todowrite");
    assert!(calls > 0);
    assert_eq!(md.matches("**Tool `todowrite`**").count(), calls, "{md}");

    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("b_edit_write_diff/event.jsonl"));
    let md = markdown(&store);
    assert_eq!(md.matches("### `src/main.py`").count(), 1, "{md}");
    assert_eq!(md.matches("### `src/shapes.py`").count(), 1, "{md}");

    let text = [
        r#"{"type":"session.created","properties":{"info":{"id":"ses_\u001b[2Jx","title":"t"}}}"#,
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_a","sessionID":"ses_\u001b[2Jx","role":"assistant","time":{"created":1}}}}"#,
        r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_a","messageID":"msg_a","sessionID":"ses_\u001b[2Jx","type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"de\u001b]0;x\u0007sc":"ls"},"output":"ok","title":"","metadata":{},"time":{"start":1,"end":2}}}}}"#,
        r#"{"type":"session.error","properties":{"sessionID":"ses_\u001b[2Jx","error":{"name":"APIError","data":{"message":"overloaded"}}}}"#,
    ]
    .join("\n");
    let (store, stats) = common::replay_bytes(text.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let md = markdown(&store);
    assert!(!md.contains('\u{1b}') && !md.contains('\u{7}'), "{md:?}");
    assert!(
        md.contains("**Tool `bash`**") && md.contains(": `ls`"),
        "{md}"
    );
    assert!(
        md.contains("> **Session error:** APIError: overloaded"),
        "{md}"
    );
}

/// JSON of several sessions reads back as the same sessions, and an export
/// document is one whatever the order of its keys.
#[test]
fn json_of_several_sessions_and_reordered_documents_read_back() {
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("e_task_subagent/event.jsonl"));
    let sessions = export::pick(&store, None).unwrap();
    assert!(sessions.len() > 1);
    let json = export::render(&sessions, ExportFormat::Json, false);
    let (back, stats) = common::replay_bytes(json.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    for s in &sessions {
        let b = back.session(&s.info.id).expect("every session comes back");
        assert_eq!(b.messages.len(), s.messages.len());
        assert_eq!(b.info.parent_id, s.info.parent_id);
    }

    // One line, `messages` before `info`, as `jq -c '{messages, info}'` writes.
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/opencode-export.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let reordered = format!(
        r#"{{"messages":{},"info":{}}}"#,
        doc["messages"], doc["info"]
    );
    let (store, stats) = common::replay_bytes(reordered.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let id = doc["info"]["id"].as_str().unwrap();
    let n = doc["messages"].as_array().unwrap().len();
    assert_eq!(store.session(id).unwrap().messages.len(), n);
}

/// Every session of `store` as Markdown, without reasoning.
fn markdown(store: &ocview::model::Store) -> String {
    export::render(
        &export::pick(store, None).unwrap(),
        ExportFormat::Markdown,
        false,
    )
}
