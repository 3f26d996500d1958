//! The writer's thread sleeps while a batch fills.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::*;
use crate::source::decode::record::{Decoded, decode};

fn event(line: &str) -> Envelope {
    match decode(line) {
        Ok(Decoded::Event(env)) => env,
        _ => panic!("not an event: {line}"),
    }
}

#[test]
fn the_writer_is_not_woken_for_each_event() {
    let dir = tempfile::tempdir().unwrap();
    let tap = spawn(
        Setting::Sqlite(dir.path().join("archive.db")),
        Origin::default(),
        Box::new(|line| eprintln!("{line}")),
    );
    tap.event(&event(
        r#"{"type":"session.updated","properties":{"info":{"id":"ses_w","title":"w","time":{"created":1,"updated":1}}}}"#,
    ));
    // The archive opened and the first batch written.
    std::thread::sleep(BATCH_WAIT * 3);
    let before = tap.shared.wakes.load(Ordering::Relaxed);
    // A stream's deltas, a few milliseconds apart, for about two batches.
    for i in 0..100 {
        tap.event(&event(&format!(
            r#"{{"type":"message.part.delta","properties":{{"sessionID":"ses_w","messageID":"msg_w","partID":"prt_w","field":"text","delta":"w{i} "}}}}"#
        )));
        std::thread::sleep(Duration::from_millis(4));
    }
    // Everything taken (waited for, not timed: a loaded machine is slow).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while tap.shared.queued.load(Ordering::Relaxed) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the queue never drained"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let woke = tap.shared.wakes.load(Ordering::Relaxed) - before;
    assert!(woke <= 12, "woke {woke} times for 100 events");
}

/// A writer that cannot keep up (here: none takes from the queue) costs
/// the loop a bounded queue: what comes past it is dropped and counted,
/// and an empty queue holds no room set aside.
#[test]
fn a_queue_nobody_takes_from_stops_at_its_bound_and_counts_the_rest() {
    let (tx, rx) = std::sync::mpsc::channel();
    let tap = Tap {
        tx: Some(tx),
        shared: Arc::new(Shared::default()),
        writer: None,
        finished: None,
    };
    let delta = event(
        r#"{"type":"message.part.delta","properties":{"sessionID":"ses_q","messageID":"msg_q","partID":"prt_q","field":"text","delta":"q "}}"#,
    );
    for _ in 0..QUEUE + 10 {
        tap.event(&delta);
    }
    assert_eq!(tap.shared.queued.load(Ordering::Relaxed), QUEUE);
    assert_eq!(tap.shared.dropped.load(Ordering::Relaxed), 10);
    assert_eq!(rx.try_iter().count(), QUEUE);
}
