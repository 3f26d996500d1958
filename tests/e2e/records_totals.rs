//! Older and odder records (issue 24, point 2) and totals that add up
//! (point 3): each input is written here, replayed through the viewer's
//! path, and what a reader is shown is asserted: screens, `--dump`, plain
//! mode and export.

use crate::common;

use std::io::Write;
use std::process::Command;

use serde_json::{Value, json};

const SES: &str = "ses_records0001";

/// One bus event per line, as `GET /event` writes them.
fn lines(events: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        out.extend_from_slice(e.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn event(kind: &str, properties: Value) -> Value {
    json!({"type": kind, "properties": properties})
}

fn session_created(title: &str) -> Value {
    event(
        "session.created",
        json!({"sessionID": SES, "info": {"id": SES, "title": title, "directory": "/p",
            "time": {"created": 1_795_000_000_000i64, "updated": 1_795_000_000_000i64}}}),
    )
}

fn message(id: &str, extra: Value) -> Value {
    let mut info = json!({"id": id, "sessionID": SES, "time": {"created": 1_795_000_000_100i64}});
    for (k, v) in extra.as_object().unwrap() {
        info[k] = v.clone();
    }
    event("message.updated", json!({"sessionID": SES, "info": info}))
}

fn part(message: &str, id: &str, body: Value) -> Value {
    let mut p = json!({"id": id, "messageID": message, "sessionID": SES});
    for (k, v) in body.as_object().unwrap() {
        p[k] = v.clone();
    }
    event("message.part.updated", json!({"sessionID": SES, "part": p}))
}

fn text(message: &str, id: &str, text: &str) -> Value {
    part(
        message,
        id,
        json!({"type": "text", "text": text, "time": {"start": 1, "end": 2}}),
    )
}

fn status(kind: &str) -> Value {
    event(
        "session.status",
        json!({"sessionID": SES, "status": {"type": kind}}),
    )
}

fn temp_file(name: &str, bytes: &[u8]) -> tempfile::TempPath {
    let mut f = tempfile::Builder::new()
        .prefix(name)
        .suffix(".jsonl")
        .tempfile()
        .unwrap();
    f.write_all(bytes).unwrap();
    f.into_temp_path()
}

fn ocview(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ocview {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn dump(bytes: &[u8]) -> String {
    let file = temp_file("dump", bytes);
    ocview(&["replay", "--dump", file.to_str().unwrap()])
}

fn export(bytes: &[u8], format: &str) -> String {
    let file = temp_file("export", bytes);
    ocview(&["export", file.to_str().unwrap(), "--format", format])
}

/// The session's screen at 200×50, with the context panel docked.
fn wide_screen(bytes: &[u8]) -> String {
    let s = wide_screen_(bytes);
    if std::env::var("PEEK").is_ok() {
        eprintln!("{s}");
    }
    s
}

fn wide_screen_(bytes: &[u8]) -> String {
    let mut app = common::app_with(bytes);
    // Wide enough that the list's rows show each session's cost.
    app.config.session_list_width = Some(50);
    // The side panel's totals too: asked for, as with its key.
    app.panes.side_panel_shown = Some(true);
    app.selected = Some(SES.into());
    common::screen(&mut app, 200, 50)
}

/// The session list's row of the session: the screen's second line, left
/// of the list's border.
fn list_row(screen: &str) -> &str {
    let row = screen.lines().nth(1).unwrap_or("");
    row.split('│').next().unwrap_or("")
}

fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}

// ---- point 2: a message with a missing or unknown role ----

fn odd_roles() -> Vec<u8> {
    lines(&[
        session_created("Odd roles"),
        status("idle"),
        message("msg_a1", json!({"role": "user"})),
        text("msg_a1", "prt_a1", "Hello there."),
        message(
            "msg_a2",
            json!({"role": "assistant", "parentID": "msg_a1", "agent": "build", "cost": 0.5,
                "tokens": {"input": 100, "output": 20, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                "time": {"created": 1_795_000_000_200i64, "completed": 1_795_000_000_300i64}}),
        ),
        text("msg_a2", "prt_a2", "An assistant's answer."),
        // A role this version does not know, with figures of its own.
        message(
            "msg_a3",
            json!({"role": "system", "cost": 7.0,
                "tokens": {"input": 9000, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        ),
        text("msg_a3", "prt_a3", "A note from a system role."),
        // No role at all.
        message("msg_a4", json!({"cost": 3.0})),
        text("msg_a4", "prt_a4", "A message that names no role."),
    ])
}

#[test]
fn a_message_with_an_unknown_or_missing_role_is_drawn_neutral_and_not_counted() {
    let bytes = odd_roles();
    let screen = wide_screen(&bytes);
    // The assistant's look once, for the assistant's message only.
    assert_eq!(screen.matches("◆ ").count(), 1, "{screen}");
    assert!(line_with(&screen, "▌ system").contains("▌ system"));
    assert!(screen.contains("▌ unknown role"), "{screen}");
    assert!(screen.contains("A note from a system role."), "{screen}");
    // Never in the assistant's totals: the session's sum is the
    // assistant's $0.50 and 120 tokens, not the odd messages' $10.
    assert!(
        line_with(&screen, "cost Σ").contains("cost Σ$0.50"),
        "{screen}"
    );
    assert!(line_with(&screen, "tokens Σ").contains("tokens Σ120"));
    let mut app = common::app_with(&bytes);
    app.selected = Some(SES.into());
    insta::assert_snapshot!("odd_roles_100x16", common::screen(&mut app, 100, 16));

    let dump = dump(&bytes);
    assert!(
        dump.contains("role=\"system\" msg_a3") && dump.contains("unknown role msg_a4"),
        "{dump}"
    );
    assert!(dump.contains("cost Σ$0.5000 tokens Σ120"), "{dump}");
    let file = temp_file("plain", &bytes);
    let plain = ocview(&["replay", file.to_str().unwrap()]);
    assert!(
        plain.contains("system message: A note from a system role.")
            && plain.contains("unknown role message: A message that names no role.")
            && plain.contains("text: An assistant's answer."),
        "{plain}"
    );
    let md = export(&bytes, "md");
    assert!(
        md.contains("## Message (system)") && md.contains("## Message (unknown role)"),
        "{md}"
    );
}

// ---- point 2: a task card whose input is empty ----

fn empty_task() -> Vec<u8> {
    lines(&[
        session_created("Empty task input"),
        status("idle"),
        message("msg_b1", json!({"role": "user"})),
        text("msg_b1", "prt_b1", "Look around."),
        message(
            "msg_b2",
            json!({"role": "assistant", "parentID": "msg_b1",
                "time": {"created": 1_795_000_000_200i64, "completed": 1_795_000_000_300i64}}),
        ),
        part(
            "msg_b2",
            "prt_b2",
            json!({"type": "tool", "tool": "task", "callID": "call_b2",
                "state": {"status": "completed", "input": {}, "title": "Survey the repository layout",
                    "output": "Found src and tests.", "metadata": {},
                    "time": {"start": 1_795_000_000_210i64, "end": 1_795_000_000_290i64}}}),
        ),
    ])
}

#[test]
fn a_task_card_with_empty_input_shows_the_title() {
    let bytes = empty_task();
    let screen = wide_screen(&bytes);
    let header = line_with(&screen, "▾ task");
    assert!(
        header.contains("✓ ▾ task  Survey the repository layout"),
        "{screen}"
    );
    assert!(!screen.contains("@agent:"), "{screen}");
    let md = export(&bytes, "md");
    assert!(
        md.contains("- title: `Survey the repository layout`"),
        "{md}"
    );
}

// ---- point 2: a tool left running in a turn that is over ----

/// A bash call still `running` when its message completed; a grep call
/// still `pending` in a message that did not (the session went idle).
fn left_running(idle: bool) -> Vec<u8> {
    let mut events = vec![
        session_created("Left running"),
        status("busy"),
        message("msg_c1", json!({"role": "user"})),
        text("msg_c1", "prt_c1", "Run the tests."),
        message(
            "msg_c2",
            json!({"role": "assistant", "parentID": "msg_c1",
                "time": {"created": 1_795_000_000_200i64, "completed": 1_795_000_000_900i64}}),
        ),
        part(
            "msg_c2",
            "prt_c2",
            json!({"type": "tool", "tool": "bash", "callID": "call_c2",
                "state": {"status": "running", "input": {"command": "make test"},
                    "time": {"start": 1_795_000_000_210i64}}}),
        ),
        message(
            "msg_c3",
            json!({"role": "assistant", "parentID": "msg_c1",
                "time": {"created": 1_795_000_001_000i64}}),
        ),
        part(
            "msg_c3",
            "prt_c3",
            json!({"type": "tool", "tool": "grep", "callID": "call_c3",
                "state": {"status": "pending", "input": {"pattern": "TODO"}}}),
        ),
    ];
    if idle {
        events.push(status("idle"));
    }
    lines(&events)
}

#[test]
fn a_tool_left_running_in_an_ended_turn_is_drawn_unfinished_everywhere() {
    // Its message completed: unfinished, though the session is still busy.
    let screen = wide_screen(&left_running(false));
    let bash = line_with(&screen, "make test");
    assert!(
        bash.contains("◌ ▾ bash") && bash.contains("unfinished"),
        "{screen}"
    );
    // The other message is not over and the session is busy: still pending.
    assert!(line_with(&screen, "TODO").contains("pending"), "{screen}");

    // The session went idle: both are over.
    let bytes = left_running(true);
    let screen = wide_screen(&bytes);
    for subject in ["make test", "TODO"] {
        let line = line_with(&screen, subject);
        assert!(line.contains("unfinished"), "{subject}: {screen}");
        assert!(
            !line.contains("pending") && !line.contains("running"),
            "{line}"
        );
    }
    let mut app = common::app_with(&bytes);
    app.selected = Some(SES.into());
    insta::assert_snapshot!("left_running_100x16", common::screen(&mut app, 100, 16));

    let dump = dump(&bytes);
    assert!(
        dump.contains("tool bash [running, unfinished]")
            && dump.contains("tool grep [pending, unfinished]"),
        "{dump}"
    );
    let file = temp_file("plain", &bytes);
    let plain = ocview(&["replay", file.to_str().unwrap()]);
    assert!(
        plain.contains("tool bash make test → running, unfinished")
            && plain.contains("tool grep TODO → pending, unfinished"),
        "{plain}"
    );
    let md = export(&bytes, "md");
    assert!(md.contains("**Tool `bash`** (running, unfinished)"), "{md}");
}

#[test]
fn a_replay_that_ended_leaves_its_running_tools_unfinished() {
    use ocview::source::msg::{SourceMsg, SourceState};
    let bytes = left_running(false);
    let mut app = common::app_with(&bytes);
    app.selected = Some(SES.into());
    let playing = common::screen(&mut app, 200, 50);
    assert!(line_with(&playing, "TODO").contains("pending"), "{playing}");
    app.on_source(SourceMsg::State(SourceState::Ended));
    let ended = common::screen(&mut app, 200, 50);
    let grep = line_with(&ended, "TODO");
    assert!(
        grep.contains("unfinished") && !grep.contains("pending"),
        "{ended}"
    );
}

// ---- point 2: errors of the whole session in the JSON export ----

#[test]
fn json_export_keeps_the_session_errors() {
    let error = |name: &str, text: &str| {
        event(
            "session.error",
            json!({"sessionID": SES, "error": {"name": name, "data": {"message": text}}}),
        )
    };
    let bytes = lines(&[
        session_created("Errors"),
        message("msg_d1", json!({"role": "user"})),
        text("msg_d1", "prt_d1", "Go."),
        error("APIError", "rate limited"),
        error("APIError", "rate limited"),
        error("ProviderAuthError", "bad key"),
    ]);
    let json: Value = serde_json::from_str(&export(&bytes, "json")).unwrap();
    let errors = json["errors"].as_array().expect("errors kept");
    let names: Vec<&str> = errors
        .iter()
        .map(|e| e["data"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["rate limited", "bad key"], "{json}");
    assert_eq!(errors[1]["name"], "ProviderAuthError");
}

// ---- point 3: totals that add up ----

/// An `opencode run --format json` stream of two steps with costs.
fn run_stream() -> Vec<u8> {
    let run = |kind: &str, part: Value| json!({"type": kind, "timestamp": 1_795_000_000_000i64, "sessionID": SES, "part": part});
    let step = |mid: &str, id: &str, cost: f64, input: u64, output: u64| {
        run(
            "step_finish",
            json!({"id": id, "messageID": mid, "sessionID": SES, "type": "step-finish",
                "reason": "stop", "cost": cost,
                "tokens": {"input": input, "output": output, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        )
    };
    let start = |mid: &str, id: &str| {
        run(
            "step_start",
            json!({"id": id, "messageID": mid, "sessionID": SES, "type": "step-start"}),
        )
    };
    lines(&[
        start("msg_e1", "prt_e10"),
        run(
            "text",
            json!({"id": "prt_e11", "messageID": "msg_e1", "sessionID": SES, "type": "text",
                "text": "Looking.", "time": {"start": 1, "end": 2}}),
        ),
        step("msg_e1", "prt_e12", 0.1234, 12_000, 300),
        start("msg_e2", "prt_e20"),
        run(
            "text",
            json!({"id": "prt_e21", "messageID": "msg_e2", "sessionID": SES, "type": "text",
                "text": "Done.", "time": {"start": 1, "end": 2}}),
        ),
        step("msg_e2", "prt_e22", 0.3, 8_000, 200),
    ])
}

#[test]
fn a_run_stream_shows_the_sum_of_its_steps_everywhere() {
    let bytes = run_stream();
    // $0.4234 and 20,500 tokens: the two steps, each once.
    let screen = wide_screen(&bytes);
    let first = screen.lines().next().unwrap();
    assert!(
        first.contains("Σ$0.42") && first.contains("Σ20.5k tok"),
        "header: {first}"
    );
    assert!(
        list_row(&screen).contains("opencode run") && list_row(&screen).contains("Σ$0.42"),
        "list: {screen}"
    );
    assert!(
        line_with(&screen, "cost Σ").contains("cost Σ$0.42"),
        "{screen}"
    );
    assert!(line_with(&screen, "tokens Σ").contains("tokens Σ20.5k"));

    let dump = dump(&bytes);
    assert!(dump.contains("cost Σ$0.4234 tokens Σ20500"), "{dump}");
    let md = export(&bytes, "md");
    assert!(
        md.contains("- cost: Σ$0.4234") && md.contains("- tokens: Σ20500"),
        "{md}"
    );
    let json: Value = serde_json::from_str(&export(&bytes, "json")).unwrap();
    let totals = &json["totals"];
    assert_eq!(totals["cost"].as_f64(), Some(0.4234), "{json}");
    assert_eq!(totals["tokens"]["total"], 20_500);
    assert_eq!(totals["summed"], json!({"cost": true, "tokens": true}));
}

#[test]
fn json_export_keeps_a_run_streams_error() {
    let mut bytes = run_stream();
    let error = json!({"type": "error", "timestamp": 1_795_000_000_900i64, "sessionID": SES,
        "error": {"name": "APIError", "data": {"message": "overloaded"}}});
    bytes.extend(lines(&[error]));
    let json: Value = serde_json::from_str(&export(&bytes, "json")).unwrap();
    assert_eq!(json["errors"][0]["data"]["message"], "overloaded", "{json}");
}

#[test]
fn the_same_step_again_is_counted_once() {
    // A reconnect sends a step again, and a message later reports its own
    // figures: neither adds a second time.
    let mut bytes = run_stream();
    bytes.extend(run_stream());
    let (store, _) = common::replay_bytes(&bytes);
    let t = store.session(SES).unwrap().totals();
    assert_eq!((t.token_count(), t.cost_summed), (20_500, true));
    assert!((t.cost - 0.4234).abs() < 1e-9, "{t:?}");
}

/// An `opencode export` of an older version: the session's record has no
/// cost or tokens, its assistant messages have theirs.
fn export_without_totals() -> Vec<u8> {
    let doc = json!({
        "info": {"id": SES, "title": "Older export", "directory": "/p",
            "time": {"created": 1_795_000_000_000i64, "updated": 1_795_000_000_500i64}},
        "messages": [
            {"info": {"id": "msg_f1", "sessionID": SES, "role": "user", "time": {"created": 1_795_000_000_100i64}},
             "parts": [{"id": "prt_f1", "messageID": "msg_f1", "sessionID": SES, "type": "text", "text": "Hi."}]},
            {"info": {"id": "msg_f2", "sessionID": SES, "role": "assistant", "parentID": "msg_f1",
                "cost": 0.02, "tokens": {"input": 1500, "output": 500, "reasoning": 0, "cache": {"read": 1000, "write": 0}},
                "time": {"created": 1_795_000_000_200i64, "completed": 1_795_000_000_300i64}},
             "parts": [{"id": "prt_f2", "messageID": "msg_f2", "sessionID": SES, "type": "text", "text": "Hello."}]},
            {"info": {"id": "msg_f3", "sessionID": SES, "role": "assistant", "parentID": "msg_f1",
                "cost": 0.01, "tokens": {"input": 400, "output": 100, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                "time": {"created": 1_795_000_000_310i64, "completed": 1_795_000_000_400i64}},
             "parts": [{"id": "prt_f3", "messageID": "msg_f3", "sessionID": SES, "type": "text", "text": "Anything else?"}]}
        ]
    });
    serde_json::to_vec_pretty(&doc).unwrap()
}

#[test]
fn an_export_without_totals_shows_its_messages_tokens() {
    let bytes = export_without_totals();
    let (store, _) = common::replay_bytes(&bytes);
    let session = store.session(SES).expect("the export is read");
    let t = session.totals();
    assert_eq!((t.token_count(), t.tokens_summed), (3_500, true));
    let screen = wide_screen(&bytes);
    assert!(
        screen
            .lines()
            .next()
            .unwrap()
            .contains("Σ$0.03 · Σ3.5k tok"),
        "{screen}"
    );
    assert!(line_with(&screen, "tokens Σ").contains("tokens Σ3.5k"));
    assert!(list_row(&screen).contains("Σ$0.03"), "{screen}");
    let dump = dump(&bytes);
    assert!(dump.contains("cost Σ$0.0300 tokens Σ3500"), "{dump}");
    let md = export(&bytes, "md");
    assert!(md.contains("- tokens: Σ3500"), "{md}");
}

#[test]
fn a_record_with_totals_is_shown_as_it_is_unmarked() {
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("b_edit_write_diff/event.jsonl"));
    for s in store.sessions() {
        let t = s.totals();
        assert!(!t.cost_summed && !t.tokens_summed, "{}: {t:?}", s.id());
        assert_eq!(t.token_count(), s.info.tokens.sum());
    }
}

#[test]
fn the_sum_follows_removed_messages_and_loaded_pages() {
    use ocview::model::{MessageInfo, NoObserver, Part};
    let (mut store, _) = common::replay_bytes(&run_stream());
    let removed = lines(&[event(
        "message.removed",
        json!({"sessionID": SES, "messageID": "msg_e2"}),
    )]);
    let mut reader = ocview::source::recording::replay::ReplayReader::new(&removed[..]);
    ocview::source::ingest(&mut reader, &mut store, &mut NoObserver).unwrap();
    let t = store.session(SES).unwrap().totals();
    assert_eq!(t.token_count(), 12_300, "{t:?}");
    // The server's stored page replaces what streamed: its message's own
    // figures now count, its steps no longer on top.
    let info = serde_json::value::to_raw_value(&json!({"id": "msg_e1", "sessionID": SES,
        "role": "assistant", "cost": 1.5,
        "tokens": {"input": 40, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "time": {"created": 1, "completed": 2}}))
    .unwrap();
    let step = serde_json::value::to_raw_value(&json!({"id": "prt_e12", "messageID": "msg_e1",
        "sessionID": SES, "type": "step-finish", "reason": "stop", "cost": 0.1234,
        "tokens": {"input": 12_000, "output": 300, "reasoning": 0, "cache": {"read": 0, "write": 0}}}))
    .unwrap();
    let page = vec![(
        MessageInfo::from_raw(&info).unwrap(),
        vec![Part::from_raw(&step).unwrap()],
    )];
    store.finalize_session(SES, page, None, &mut NoObserver);
    let t = store.session(SES).unwrap().totals();
    assert_eq!((t.token_count(), t.cost), (42, 1.5), "{t:?}");
}
