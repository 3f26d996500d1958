//! What ocview receives live, on its way into the archive: a part growing
//! by deltas has its row (and its index document) written when it stops
//! changing, not at every batch, while every delta reaches the event log
//! with its batch; quitting mid-stream still writes the part's latest
//! state.

use std::time::{Duration, Instant};

use ocview::archive::collect::Collector;
use ocview::archive::{Origin, Query, Setting, writer};
use ocview::model::Envelope;
use ocview::source::decode::record::{Decoded, decode};

fn event(line: &str) -> Envelope {
    match decode(line) {
        Ok(Decoded::Event(env)) => env,
        _ => panic!("not an event: {line}"),
    }
}

fn origin() -> Origin {
    Origin {
        server: Some("http://127.0.0.1:4096".into()),
        host: "testhost".into(),
        file: None,
    }
}

const START: [&str; 3] = [
    r#"{"type":"session.updated","properties":{"info":{"id":"ses_live","title":"Streaming","directory":"/work/live","time":{"created":1700000000000,"updated":1700000000000}}}}"#,
    r#"{"type":"message.updated","properties":{"info":{"id":"msg_live","sessionID":"ses_live","role":"assistant","agent":"build","providerID":"p","modelID":"m","time":{"created":1700000000000}}}}"#,
    r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_live","messageID":"msg_live","sessionID":"ses_live","type":"text","text":"","time":{"start":1700000000000}}}}"#,
];

fn delta(word: &str) -> Envelope {
    event(&format!(
        r#"{{"type":"message.part.delta","properties":{{"sessionID":"ses_live","messageID":"msg_live","partID":"prt_live","field":"text","delta":"{word} "}}}}"#
    ))
}

fn part_text(batch: &ocview::archive::rows::Batch) -> Option<&str> {
    batch
        .parts
        .iter()
        .find(|p| p.id == "prt_live")
        .map(|p| p.text.as_str())
}

#[test]
fn a_streaming_parts_row_waits_until_it_stops_changing() {
    let mut c = Collector::live(origin());
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    for line in START {
        c.envelope(event(line));
    }
    let first = c.take_due(at(0));
    assert_eq!(
        part_text(&first),
        Some(""),
        "the new part is written at once"
    );
    // Batches every 250 ms while it streams: each holds its deltas, none
    // rewrites the part.
    let mut ms = 0;
    for i in 0..16 {
        ms += 250;
        c.envelope(delta(&format!("alpha{i}")));
        c.envelope(delta(&format!("beta{i}")));
        let batch = c.take_due(at(ms));
        assert_eq!(batch.events.len(), 2, "batch at {ms} ms");
        assert_eq!(part_text(&batch), None, "rewritten at {ms} ms");
        assert!(c.next_due().is_some());
    }
    // 5 s after it started waiting (at 250 ms), its row is written with
    // all it holds, even with no new delta.
    assert_eq!(c.next_due(), Some(at(250 + 5000)));
    let batch = c.take_due(at(5250));
    let text = part_text(&batch).expect("written after 5 s");
    assert!(text.starts_with("alpha0 beta0 ") && text.ends_with("beta15 "));
    assert_eq!(c.next_due(), None);
    // Its final update (the full text, as opencode sends when it ends) is
    // written with its batch.
    c.envelope(delta("gamma"));
    assert_eq!(part_text(&c.take_due(at(5500))), None);
    c.envelope(event(
        r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_live","messageID":"msg_live","sessionID":"ses_live","type":"text","text":"the whole answer","time":{"start":1700000000000,"end":1700000009000}}}}"#,
    ));
    assert_eq!(part_text(&c.take_due(at(5750))), Some("the whole answer"));
    assert_eq!(c.next_due(), None, "nothing waits once it is written");
}

#[test]
fn a_streaming_part_is_written_when_its_message_or_session_settles() {
    for settles in [
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_live","sessionID":"ses_live","role":"assistant","agent":"build","providerID":"p","modelID":"m","time":{"created":1700000000000,"completed":1700000005000}}}}"#,
        r#"{"type":"session.idle","properties":{"sessionID":"ses_live"}}"#,
        r#"{"type":"session.status","properties":{"sessionID":"ses_live","status":{"type":"idle"}}}"#,
    ] {
        let mut c = Collector::live(origin());
        let t0 = Instant::now();
        for line in START {
            c.envelope(event(line));
        }
        c.take_due(t0);
        c.envelope(delta("streamed"));
        assert_eq!(
            part_text(&c.take_due(t0 + Duration::from_millis(250))),
            None
        );
        c.envelope(event(settles));
        let batch = c.take_due(t0 + Duration::from_millis(500));
        assert_eq!(part_text(&batch), Some("streamed "), "after {settles}");
    }
}

#[test]
fn an_import_writes_a_streamed_part_at_every_take() {
    // Files are imported with checkpoints: a row must not wait there.
    let mut c = Collector::new(origin());
    for line in START {
        c.envelope(event(line));
    }
    c.take();
    c.envelope(delta("imported"));
    assert_eq!(part_text(&c.take()), Some("imported "));
}

#[test]
fn quitting_mid_stream_writes_the_streaming_parts_latest_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let tap = writer::spawn(
        Setting::Sqlite(path.clone()),
        origin(),
        Box::new(|line| eprintln!("{line}")),
    );
    for line in START {
        tap.event(&event(line));
    }
    // Past the first batch, so the part's row exists before it streams.
    std::thread::sleep(Duration::from_millis(600));
    for i in 0..50 {
        tap.event(&delta(&format!("word{i}")));
    }
    // Quit before the part's row was due.
    drop(tap);
    let mut archive = Setting::Sqlite(path).open().unwrap().unwrap();
    let snapshot = archive.snapshot("ses_live").unwrap().join("\n");
    assert!(
        snapshot.contains("word0 word1 ") && snapshot.contains("word49 "),
        "{snapshot}"
    );
    let hits = archive.search(&Query::new("word49")).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(archive.events("ses_live").unwrap().len(), 53);
}

/// A page loaded over REST: its finished messages are written, then let go
/// of (the viewer holds the session; the writer holding a second copy
/// doubled ocview's memory after `g` on a long session). The message still
/// streaming stays, and a later event for a let-go message is still kept.
#[test]
fn a_loaded_pages_finished_messages_are_written_then_let_go() {
    use ocview::model::{MessageInfo, Part};
    let raw = |s: &str| serde_json::value::RawValue::from_string(s.to_string()).unwrap();
    let info = |id: &str, role: &str, completed: &str| {
        MessageInfo::from_raw(&raw(&format!(
            r#"{{"id":"{id}","sessionID":"ses_live","role":"{role}","time":{{"created":1700000000000{completed}}}}}"#
        )))
        .unwrap()
    };
    let part = |id: &str, message: &str, text: &str| {
        Part::from_raw(&raw(&format!(
            r#"{{"id":"{id}","messageID":"{message}","sessionID":"ses_live","type":"text","text":"{text}"}}"#
        )))
        .unwrap()
    };
    let mut c = Collector::live(origin());
    let t0 = Instant::now();
    c.envelope(event(START[0]));
    c.loaded(vec![
        (
            info("msg_a", "user", ""),
            vec![part("prt_a", "msg_a", "asked")],
        ),
        (
            info("msg_b", "assistant", r#","completed":1700000001000"#),
            vec![part("prt_b", "msg_b", "answered")],
        ),
        (
            info("msg_c", "assistant", ""),
            vec![part("prt_c", "msg_c", "still")],
        ),
    ]);
    let batch = c.take_due(t0);
    let mut messages: Vec<&str> = batch.messages.iter().map(|m| m.id.as_str()).collect();
    messages.sort();
    assert_eq!(messages, ["msg_a", "msg_b", "msg_c"]);
    assert_eq!(batch.parts.len(), 3);
    let held: Vec<&str> = c
        .store
        .session("ses_live")
        .unwrap()
        .messages
        .iter()
        .map(|m| m.info.id.as_str())
        .collect();
    assert_eq!(held, ["msg_c"], "only the unfinished message is held");
    // A let-go message's part updated later is still written.
    c.envelope(event(
        r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_b","messageID":"msg_b","sessionID":"ses_live","type":"text","text":"answered again"}}}"#,
    ));
    let batch = c.take_due(t0 + Duration::from_millis(250));
    let again = batch
        .parts
        .iter()
        .find(|p| p.id == "prt_b")
        .expect("written");
    assert_eq!(again.text, "answered again");
}
