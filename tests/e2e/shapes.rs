//! Every shape people save a session in replays like its line-delimited
//! form: a JSON array of bus events (editor plugins' recordings, compact or
//! indented), pretty-printed objects one after another (`jq .`, of bus
//! events and of `opencode run --format json` records), and an SSE capture
//! whose last frame has no blank line after it. The form is told from the
//! content and named in `--dump`'s summary. The inputs are written here.

use crate::common;

use std::path::Path;
use std::process::Command;

/// One small session: a prompt, an answer, a bash call that asked
/// permission and was allowed once.
const EVENTS: [&str; 8] = [
    r#"{"id":"evt_1","type":"session.created","properties":{"sessionID":"ses_shape","info":{"id":"ses_shape","title":"Shapes","directory":"/p","time":{"created":1795339000000,"updated":1795339000000}}}}"#,
    r#"{"id":"evt_2","type":"message.updated","properties":{"sessionID":"ses_shape","info":{"id":"msg_1","sessionID":"ses_shape","role":"user","time":{"created":1795339000100}}}}"#,
    r#"{"id":"evt_3","type":"message.part.updated","properties":{"sessionID":"ses_shape","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_shape","type":"text","text":"List the files, please."}}}"#,
    r#"{"id":"evt_4","type":"message.updated","properties":{"sessionID":"ses_shape","info":{"id":"msg_2","sessionID":"ses_shape","role":"assistant","parentID":"msg_1","time":{"created":1795339000200}}}}"#,
    r#"{"id":"evt_5","type":"message.part.updated","properties":{"sessionID":"ses_shape","part":{"id":"prt_2","messageID":"msg_2","sessionID":"ses_shape","type":"text","text":"Looking at the tree."}}}"#,
    r#"{"id":"evt_6","type":"permission.asked","properties":{"id":"per_shape","sessionID":"ses_shape","permission":"bash","patterns":["ls -la"],"metadata":{"command":"ls -la"},"always":["ls *"],"tool":{"messageID":"msg_2","callID":"call_1"}}}"#,
    r#"{"id":"evt_7","type":"permission.replied","properties":{"sessionID":"ses_shape","requestID":"per_shape","reply":"once"}}"#,
    r#"{"id":"evt_8","type":"message.part.updated","properties":{"sessionID":"ses_shape","part":{"id":"prt_3","messageID":"msg_2","sessionID":"ses_shape","type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"ls -la"},"output":"README.md\nsrc","title":"ls -la","metadata":{"exit":0},"time":{"start":1795339000300,"end":1795339000400}}}}}"#,
];

/// What every shape must show of that session.
const SHOWN: [&str; 5] = [
    "== session ses_shape \"Shapes\"",
    "| List the files, please.",
    "| Looking at the tree.",
    "tool bash [completed] \"ls -la\"",
    "permission per_shape bash ls -la session=ses_shape — replied once",
];

fn dump_of(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "--dump"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn pretty(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    serde_json::to_string_pretty(&v).unwrap()
}

fn check_shape(name: &str, bytes: &[u8], form: &str) {
    let dir = tempfile::tempdir().unwrap();
    let lines = dump_of(dir.path(), "lines.jsonl", EVENTS.join("\n").as_bytes());
    let dump = dump_of(dir.path(), name, bytes);
    for shown in SHOWN {
        assert!(dump.contains(shown), "{name}: {shown:?} missing:\n{dump}");
    }
    assert!(
        dump.contains(&format!("\nform: {form}\n")),
        "{name}:\n{dump}"
    );
    assert!(dump.contains(" 0 malformed"), "{name}:\n{dump}");
    assert_eq!(
        common::dump_state(&dump),
        common::dump_state(&lines),
        "{name} differs from its JSON lines"
    );
}

#[test]
fn a_json_array_of_events_replays_like_its_lines() {
    let compact = format!("[{}]", EVENTS.join(","));
    check_shape("events.json", compact.as_bytes(), "JSON array of events");
    // Indented, as JSON.stringify(events, null, 2) writes it.
    let items: Vec<String> = EVENTS.iter().map(|e| pretty(e)).collect();
    let indented = format!("[\n{}\n]\n", items.join(",\n"));
    check_shape("indented.json", indented.as_bytes(), "JSON array of events");
}

#[test]
fn pretty_printed_events_one_after_another_replay_like_their_lines() {
    let items: Vec<String> = EVENTS.iter().map(|e| pretty(e)).collect();
    check_shape(
        "jq.json",
        (items.join("\n") + "\n").as_bytes(),
        "pretty-printed JSON objects",
    );
}

#[test]
fn an_sse_capture_whose_last_frame_has_no_blank_line_applies_that_frame() {
    let frames: Vec<String> = EVENTS.iter().map(|e| format!("data: {e}\n")).collect();
    // Frames end with a blank line, except the last (the tool's result).
    let sse = frames.join("\n");
    assert!(!sse.ends_with("\n\n"));
    check_shape("cut.sse", sse.as_bytes(), "SSE text");
    // And when even the last newline is missing.
    check_shape("cut2.sse", sse.trim_end().as_bytes(), "SSE text");
    let (store, stats) = common::replay_bytes(sse.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(stats.repaired, 1, "the cure is counted");
    let tool = store
        .session("ses_shape")
        .unwrap()
        .message("msg_2")
        .unwrap();
    assert!(tool.part("prt_3").is_some(), "the last frame was applied");
}

/// `jq .` of an `opencode run --format json` stream.
#[test]
fn pretty_printed_run_records_replay_like_their_lines() {
    let run = [
        r#"{"type":"step_start","timestamp":1795378183954,"sessionID":"ses_run","part":{"id":"prt_a1","messageID":"msg_a","sessionID":"ses_run","type":"step-start"}}"#,
        r#"{"type":"text","timestamp":1795378184071,"sessionID":"ses_run","part":{"id":"prt_a2","messageID":"msg_a","sessionID":"ses_run","type":"text","text":"Listing the tree.","time":{"start":1795378183999,"end":1795378184056}}}"#,
        r#"{"type":"tool_use","timestamp":1795378184100,"sessionID":"ses_run","part":{"id":"prt_a3","messageID":"msg_a","sessionID":"ses_run","type":"tool","tool":"read","callID":"c1","state":{"status":"completed","input":{"filePath":"src/util.py"},"output":"def add(a, b): ...","title":"src/util.py","metadata":{},"time":{"start":1,"end":2}}}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let lines = dump_of(dir.path(), "run.ndjson", run.join("\n").as_bytes());
    let items: Vec<String> = run.iter().map(|e| pretty(e)).collect();
    let dump = dump_of(dir.path(), "run.json", (items.join("\n") + "\n").as_bytes());
    for shown in ["| Listing the tree.", "tool read [completed]"] {
        assert!(dump.contains(shown), "{shown:?} missing:\n{dump}");
    }
    assert!(
        dump.contains("\nform: pretty-printed JSON objects\n"),
        "{dump}"
    );
    assert_eq!(common::dump_state(&dump), common::dump_state(&lines));
}

/// The array is read element by element: a big one is not held whole.
#[test]
fn a_big_array_streams_its_elements() {
    let mut reader = ocview::source::ReplayReader::new(std::io::BufReader::with_capacity(
        4096,
        std::io::Cursor::new(big_array(20_000)),
    ));
    let mut n = 0;
    while let Some(record) = reader.next_record().unwrap() {
        assert!(record.item.is_ok());
        n += 1;
        if n == 3 {
            // Three records out after reading only the start of the input.
            assert!(reader.lines_read() < 10, "{}", reader.lines_read());
        }
    }
    assert_eq!(n, 20_000);
}

fn big_array(n: usize) -> Vec<u8> {
    let mut out = b"[\n".to_vec();
    for i in 0..n {
        let sep = if i + 1 < n { "," } else { "" };
        out.extend_from_slice(
            format!(
                "{{\"type\":\"session.status\",\"properties\":{{\"sessionID\":\"ses_{i}\",\"status\":{{\"type\":\"idle\"}}}}}}{sep}\n"
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(b"]\n");
    out
}

/// What `replay --dump` says on standard error for `bytes`, and whether
/// it failed.
fn refusal(name: &str, bytes: &[u8]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "--dump"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{name} was accepted");
    let stderr = String::from_utf8(out.stderr).unwrap();
    (stderr.trim_end().to_string(), path.display().to_string())
}

#[test]
fn an_array_of_wrong_objects_says_form_line_and_missing_field() {
    let (said, path) = refusal(
        "wrong.json",
        b"[\n  {\"name\": \"a\", \"value\": 1},\n  {\"name\": \"b\"}\n]\n",
    );
    assert_eq!(
        said,
        format!(
            "ocview: {path}: no events (read as JSON array of events, 4 lines: 2 records could not be applied; first at line 2: valid JSON of an unexpected shape: not an opencode record: missing field `type`)"
        )
    );
    // An element of the right kind but the wrong shape names its field, on
    // the line it is on (not "line 1" of the element).
    let (said, path) = refusal(
        "shape.json",
        b"[\n  {\n    \"type\": \"session.updated\",\n    \"properties\": {\"sessionID\": \"s\"}\n  }\n]\n",
    );
    assert_eq!(
        said,
        format!(
            "ocview: {path}: no events (read as JSON array of events, 6 lines: 1 record could not be applied; first at line 2: valid JSON of an unexpected shape: missing field `info` at line 4 column 36)"
        )
    );
}

#[test]
fn a_truncated_file_says_where_the_cut_record_starts() {
    let (said, path) = refusal(
        "cut.json",
        b"{\n  \"type\": \"session.updated\",\n  \"properties\": {\n    \"sessionID\": ",
    );
    assert_eq!(
        said,
        format!(
            "ocview: {path}: no events (read as pretty-printed JSON objects, 4 lines: 1 record could not be applied; first at line 1: truncated: the input ends inside this record)"
        )
    );
    // An array cut inside its third element: the first two apply, the cut
    // one is reported on its line and counted by reason.
    let mut cut = format!("[\n{},\n{},\n", EVENTS[0], EVENTS[1]).into_bytes();
    cut.extend_from_slice(&EVENTS[2].as_bytes()[..60]);
    let dir = tempfile::tempdir().unwrap();
    let dump = dump_of(dir.path(), "cut-array.json", &cut);
    assert!(
        dump.contains("\nline 4: malformed: truncated: the input ends inside this record\n"),
        "{dump}"
    );
    assert!(
        dump.contains("; not applied (or cured), by reason: truncated×1\n"),
        "{dump}"
    );
    assert!(dump.contains("== session ses_shape"), "{dump}");
}

/// JSON lines whose first line was cut (after its `{`, or inside an
/// object): that line alone is lost, every later line is applied (the cut
/// line made the file look pretty-printed, and the rest was swallowed).
#[test]
fn a_cut_first_line_loses_that_line_alone() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dump_of(dir.path(), "whole.jsonl", EVENTS[1..].join("\n").as_bytes());
    for (name, cut) in [
        ("brace.jsonl", "{"),
        (
            "inside.jsonl",
            r#"{"id":"evt_0","type":"session.updated","properties":{"#,
        ),
    ] {
        let bytes = format!("{cut}\n{}\n", EVENTS[1..].join("\n"));
        let dump = dump_of(dir.path(), name, bytes.as_bytes());
        assert!(dump.contains("form: JSON lines"), "{name}:\n{dump}");
        assert!(
            dump.contains("\nline 1: malformed: truncated"),
            "{name}:\n{dump}"
        );
        let applied = |d: &str| {
            d.lines()
                .find(|l| l.starts_with("summary: "))
                .and_then(|l| l.split(" events applied").next())
                .map(str::to_string)
        };
        assert_eq!(applied(&dump), applied(&whole), "{name}:\n{dump}");
        for shown in &SHOWN[1..] {
            assert!(dump.contains(shown), "{name}: {shown:?} missing:\n{dump}");
        }
    }
}

#[test]
fn a_file_that_is_not_json_says_so_by_line() {
    let (said, path) = refusal("notes.txt", b"hello\nthis is not JSON\n");
    assert_eq!(
        said,
        format!(
            "ocview: {path}: no events (read as JSON lines, 2 lines: 2 records could not be applied; first at line 1: not valid JSON: expected value at line 1 column 1)"
        )
    );
}

/// Every record left out is counted under its reason in the summary.
#[test]
fn ignored_records_are_counted_by_reason() {
    let mut lines: Vec<String> = EVENTS.iter().map(|e| e.to_string()).collect();
    lines.push("not json".into());
    lines.push(r#"{"hello":1}"#.into());
    lines.push(r#"{"type":"message.updated","properties":{"sessionID":"ses_shape"}}"#.into());
    lines.push(r#"{"payload":{"type":"sync","syncEvent":{}}}"#.into());
    lines.push(r#"{"type":"plugin.added","properties":{}}"#.into());
    let dir = tempfile::tempdir().unwrap();
    let dump = dump_of(dir.path(), "mixed.jsonl", lines.join("\n").as_bytes());
    let reasons = dump
        .lines()
        .find(|l| l.starts_with("summary: ") && l.contains("; not applied (or cured), by reason: "))
        .unwrap_or_else(|| panic!("{dump}"));
    for want in [
        "missing field `info`×1",
        "missing field `type`×1",
        "not valid JSON×1",
        "skipped: sync×1",
        "event type not shown×1",
    ] {
        assert!(reasons.contains(want), "{want:?} not in {reasons}");
    }
}

/// The status line names the form, the first bad record's line and why.
#[test]
fn the_status_line_says_why_records_were_refused() {
    use ocview::source::msg::SourceMsg;
    let input = format!("[\n{},\n  {{\"name\": \"b\"}}\n]\n", EVENTS.join(",\n"));
    let mut app = common::app_with(input.as_bytes());
    app.on_source(SourceMsg::Form {
        form: ocview::source::Format::EventArray,
        lines: 11,
    });
    let screen = common::screen(&mut app, 220, 20);
    assert!(
        screen.contains("1 bad record in JSON array of events: line 10, missing field `type`"),
        "{screen}"
    );
}
