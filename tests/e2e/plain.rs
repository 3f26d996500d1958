//! Plain mode: the line-oriented transcript, as snapshots, and the binary
//! choosing it when standard output is not a terminal.

use crate::common;

use ocview::headless::plain::PlainPrinter;

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

/// `opencode run --format json … | ocview replay -`: each line is printed
/// when it arrives, not when the pipe closes.
#[test]
fn plain_mode_prints_a_pipe_line_by_line_as_it_arrives() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    let run = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    ))
    .unwrap();
    let lines: Vec<&str> = run.lines().collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "-", "--plain"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let mut printed = Vec::new();
    let wait_for = |what: &str, printed: &mut Vec<String>| {
        while !printed.iter().any(|l| l.contains(what)) {
            match rx.recv_timeout(Duration::from_secs(15)) {
                Ok(line) => printed.push(line),
                Err(e) => panic!("no {what:?} ({e}); printed so far: {printed:#?}"),
            }
        }
    };

    let mut stdin = child.stdin.take().unwrap();
    for line in &lines[..4] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    wait_for("tool read src/util.py", &mut printed);
    assert!(
        !printed.iter().any(|l| l.contains("It defines add")),
        "the second step was not sent yet: {printed:#?}"
    );

    for line in &lines[4..] {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    wait_for("summary: ", &mut printed);
    assert!(
        printed.iter().any(|l| l == "text: It defines add(a, b)."),
        "{printed:#?}"
    );
    assert!(child.wait().unwrap().success());
}

/// A todo list is printed once per `todowrite` call, not again for the card
/// ocview materialises from it.
#[test]
fn plain_mode_prints_each_todo_update_once() {
    let bytes = common::fixture("c_todowrite", "event.jsonl");
    let text = transcript(&bytes, false);
    let (store, _) = common::replay_bytes(&bytes);
    let calls = common::tool_calls(&store, "todowrite");
    assert!(calls > 0);
    assert_eq!(text.matches("tool todowrite").count(), calls, "{text}");
}

/// Plain mode prints as fast as it reads, unless a speed is given: then at
/// the recorded pace, idle gaps capped (2 s by default).
#[test]
fn plain_mode_keeps_the_recorded_pace_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let line = |t: u64, id: &str| {
        format!(
            r#"{{"t":{t},"event":{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"{id}"}}}}}}}}"#
        )
    };
    std::fs::write(
        &path,
        format!("{}\n{}\n", line(0, "ses_b"), line(60_000, "ses_a")),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .arg("replay")
            .arg(&path)
            .arg("--plain")
            .args(extra)
            .env("XDG_CONFIG_HOME", dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("summary: 2 events"));
        started.elapsed()
    };
    let paced = run(&["--speed", "2"]);
    assert!(
        paced >= std::time::Duration::from_millis(950),
        "a minute's gap capped to 2 s, at 2×: {paced:?}"
    );
    assert!(paced < std::time::Duration::from_secs(30), "{paced:?}");
    let at_once = run(&[]);
    assert!(at_once < paced, "{at_once:?} vs {paced:?}");
}
