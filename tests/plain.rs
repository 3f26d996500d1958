//! Plain mode: the line-oriented transcript, as snapshots, and the binary
//! choosing it when standard output is not a terminal.

mod common;

use ocview::plain::PlainPrinter;

fn transcript(bytes: &[u8], color: bool) -> String {
    let mut printer = PlainPrinter::new(Vec::new(), color);
    common::replay_with(bytes, &mut printer);
    String::from_utf8(printer.into_inner()).unwrap()
}

#[test]
fn transcripts_of_recorded_sessions() {
    for name in [
        "a_bash_permission_once",
        "d_question",
        "e_task_subagent",
        "h_permission_reject",
    ] {
        insta::assert_snapshot!(
            name,
            transcript(&common::fixture(name, "event.jsonl"), false)
        );
    }
    let run = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    ))
    .unwrap();
    insta::assert_snapshot!("opencode_run", transcript(&run, false));
}

#[test]
fn colour_is_ours_only_and_data_stays_inert() {
    let evil = r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"hi \u001b]0;pwned\u0007 there","time":{"start":1,"end":2}}}}"#;
    let plain = transcript(evil.as_bytes(), false);
    assert!(
        !plain.contains('\u{1b}') && plain.contains("hi ␛]0;pwned␇ there"),
        "{plain}"
    );
    let coloured = transcript(evil.as_bytes(), true);
    assert!(
        coloured.contains("\u{1b}[1m== session") && !coloured.contains("\u{1b}]0;"),
        "{coloured}"
    );
}

#[test]
fn the_binary_prints_plain_when_stdout_is_a_pipe() {
    let path = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .arg("replay")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("? permission bash: ls -la") && text.contains("tool bash ls -la → completed"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "no colour in a pipe");
    assert!(text.lines().last().unwrap().starts_with("summary: "));
}
