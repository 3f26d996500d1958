//! Seeking and stepping in a recording: any sequence of seeks and steps
//! lands on exactly the state a straight replay to that point gives.

mod common;

use ocview::source::IngestStats;
use ocview::source::timeline::Timeline;

fn demo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo.jsonl")
}

/// The state after the first `n` records, replayed straight.
fn straight(lines: &[&str], n: usize) -> String {
    let text: String = lines[..n].iter().map(|l| format!("{l}\n")).collect();
    let (store, _) = common::replay_bytes(text.as_bytes());
    ocview::dump::render(&store, &IngestStats::default())
}

#[test]
fn any_seeks_and_steps_land_on_the_straight_replay_state() {
    let text = std::fs::read_to_string(demo()).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut t = Timeline::open_with_spacing(&demo(), Some(97)).unwrap();
    assert_eq!(t.len(), lines.len());
    assert!(t.checkpoints() >= 5);
    assert_eq!(
        ocview::dump::render(&t.store, &IngestStats::default()),
        straight(&lines, lines.len())
    );
    // A fixed pseudo-random walk: seeks anywhere, steps both ways.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..60 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if i % 3 == 0 {
            t.step((x % 41) as i64 - 20).unwrap();
        } else {
            t.seek((x % (lines.len() as u64 + 1)) as usize).unwrap();
        }
        let at = t.position();
        assert_eq!(
            ocview::dump::render(&t.store, &IngestStats::default()),
            straight(&lines, at),
            "at {at} after move {i}"
        );
    }
    t.seek(0).unwrap();
    assert!(t.store.sessions().is_empty());
}
