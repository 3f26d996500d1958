//! Seeking and stepping in a recording: any sequence of seeks and steps
//! lands on exactly the state a straight replay to that point gives.

use crate::common;

use ocview::source::IngestStats;
use ocview::source::timeline::{IndexOptions, Opened, Timeline};

fn demo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo.jsonl")
}

/// The state after the first `n` records, replayed straight.
fn straight(lines: &[&str], n: usize) -> String {
    let text: String = lines[..n].iter().map(|l| format!("{l}\n")).collect();
    let (store, _) = common::replay_bytes(text.as_bytes());
    ocview::headless::dump::render(&store, &IngestStats::default())
}

#[test]
fn any_seeks_and_steps_land_on_the_straight_replay_state() {
    let text = std::fs::read_to_string(demo()).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let Opened {
        timeline: mut t,
        mut store,
        mut stats,
    } = open(97);
    assert_eq!(t.len(), lines.len());
    assert!(t.checkpoints() >= 5);
    assert_eq!(
        ocview::headless::dump::render(&store, &IngestStats::default()),
        straight(&lines, lines.len())
    );
    // A fixed pseudo-random walk: seeks anywhere, steps both ways.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..60 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let target = if i % 3 == 0 {
            (t.position() as i64 + (x % 41) as i64 - 20).max(0) as usize
        } else {
            (x % (lines.len() as u64 + 1)) as usize
        };
        t.seek(target, &mut store, &mut stats).unwrap();
        let at = t.position();
        assert_eq!(at, target.min(lines.len()));
        assert_eq!(
            ocview::headless::dump::render(&store, &IngestStats::default()),
            straight(&lines, at),
            "at {at} after move {i}"
        );
    }
    t.seek(0, &mut store, &mut stats).unwrap();
    assert!(store.sessions().is_empty());
    assert_eq!(stats.applied, 0);
}

fn open(spacing: usize) -> Opened {
    let options = IndexOptions {
        spacing: Some(spacing),
        ..Default::default()
    };
    Timeline::open(&demo(), options).unwrap()
}

#[test]
fn idle_gaps_are_capped_on_the_play_clock() {
    use ocview::source::timeline::Backing;
    let lines: Vec<String> = [0, 100, 250, 10_250, 10_300]
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#"{{"t":{t},"event":{{"type":"session.created","properties":{{"info":{{"id":"ses_{i}","title":"x"}}}}}}}}"#))
        .collect();
    let options = IndexOptions {
        max_gap: std::time::Duration::from_secs(1),
        spacing: None,
        reading_step: None,
    };
    let bytes = lines.join("\n").into_bytes();
    let t = Timeline::index(Backing::Memory(bytes.into()), options)
        .unwrap()
        .timeline;
    let times: Vec<i64> = (0..t.len()).map(|i| t.time_of(i).unwrap()).collect();
    assert_eq!(times, [0, 100, 250, 1_250, 1_300]);
    assert_eq!(t.duration_ms(), 1_300);
    assert_eq!(t.count_due_by(249), 2);
    assert_eq!(t.count_due_by(1_250), 4);
}

/// The demo at its reading pace: every new part comes at least a reading
/// step after the one before, a new turn two, and nothing else moves
/// closer together than it was recorded.
#[test]
fn the_demo_reading_pace_spaces_every_step() {
    use ocview::source::timeline::Marks;
    let step = std::time::Duration::from_millis(1200);
    let open_at = |reading_step| {
        let options = IndexOptions {
            reading_step,
            ..Default::default()
        };
        Timeline::open(&demo(), options).unwrap().timeline
    };
    let recorded = open_at(None);
    let read = open_at(Some(step));
    let mut last_step: Option<i64> = None;
    for i in 0..read.len() {
        let (a, b) = (read.time_of(i).unwrap(), recorded.time_of(i).unwrap());
        assert!(a >= b, "record {i} moved earlier");
        if i > 0 {
            let gap = a - read.time_of(i - 1).unwrap();
            let was = b - recorded.time_of(i - 1).unwrap();
            assert!(gap >= was, "record {i}: {gap} ms apart, recorded {was}");
        }
        let marks = read.marks_of(i);
        if marks.contains(Marks::PART) || marks.contains(Marks::TURN) {
            let want = if marks.contains(Marks::TURN) {
                2400
            } else {
                1200
            };
            if let Some(last) = last_step {
                assert!(
                    a - last >= want,
                    "step {i} only {} ms after the last",
                    a - last
                );
            }
            last_step = Some(a);
        }
    }
    eprintln!(
        "demo: {} s recorded, {} s at the reading pace",
        recorded.duration_ms() / 1000,
        read.duration_ms() / 1000
    );
    assert!(read.duration_ms() > 2 * recorded.duration_ms());
}

/// The Durable Stream sample plays like a recording: its `timestamp`s are
/// the play clock, its user inputs start turns, its checkpoint is a prompt,
/// and seeks land where a straight replay does.
#[test]
fn a_durable_stream_has_times_marks_and_exact_seeks() {
    use ocview::source::timeline::Marks;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/durable-stream.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut opened = index_text(&text, 7);
    let t = &opened.timeline;
    assert_eq!(t.len(), lines.len());

    let times: Vec<i64> = (0..t.len()).map(|i| t.time_of(i).unwrap()).collect();
    assert_eq!(times[0], 0);
    assert_eq!(times[1], 120, "user.input is 120 ms after the session");
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(t.duration_ms() > 0);

    let marked = |mark: Marks| -> Vec<usize> {
        (0..t.len())
            .filter(|&i| t.marks_of(i).contains(mark))
            .collect()
    };
    let kind = |i: usize| {
        lines[i]
            .split(r#""type":""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
    };
    let turns = marked(Marks::TURN);
    // A spawned agent's prompt is its child session's first turn.
    let turn_kinds: Vec<&str> = turns.iter().map(|&i| kind(i)).collect();
    assert_eq!(turn_kinds, ["user.input", "agent.spawned", "human.input"]);
    let prompts = marked(Marks::PROMPT);
    assert_eq!(
        prompts.iter().map(|&i| kind(i)).collect::<Vec<_>>(),
        ["checkpoint.requested"]
    );
    assert!(
        marked(Marks::PART).len() >= 7,
        "tool uses and steps start parts"
    );

    let targets = [lines.len() / 2, 3, lines.len(), 0, prompts[0] + 1, turns[0]];
    assert_seeks_match(&mut opened, &lines, &targets);
}

/// Records are read a megabyte at a time while walking: records that cross
/// a read's edge, one bigger than a read, and blank lines between records
/// still land every seek on the straight replay state.
#[test]
fn seeks_read_records_across_read_edges() {
    let demo = std::fs::read_to_string(demo()).unwrap();
    let mut text = String::new();
    for (i, line) in demo.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if i % 150 == 75 {
            // An event nobody needs, as big as a tool's output can be.
            let size = if i == 375 { 1_500_000 } else { 300_000 + i };
            let pad = "x".repeat(size);
            text.push_str(&format!(
                r#"{{"type":"padding.test","properties":{{"blob":"{pad}"}}}}"#
            ));
            text.push_str("\n\n");
        }
        text.push_str(line);
        text.push('\n');
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut opened = index_text(&text, 200);
    assert_eq!(opened.timeline.len(), lines.len());
    let targets = [lines.len() / 2, 70, 380, 376, lines.len(), 0, 999, 377];
    assert_seeks_match(&mut opened, &lines, &targets);
}

fn index_text(text: &str, spacing: usize) -> Opened {
    let options = IndexOptions {
        spacing: Some(spacing),
        ..Default::default()
    };
    let bytes = text.as_bytes().to_vec().into();
    Timeline::index(ocview::source::timeline::Backing::Memory(bytes), options).unwrap()
}

/// Seek to each target in turn; each lands on the straight replay state.
fn assert_seeks_match(opened: &mut Opened, lines: &[&str], targets: &[usize]) {
    for &target in targets {
        let Opened {
            timeline,
            store,
            stats,
        } = opened;
        timeline.seek(target, store, stats).unwrap();
        assert_eq!(
            ocview::headless::dump::render(store, &IngestStats::default()),
            straight(lines, target),
            "at {target}"
        );
    }
}

/// `opencode run` output has no user messages: each assistant message is a
/// turn of the turn view, and a turn mark where it starts, so turn steps
/// stop at each.
#[test]
fn run_output_marks_a_turn_where_each_answer_starts() {
    use ocview::source::timeline::Marks;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    ))
    .unwrap();
    let mut opened = index_text(&text, 3);
    let Opened {
        timeline: t,
        store,
        stats,
    } = &mut opened;
    let turns: Vec<usize> = (0..t.len())
        .filter(|&i| t.marks_of(i).contains(Marks::TURN))
        .collect();
    let shown: usize = store.sessions().iter().map(|s| s.turns().len()).sum();
    assert_eq!(turns.len(), shown);
    assert_eq!(turns, [0, 5], "each step_start of a new message");
    t.seek(0, store, stats).unwrap();
    assert_eq!(
        t.next_boundary(Marks::TURN),
        5,
        "a turn step from the start"
    );
}

/// A recording cut mid-line (a `kill -9`) says so for its last line, and a
/// line too long to keep is reported where it stood and never held.
#[test]
fn a_cut_last_line_and_an_overlong_line_are_reported_as_such() {
    let demo = std::fs::read_to_string(demo()).unwrap();
    let mut lines: Vec<&str> = demo.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.truncate(40);
    let cut = &lines[39][..lines[39].len() / 2];
    let huge = format!(
        r#"{{"type":"padding.test","properties":{{"blob":"{}"}}}}"#,
        "x".repeat(64 * 1024 * 1024)
    );
    let text = format!(
        "{}\n{huge}\n{}\n{cut}",
        lines[..20].join("\n"),
        lines[20..39].join("\n")
    );
    let opened = index_text(&text, 1000);
    assert_eq!(opened.timeline.len(), 41);
    let problems: Vec<(u64, &str)> = opened
        .stats
        .problems()
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(problems[0].0, 21);
    assert!(problems[0].1.contains("longer than"), "{problems:?}");
    assert_eq!(problems[1].0, 41);
    assert!(
        problems[1].1.starts_with("truncated last line"),
        "{problems:?}"
    );
}
