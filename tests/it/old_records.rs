//! Records of older OpenCode versions and of tools that re-write streams:
//! - 0.x permission events (`permission.updated` carrying the request,
//!   `permission.replied` with `permissionID`/`response`) become prompts and
//!   their replies, through the same prompt model as `permission.asked`;
//! - a `run --format json` line whose part has no `id` or no `sessionID` is
//!   placed by its message and time, never in a session whose id is "".
//!
//! The shapes are those of sst/opencode's `packages/opencode/src/permission/
//! index.ts` before the rename (Permission.Info: id, type, pattern, sessionID,
//! messageID, callID, title, metadata, time.created; Event.Replied:
//! sessionID, permissionID, response).

use crate::common;

use ocview::model::{PromptRequest, Resolution};

const SESSION: &str = r#"{"type":"session.updated","properties":{"info":{"id":"ses_old","title":"Old","directory":"/p","time":{"created":1750000000000,"updated":1750000000000}}}}"#;

#[test]
fn old_permission_updated_and_replied_are_a_prompt_and_its_reply() {
    let lines = [
        SESSION,
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_o1","sessionID":"ses_old","role":"assistant","time":{"created":1750000000100}}}}"#,
        // A bash request: the pattern a list, the command in the metadata.
        r#"{"type":"permission.updated","properties":{"id":"per_old1","type":"bash","pattern":["git push *"],"sessionID":"ses_old","messageID":"msg_o1","callID":"call_a","title":"git push origin main","metadata":{"command":"git push origin main"},"time":{"created":1750000000200}}}"#,
        // An edit request: one pattern as a string, only a title to say what.
        r#"{"type":"permission.updated","properties":{"id":"per_old2","type":"webfetch","pattern":"https://example.com/*","sessionID":"ses_old","messageID":"msg_o1","title":"Fetch https://example.com/a","metadata":{},"time":{"created":1750000000300}}}"#,
        r#"{"type":"permission.replied","properties":{"sessionID":"ses_old","permissionID":"per_old1","response":"always"}}"#,
    ];
    let input = lines.join("\n");
    let (store, stats) = common::replay_bytes(input.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let first = store
        .prompt("per_old1")
        .expect("permission.updated is a prompt");
    let PromptRequest::Permission(p) = &first.request else {
        panic!("{:?}", first.request)
    };
    assert_eq!(p.session_id, "ses_old");
    assert_eq!(p.permission, "bash");
    assert_eq!(p.patterns, vec!["git push *".to_string()]);
    assert_eq!(p.tool.as_ref().unwrap().call_id, "call_a");
    assert_eq!(
        first.resolution,
        Some(Resolution::Replied("always".into())),
        "permission.replied with permissionID/response resolves it"
    );
    // The second is still pending, and says what it is about by its title.
    let second = store.prompt("per_old2").unwrap();
    assert_eq!(second.resolution, None);
    let PromptRequest::Permission(p2) = &second.request else {
        panic!()
    };
    assert_eq!(p2.patterns, vec!["https://example.com/*".to_string()]);
    assert_eq!(
        ocview::model::entity::prompt::subject(p2),
        "Fetch https://example.com/a"
    );
    // Shown: the dump lists both, and the viewer's prompt bar shows the
    // pending one with its title.
    let dump = ocview::headless::dump::render(&store, &stats);
    assert!(
        dump.contains("permission per_old1 bash git push * session=ses_old — replied always"),
        "{dump}"
    );
    assert!(dump.contains("pending prompts: 1"), "{dump}");
    let mut app = common::app_with(input.as_bytes());
    let screen = common::screen(&mut app, 120, 30);
    assert!(screen.contains("Fetch https://example.com/a"), "{screen}");
}

#[test]
fn run_parts_without_id_or_session_are_placed_by_message_and_time() {
    let lines = [
        // The first line names the session at the top level only.
        r#"{"type":"step_start","timestamp":1750000001000,"sessionID":"ses_run","part":{"messageID":"msg_r1","type":"step-start","time":{"start":1750000001000}}}"#,
        // No id, no sessionID anywhere: the stream's session, by its message.
        r#"{"type":"text","timestamp":1750000002000,"part":{"messageID":"msg_r1","type":"text","text":"First words.","time":{"start":1750000001500,"end":1750000002000}}}"#,
        r#"{"type":"tool_use","timestamp":1750000003000,"part":{"messageID":"msg_r1","type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb","title":"ls","metadata":{},"time":{"start":1750000002500,"end":1750000003000}}}}"#,
        // The session named on the part only.
        r#"{"type":"text","timestamp":1750000004000,"part":{"messageID":"msg_r2","sessionID":"ses_run","type":"text","text":"Second message.","time":{"start":1750000003500}}}"#,
    ];
    let input = lines.join("\n");
    let (store, stats) = common::replay_bytes(input.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert!(
        store.session("").is_none(),
        "never a session with an empty id"
    );
    assert_eq!(store.sessions().len(), 1);
    let session = store.session("ses_run").unwrap();
    let m1 = session.message("msg_r1").unwrap();
    let texts: Vec<&str> = m1.parts.iter().filter_map(|p| p.text()).collect();
    assert_eq!(texts, vec!["First words."]);
    // In time order: step-start, the text, the tool.
    let kinds: Vec<&str> = m1.parts.iter().map(|p| p.kind()).collect();
    assert_eq!(kinds, vec!["step-start", "text", "tool"]);
    assert!(session.message("msg_r2").is_some());
    let dump = ocview::headless::dump::render(&store, &stats);
    for shown in [
        "| First words.",
        "tool bash [completed] \"ls\"",
        "| Second message.",
    ] {
        assert!(dump.contains(shown), "{shown:?} missing:\n{dump}");
    }
    // Read twice, the same ids: a part is updated in place, not doubled.
    let twice = format!("{input}\n{input}");
    let (again, _) = common::replay_bytes(twice.as_bytes());
    assert_eq!(
        again
            .session("ses_run")
            .unwrap()
            .message("msg_r1")
            .unwrap()
            .parts
            .len(),
        3
    );
}

#[test]
fn a_run_line_naming_no_session_at_all_gets_one_of_its_message() {
    let line = r#"{"type":"text","timestamp":1750000002000,"part":{"messageID":"msg_lone","type":"text","text":"Alone."}}"#;
    let (store, stats) = common::replay_bytes(line.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert!(store.session("").is_none());
    let session = &store.sessions()[0];
    assert!(!session.info.id.is_empty());
    let texts: Vec<&str> = session
        .message("msg_lone")
        .unwrap()
        .parts
        .iter()
        .filter_map(|p| p.text())
        .collect();
    assert_eq!(texts, vec!["Alone."]);
}
