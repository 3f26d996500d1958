//! A recording with every kind of bad line: each is counted and reported with
//! its line number, and every good line still applies.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use ocview::source::{IngestStats, ProblemKind};

const SCENARIO: &str = "a_bash_permission_once";

fn session_event(id: &str, title_json: &str) -> String {
    format!(
        r#"{{"type":"session.updated","properties":{{"sessionID":"{id}","info":{{"id":"{id}","title":{title_json},"directory":"/p","time":{{"created":1,"updated":2}}}}}}}}"#
    )
}

/// The bad file, and the file a perfect reader would have seen instead
/// (repairs already made, unusable lines left out).
struct Pair {
    bad: Vec<u8>,
    good: Vec<u8>,
    /// (line number in `bad`, kind, a word the message must contain)
    expected: Vec<(u64, ProblemKind, &'static str)>,
}

fn build() -> Pair {
    let events =
        std::fs::read_to_string(common::fixtures_dir().join(SCENARIO).join("event.jsonl")).unwrap();
    let lines: Vec<&str> = events.lines().collect();
    let (head, tail) = lines.split_at(lines.len() / 2);
    let mut bad: Vec<Vec<u8>> = Vec::new();
    let mut good: Vec<Vec<u8>> = Vec::new();
    let mut expected = Vec::new();
    let both = |bad: &mut Vec<Vec<u8>>, good: &mut Vec<Vec<u8>>, l: &[u8]| {
        bad.push(l.to_vec());
        good.push(l.to_vec());
    };
    for l in head {
        both(&mut bad, &mut good, l.as_bytes());
    }
    // Not JSON at all, and JSON that is not an event.
    bad.push(b"{\"type\": \"session.updated\", \"properties\": {".to_vec());
    expected.push((bad.len() as u64, ProblemKind::Malformed, ""));
    bad.push(b"[1, 2, 3]".to_vec());
    expected.push((bad.len() as u64, ProblemKind::Malformed, ""));
    // Invalid UTF-8 inside a string: repaired with U+FFFD and applied.
    let mut invalid = session_event("ses_0000000000000000000000bad1", "\"caf\u{1}\"").into_bytes();
    let at = invalid.windows(4).position(|w| w == b"caf\x01").unwrap() + 3;
    invalid[at] = 0xff;
    bad.push(invalid);
    good.push(session_event("ses_0000000000000000000000bad1", "\"caf\u{FFFD}\"").into_bytes());
    expected.push((bad.len() as u64, ProblemKind::Repaired, "UTF-8"));
    // A lone surrogate escape, as JavaScript writes a string cut mid-emoji.
    bad.push(session_event("ses_0000000000000000000000bad2", r#""cut \ud83d""#).into_bytes());
    good.push(session_event("ses_0000000000000000000000bad2", "\"cut \u{FFFD}\"").into_bytes());
    expected.push((bad.len() as u64, ProblemKind::Repaired, "surrogate"));
    // Events for a session and a message nobody announced.
    let orphan_part = r#"{"type":"message.part.updated","properties":{"sessionID":"ses_0000000000000000000000ghost","part":{"id":"prt_1","messageID":"msg_ghost","sessionID":"ses_0000000000000000000000ghost","type":"text","text":"boo"}}}"#;
    both(&mut bad, &mut good, orphan_part.as_bytes());
    expected.push((bad.len() as u64, ProblemKind::Orphan, "msg_ghost"));
    // A huge but valid event: applied whole.
    let big = "x".repeat(3 << 20);
    both(
        &mut bad,
        &mut good,
        session_event("ses_0000000000000000000000big1", &format!("\"{big}\"")).as_bytes(),
    );
    // A line over the reader's cap: skipped without buffering it all.
    let mut huge = b"{\"type\":\"session.updated\",\"properties\":{\"title\":\"".to_vec();
    huge.resize(ocview::source::MAX_LINE_BYTES + 10, b'y');
    bad.push(huge);
    expected.push((bad.len() as u64, ProblemKind::Malformed, "longer than"));
    for l in tail {
        both(&mut bad, &mut good, l.as_bytes());
    }
    // An unknown event type is not a problem: it is counted as ignored.
    both(
        &mut bad,
        &mut good,
        br#"{"type":"hologram.beamed","properties":{}}"#,
    );
    let mut bad_bytes = bad.join(&b'\n');
    bad_bytes.push(b'\n');
    // A truncated last line: the writer died mid-line.
    bad_bytes.extend_from_slice(&tail[0].as_bytes()[..40]);
    expected.push((bad.len() as u64 + 1, ProblemKind::Malformed, "truncated"));
    let mut good_bytes = good.join(&b'\n');
    good_bytes.push(b'\n');
    Pair {
        bad: bad_bytes,
        good: good_bytes,
        expected,
    }
}

/// The dump without its problem report and counters: the state alone.
fn state_of(store: &ocview::model::Store) -> String {
    ocview::headless::dump::render(store, &IngestStats::default())
}

#[test]
fn every_bad_line_is_counted_with_its_line_number_and_the_rest_applies() {
    let pair = build();
    let (bad_store, stats) = common::replay_bytes(&pair.bad);
    let (good_store, good_stats) = common::replay_bytes(&pair.good);

    let got: Vec<(u64, ProblemKind)> = stats.problems().iter().map(|p| (p.line, p.kind)).collect();
    let want: Vec<(u64, ProblemKind)> = pair.expected.iter().map(|e| (e.0, e.1)).collect();
    assert_eq!(got, want, "{:#?}", stats.problems());
    for (problem, (_, _, word)) in stats.problems().iter().zip(&pair.expected) {
        assert!(
            problem.message.contains(word),
            "{problem} should mention {word:?}"
        );
    }
    assert_eq!(stats.malformed, 4);
    assert_eq!(stats.repaired, 2);
    assert_eq!(stats.orphans, 1);
    assert_eq!(stats.ignored, good_stats.ignored);
    assert_eq!(stats.applied, good_stats.applied, "every good line applied");
    assert_eq!(state_of(&bad_store), state_of(&good_store));

    let titles: Vec<&str> = bad_store
        .sessions()
        .iter()
        .map(|s| s.info.title.as_str())
        .collect();
    assert!(titles.contains(&"caf\u{FFFD}"), "{titles:?}");
    assert!(titles.contains(&"cut \u{FFFD}"));
    assert!(titles.iter().any(|t| t.len() == 3 << 20));
}

#[test]
fn the_dump_reads_stdin_and_reports_problems_without_failing() {
    let pair = build();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["replay", "-", "--dump"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&pair.bad));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("the dump is valid UTF-8");
    let summary = text.lines().last().unwrap();
    assert!(summary.starts_with("summary: "), "{summary}");
    assert!(summary.contains(" 4 malformed"), "{summary}");
    assert!(summary.contains("2 repaired"), "{summary}");
    assert!(text.contains("truncated last line"));
    assert!(
        !text.bytes().any(|b| b == 0x1b),
        "no escape reaches the output"
    );
}

/// A byte-order mark before the first line (some editors write one) is not
/// damage: the file reads as without it, streamed or indexed for the player.
#[test]
fn a_byte_order_mark_is_not_damage() {
    let plain = common::fixture("a_bash_permission_once", "event.jsonl");
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&plain);
    let (want, _) = common::replay_bytes(&plain);
    let (got, stats) = common::replay_bytes(&bom);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(state_of(&got), state_of(&want));

    use ocview::source::timeline::{Backing, IndexOptions, Timeline};
    let opened = Timeline::index(Backing::Memory(bom.into()), IndexOptions::default()).unwrap();
    assert_eq!(opened.stats.malformed, 0, "{:?}", opened.stats.problems());
    assert_eq!(state_of(&opened.store), state_of(&want));

    let export = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-export.json"
    ))
    .unwrap();
    let (want, _) = common::replay_bytes(&export);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&export);
    let (got, stats) = common::replay_bytes(&bom);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(state_of(&got), state_of(&want));
}

/// A speed outside the player's range is refused before anything starts,
/// with the range in the message.
#[test]
fn a_speed_out_of_range_is_refused_clearly() {
    for speed in ["100", "0.1", "fast"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["demo", "--speed", speed])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--speed"), "{err}");
        if speed != "fast" {
            assert!(err.contains("between 0.25 and 64"), "{err}");
        }
    }
}
