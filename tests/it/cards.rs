//! Every part type and every tool card in each of its states, rendered at 80
//! and 160 columns and kept as insta snapshots. Hand-written parts cover the
//! tools the captured fixtures lack.

use std::collections::HashSet;

use ocview::model::Part;
use ocview::render::blocks::{self, Detail, RenderCtx};
use ocview::render::highlight::Highlighter;
use ocview::render::theme::Theme;
use serde_json::{Value, json};

const NOW: i64 = 1_795_339_400_000;

fn part(body: Value) -> Part {
    let mut v = json!({"id": "prt_x", "messageID": "msg_x", "sessionID": "ses_x"});
    v.as_object_mut()
        .unwrap()
        .extend(body.as_object().unwrap().clone());
    Part::from_raw(&serde_json::value::to_raw_value(&v).unwrap()).unwrap()
}

fn tool(name: &str, state: Value) -> Part {
    part(json!({"type": "tool", "tool": name, "callID": "call_1", "state": state}))
}

fn render(
    p: &Part,
    width: u16,
    expanded: bool,
    full: bool,
    awaiting: bool,
    detail: Detail,
) -> String {
    let theme = Theme::default();
    let hl = Highlighter::blocking(&theme.syntax);
    let waiting: HashSet<String> = if awaiting {
        ["call_1".to_string()].into()
    } else {
        HashSet::new()
    };
    let ctx = RenderCtx {
        theme: &theme,
        width,
        directory: Some("/home/dev/demo-project"),
        highlighter: &hl,
        awaiting: &waiting,
        now_ms: NOW,
        detail,
        store: None,
        pending_highlight: Default::default(),
        wall_clock: None,
        ended: false,
    };
    let lines = blocks::part_lines(p, expanded, full, &ctx);
    let mut out = String::new();
    for l in lines {
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(
            unicode_width::UnicodeWidthStr::width(text.as_str()) <= width as usize,
            "over {width}: {text}"
        );
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// The states a tool goes through, with this tool's input and output.
fn states(input: Value, output: &str, metadata: Value) -> Vec<(&'static str, Value, bool)> {
    let t = json!({"start": NOW - 4_200, "end": NOW - 1_000});
    vec![
        (
            "pending",
            json!({"status": "pending", "input": {}, "raw": ""}),
            false,
        ),
        (
            "awaiting permission",
            json!({"status": "running", "input": input, "time": {"start": NOW - 2_000}}),
            true,
        ),
        (
            "running",
            json!({"status": "running", "input": input, "metadata": metadata, "time": {"start": NOW - 2_500}}),
            false,
        ),
        (
            "completed",
            json!({"status": "completed", "input": input, "output": output, "metadata": metadata, "title": "", "time": t}),
            false,
        ),
        (
            "failed",
            json!({"status": "error", "input": input, "error": "Error: something broke\nat line 2", "time": t}),
            false,
        ),
        (
            "rejected",
            json!({"status": "error", "input": input, "error": "The user rejected permission to use this specific tool call with the following feedback: not now", "time": t}),
            false,
        ),
        (
            "aborted",
            json!({"status": "error", "input": input, "error": "Tool execution aborted", "metadata": {"interrupted": true}, "time": t}),
            false,
        ),
    ]
}

fn all_states(name: &str, input: Value, output: &str, metadata: Value) -> String {
    let mut out = String::new();
    for width in [80, 160] {
        for (label, state, awaiting) in states(input.clone(), output, metadata.clone()) {
            let p = tool(name, state);
            out.push_str(&format!("── {name} {label} @{width}\n"));
            out.push_str(&render(&p, width, true, false, awaiting, Detail::Normal));
        }
        // Folded, and whole.
        let completed = states(input.clone(), output, metadata.clone()).remove(3).1;
        out.push_str(&format!("── {name} folded @{width}\n"));
        out.push_str(&render(
            &tool(name, completed.clone()),
            width,
            false,
            false,
            false,
            Detail::Normal,
        ));
        out.push_str(&format!("── {name} full @{width}\n"));
        out.push_str(&render(
            &tool(name, completed),
            width,
            true,
            true,
            false,
            Detail::Full,
        ));
    }
    out
}

fn long_output(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i} of the output"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn bash() {
    let input = json!({"command": "ls -la /home/dev/demo-project/src && echo done", "description": "List the sources"});
    let output = format!(
        "\u{1b}[32mgreen\u{1b}[0m and \u{1b}[1mbold\u{1b}[0m\n{}",
        long_output(30)
    );
    insta::assert_snapshot!(all_states(
        "bash",
        input,
        &output,
        json!({"output": "partial\n", "exit": 2})
    ));
}

#[test]
fn file_tools() {
    let read = all_states(
        "read",
        json!({"filePath": "/home/dev/demo-project/src/main.py", "offset": 10, "limit": 40}),
        "<file>…</file>",
        json!({"loaded": ["/home/dev/demo-project/AGENTS.md"], "display": {"type": "file", "lineStart": 10, "lineEnd": 12, "totalLines": 80, "text": "def f():\n    return 1\n"}}),
    );
    insta::assert_snapshot!("read", read);
    let write = all_states(
        "write",
        json!({"filePath": "/home/dev/demo-project/src/new.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"}),
        "Wrote file successfully.",
        json!({"exists": false, "filepath": "/home/dev/demo-project/src/new.rs"}),
    );
    insta::assert_snapshot!("write", write);
    let diff = "Index: a\n===\n--- a\n+++ a\n@@ -1,3 +1,3 @@\n keep\n-old line\n+new line\n tail\n";
    let edit = all_states(
        "edit",
        json!({"filePath": "/home/dev/demo-project/src/main.py", "oldString": "old line", "newString": "new line"}),
        "Edit applied successfully.",
        json!({"diff": diff, "filediff": {"file": "src/main.py", "additions": 1, "deletions": 1}}),
    );
    insta::assert_snapshot!("edit", edit);
    let patch = "*** Begin Patch\n*** Add File: src/added.txt\n+hello\n*** Update File: src/main.py\n@@ def greet\n-    return 1\n+    return 2\n*** Delete File: src/old.py\n*** Update File: src/a.py\n*** Move to: src/b.py\n*** End Patch";
    insta::assert_snapshot!(
        "apply_patch",
        all_states(
            "apply_patch",
            json!({"patchText": patch}),
            "Done!",
            json!({})
        )
    );
}

#[test]
fn search_tools() {
    let glob = all_states(
        "glob",
        json!({"pattern": "**/*.py", "path": "/home/dev/demo-project/src"}),
        "src/main.py\nsrc/util.py",
        json!({"count": 2}),
    );
    insta::assert_snapshot!("glob", glob);
    let grep = all_states(
        "grep",
        json!({"pattern": "def \\w+", "include": "*.py"}),
        "src/main.py:\n  Line 1: def greet(name):",
        json!({"matches": 1}),
    );
    insta::assert_snapshot!("grep", grep);
    insta::assert_snapshot!(
        "list",
        all_states(
            "list",
            json!({"path": "/home/dev/demo-project"}),
            "src/\n  main.py\nREADME.md",
            json!({})
        )
    );
    let page = "x".repeat(5_000);
    insta::assert_snapshot!(
        "webfetch",
        all_states(
            "webfetch",
            json!({"url": "https://example.com/docs", "format": "markdown"}),
            &page,
            json!({})
        )
    );
    insta::assert_snapshot!(
        "websearch",
        all_states(
            "websearch",
            json!({"query": "ratatui scrolling"}),
            "1. Result one\n2. Result two",
            json!({})
        )
    );
}

#[test]
fn agent_and_planning_tools() {
    let task = all_states(
        "task",
        json!({"description": "Inspect util module", "prompt": "Look at src/util.py", "subagent_type": "general"}),
        "<task id=\"ses_c\" state=\"completed\">\n<task_result>\nIt adds two numbers.\n</task_result>\n</task>",
        json!({"sessionId": "ses_child"}),
    );
    insta::assert_snapshot!("task", task);
    let todos = json!([{"content": "Write the parser", "status": "completed", "priority": "high"}, {"content": "Test it", "status": "in_progress", "priority": "medium"}, {"content": "Ship", "status": "pending", "priority": "low"}, {"content": "Gold-plate", "status": "cancelled", "priority": "low"}]);
    insta::assert_snapshot!(
        "todowrite",
        all_states(
            "todowrite",
            json!({"todos": todos}),
            "",
            json!({"todos": todos})
        )
    );
    insta::assert_snapshot!(
        "todoread",
        all_states("todoread", json!({}), "", json!({"todos": todos}))
    );
    let questions = json!([{"question": "Which linter?", "header": "Linter", "options": [{"label": "Ruff", "description": "fast"}]}, {"question": "Extras?", "header": "Extras", "multiple": true, "options": []}]);
    insta::assert_snapshot!(
        "question",
        all_states(
            "question",
            json!({"questions": questions}),
            "",
            json!({"answers": [["Ruff"], ["Format on save", "Strict mode"]]})
        )
    );
    insta::assert_snapshot!(
        "skill",
        all_states(
            "skill",
            json!({"name": "pdf"}),
            "Loaded skill pdf.",
            json!({})
        )
    );
}

#[test]
fn generic_tools() {
    let invalid = all_states(
        "invalid",
        json!({"tool": "fly", "error": "Model tried to call unavailable tool 'fly'."}),
        "The arguments provided to the tool are invalid: Model tried to call unavailable tool 'fly'.",
        json!({}),
    );
    insta::assert_snapshot!("invalid", invalid);
    insta::assert_snapshot!(
        "mcp_tool",
        all_states(
            "github_create_issue",
            json!({"title": "Bug", "labels": ["a", "b"], "count": 3}),
            "created #12",
            json!({})
        )
    );
}

#[test]
fn other_parts() {
    let mut out = String::new();
    let cases: Vec<(&str, Value)> = vec![
        (
            "text",
            json!({"type": "text", "text": "# Title\n\nSome **bold** and `code`, a [link](https://x.dev), see /home/dev/demo-project/src/main.py.\n\n- [x] done\n- [ ] todo\n  1. nested\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n```rust\nfn main() {}\n```"}),
        ),
        (
            "synthetic text",
            json!({"type": "text", "text": "The following tool was executed by the user", "synthetic": true}),
        ),
        (
            "reasoning",
            json!({"type": "reasoning", "text": "**Planning the fix**\n\nFirst I look at the file, then I edit it.", "time": {"start": 1, "end": 2}}),
        ),
        (
            "step-start",
            json!({"type": "step-start", "snapshot": "abc"}),
        ),
        (
            "step-finish",
            json!({"type": "step-finish", "reason": "tool-calls", "cost": 0.0123, "tokens": {"input": 1000, "output": 200, "reasoning": 50, "cache": {"read": 10, "write": 0}}}),
        ),
        (
            "snapshot",
            json!({"type": "snapshot", "snapshot": "4b825dc6"}),
        ),
        (
            "patch",
            json!({"type": "patch", "hash": "abc", "files": ["/home/dev/demo-project/src/main.py", "/home/dev/demo-project/src/util.py"]}),
        ),
        (
            "file",
            json!({"type": "file", "mime": "image/png", "filename": "shot.png", "url": "data:image/png;base64,AAAA"}),
        ),
        ("agent", json!({"type": "agent", "name": "reviewer"})),
        (
            "subtask",
            json!({"type": "subtask", "prompt": "p", "description": "Review the change", "agent": "reviewer"}),
        ),
        (
            "retry",
            json!({"type": "retry", "attempt": 2, "error": {"name": "APIError", "data": {"message": "Rate limited"}}, "time": {"created": 1}}),
        ),
        ("compaction", json!({"type": "compaction", "auto": true})),
        (
            "unknown",
            json!({"type": "hologram", "beam": {"power": 9000}}),
        ),
    ];
    for width in [80u16, 160] {
        for (label, body) in &cases {
            let p = part(body.clone());
            for (detail, expanded) in [
                (
                    Detail::Normal,
                    blocks::expanded_by_default(&p, true, Detail::Normal),
                ),
                (Detail::Full, true),
            ] {
                out.push_str(&format!("── {label} {} @{width}\n", detail.label()));
                out.push_str(&render(
                    &p,
                    width,
                    expanded,
                    detail == Detail::Full,
                    false,
                    detail,
                ));
            }
        }
    }
    insta::assert_snapshot!("other_parts", out);
}

#[test]
fn an_assistant_error_shows_in_a_box() {
    let raw = json!({"id": "msg_x", "sessionID": "ses_x", "role": "assistant", "parentID": "msg_u", "agent": "build", "modelID": "mock-1", "providerID": "mock",
        "error": {"name": "APIError", "data": {"message": "Invalid API key: the key you gave was rejected by the provider"}}, "time": {"created": 1}});
    let info =
        ocview::model::MessageInfo::from_raw(&serde_json::value::to_raw_value(&raw).unwrap())
            .unwrap();
    let message = ocview::model::Message::new(info);
    let theme = Theme::default();
    let hl = Highlighter::blocking(&theme.syntax);
    let none = HashSet::new();
    let mut out = String::new();
    for width in [40u16, 80] {
        let ctx = RenderCtx {
            theme: &theme,
            width,
            directory: None,
            highlighter: &hl,
            awaiting: &none,
            now_ms: NOW,
            detail: Detail::Normal,
            store: None,
            pending_highlight: Default::default(),
            wall_clock: None,
            ended: false,
        };
        for l in blocks::message_header(&message, &ctx) {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(
                unicode_width::UnicodeWidthStr::width(text.as_str()) <= width as usize,
                "{text}"
            );
            out.push_str(text.trim_end());
            out.push('\n');
        }
    }
    insta::assert_snapshot!(out);
}

/// Tool output with OSC 8 hyperlinks (`ls --hyperlink=always`, gcc, cargo)
/// ended by ST (`ESC \`) and by BEL, a title, and colours: the link text
/// shows, the sequences do not, and nothing after them is hidden.
#[test]
fn hyperlinks_in_tool_output_show_their_text() {
    let output = concat!(
        "\u{1b}]8;;file:///home/dev/demo-project/src/main.rs\u{1b}\\src/main.rs\u{1b}]8;;\u{1b}\\  (ST)\n",
        "\u{1b}]8;;file:///home/dev/demo-project/README.md\u{7}README.md\u{1b}]8;;\u{7}  (BEL)\n",
        "\u{1b}]0;a title\u{1b}\\\u{1b}[1;32mwarning\u{1b}[0m: text after a title\n",
        "last line"
    );
    let input = json!({"command": "ls --hyperlink=always", "description": "List"});
    let metadata = json!({"output": output, "exit": 0});
    let state = json!({"status": "completed", "input": input, "output": output, "metadata": metadata, "title": "", "time": {"start": NOW - 1000, "end": NOW}});
    let text = render(&tool("bash", state), 80, true, false, false, Detail::Normal);
    for shown in [
        "src/main.rs  (ST)",
        "README.md  (BEL)",
        "warning: text after a title",
        "last line",
    ] {
        assert!(text.contains(shown), "{shown:?} missing:\n{text}");
    }
    assert!(!text.contains("file://") && !text.contains('␛'), "{text}");
    insta::assert_snapshot!("bash_hyperlinks", text);
}

/// A long command wraps inside the card (continuations indented under
/// it) instead of running past the pane's edge; a multi-line one keeps
/// its lines.
#[test]
fn a_long_bash_command_wraps_in_the_card() {
    let command = "cargo test --offline --test e2e_tmux -- --nocapture --test-threads=1 answering_a_permission_and_a_question_with_keys 2>&1 | tee /tmp/e2e-tmux.log\necho finished-with-status-$?";
    let input = json!({"command": command, "description": "Run the tmux tests"});
    let state = json!({"status": "completed", "input": input, "output": "ok\n", "metadata": {"exit": 0}, "title": "", "time": {"start": NOW - 1000, "end": NOW}});
    // `render` checks that no line is wider than the pane.
    let text = render(&tool("bash", state), 60, true, false, false, Detail::Normal);
    let joined: String = text.split_whitespace().collect();
    for word in command.split_whitespace() {
        assert!(joined.contains(word), "{word:?} is cut:\n{text}");
    }
    insta::assert_snapshot!("bash_long_command", text);
}
