//! A property test of the decoder and the reducer (issue 14, point 6;
//! issue 22, point 8), on stable Rust with a seeded generator: captured
//! streams, mutated at random (truncated, bytes flipped, lines dropped,
//! duplicated and swapped, values of the wrong type, invalid UTF-8, huge
//! values), go through the same path as any recording. On every case: no
//! panic, every untouched line is still decoded, nothing a person sees (the
//! viewer's screen, `--dump`, plain mode, the Markdown export) holds a
//! control character, and the memory the case costs the process (its
//! resident size, from /proc) stays within a bound of the input's size.
//!
//! And the content of every untouched line: a line the replay rejects has
//! no effect at all, so the final state equals the final state of the same
//! stream without the rejected lines. "Without" removes exactly those lines
//! and keeps every other mutation as it is: a duplicated or swapped line is
//! in both streams (its effect is not "removed", it is the input), a line
//! changed but still accepted (a repaired byte, a huge text) is in both,
//! and what differs is only what a rejected line could have leaked. The
//! state compared is the whole store as a reader could see it: the
//! `--dump` transcript, the normalised JSON export (every info and part as
//! JSON), each session's status, error, placeholder flag, compactions and
//! diff, every prompt with its resolution, the ignored counts, the errors
//! without a session and the deltas still held. A reducer that lets a
//! rejected line leak any of that is caught
//! (`the_content_check_catches_a_reducer_that_leaks_a_rejected_line`).
//!
//! A few hundred cases run in the normal suite; `OCVIEW_PROPTEST_CASES=N`
//! runs more (`OCVIEW_PROPTEST_SEED` picks another start).

use crate::common;
use crate::support::proc_status;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Mutex;

use ocview::headless::export::{self, ExportFormat};
use ocview::headless::plain::PlainPrinter;
use ocview::model::{Envelope, Event, NoObserver, Session, Store};
use ocview::source::decode::apply::apply_record;
use ocview::source::{Format, IngestStats, ProblemKind, ReplayReader};

/// The tests here measure this process's memory: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// xorshift64*: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A line of the stream and whether a mutation touched it.
struct Line {
    bytes: Vec<u8>,
    touched: bool,
}

fn mutate(rng: &mut Rng, lines: &mut Vec<Line>) {
    let i = rng.below(lines.len());
    match rng.below(9) {
        // Truncated anywhere.
        0 => {
            let cut = rng.below(lines[i].bytes.len());
            lines[i].bytes.truncate(cut);
            lines[i].touched = true;
        }
        // A byte flipped to anything (controls and invalid UTF-8 included).
        1 => {
            let at = rng.below(lines[i].bytes.len());
            if let Some(b) = lines[i].bytes.get_mut(at) {
                *b = rng.next() as u8;
                lines[i].touched = true;
            }
        }
        // Dropped.
        2 if lines.len() > 1 => {
            lines.remove(i);
        }
        // Duplicated (the copy counts as touched: it may be stale).
        3 => {
            let copy = Line {
                bytes: lines[i].bytes.clone(),
                touched: true,
            };
            lines.insert(i, copy);
        }
        // Swapped with the next line: reordered input.
        4 if i + 1 < lines.len() => lines.swap(i, i + 1),
        // A value of the wrong type.
        5 => {
            let text = String::from_utf8_lossy(&lines[i].bytes).into_owned();
            let replacement = ["null", "[]", "{}", "1e308", "\"x\"", "true", "-1"][rng.below(7)];
            let keys = [
                "\"properties\": ",
                "\"info\": ",
                "\"part\": ",
                "\"text\": ",
                "\"time\": ",
                "\"status\": ",
                "\"todos\": ",
                "\"state\": ",
            ];
            let key = keys[rng.below(keys.len())];
            if let Some(at) = text.find(key) {
                let start = at + key.len();
                // Replace the start of the value: the rest may no longer parse.
                let end = (start + 1).min(text.len());
                let mutated = format!("{}{replacement}{}", &text[..start], &text[end..]);
                lines[i].bytes = mutated.into_bytes();
                lines[i].touched = true;
            }
        }
        // Invalid UTF-8 inside a string.
        6 => {
            let at = rng.below(lines[i].bytes.len());
            let bad: &[u8] =
                [&b"\xff\xfe"[..], b"\xc3", b"\xed\xa0\x80", b"\xe2\x82"][rng.below(4)];
            lines[i].bytes.splice(at..at, bad.iter().copied());
            lines[i].touched = true;
        }
        // A huge value: a text part's text grows by a megabyte of markdown
        // and escapes.
        7 => {
            let text = String::from_utf8_lossy(&lines[i].bytes).into_owned();
            if let Some(at) = text.find("\"text\": \"") {
                let start = at + "\"text\": \"".len();
                let huge = "> - **x** \\u001b[2J `y` ".repeat(40_000);
                let mutated = format!("{}{huge}{}", &text[..start], &text[start..]);
                lines[i].bytes = mutated.into_bytes();
                lines[i].touched = true;
            }
        }
        // Escape sequences injected into a string.
        _ => {
            let text = String::from_utf8_lossy(&lines[i].bytes).into_owned();
            if let Some(at) = text.find("\": \"") {
                let start = at + 4;
                let evil = "\\u001b]0;pwned\\u0007\\u001b[31m\\u009b2J\\r";
                let mutated = format!("{}{evil}{}", &text[..start], &text[start..]);
                lines[i].bytes = mutated.into_bytes();
                lines[i].touched = true;
            }
        }
    }
}

fn controls(what: &str, text: &str) -> Option<String> {
    text.chars()
        .find(|&c| c != '\n' && c.is_control())
        .map(|c| format!("{what} holds control {:?}", c))
}

/// One case's input: the stream mutated, and how many of its lines the
/// mutations touched and left alone.
fn case_input(case: u64, streams: &[Vec<u8>]) -> (Vec<u8>, u64, u64) {
    let mut rng = Rng(case.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let source = &streams[rng.below(streams.len())];
    let mut lines: Vec<Line> = source
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| Line {
            bytes: l.to_vec(),
            touched: false,
        })
        .collect();
    for _ in 0..1 + rng.below(6) {
        mutate(&mut rng, &mut lines);
    }
    let untouched = lines.iter().filter(|l| !l.touched).count() as u64;
    // A byte flipped to a newline makes two lines of one.
    let touched = lines
        .iter()
        .filter(|l| l.touched)
        .map(|l| 1 + newlines(&l.bytes))
        .sum();
    let mut input = Vec::new();
    for l in &lines {
        input.extend_from_slice(&l.bytes);
        input.push(b'\n');
    }
    (input, touched, untouched)
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// A replay: the final store, the counts, and the format it read.
type Replay = fn(&[u8]) -> (Store, IngestStats, Option<Format>);

/// The path every recording takes (`ocview replay`).
fn replay(input: &[u8]) -> (Store, IngestStats, Option<Format>) {
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let stats = ocview::source::ingest(&mut reader, &mut store, &mut NoObserver).unwrap();
    (store, stats, reader.format())
}

/// The whole state a reader could see, as text, to compare two ways of
/// reaching it.
fn state(store: &Store) -> String {
    let mut out = common::dump_state(&ocview::headless::dump::render(
        store,
        &IngestStats::default(),
    ));
    let sessions: Vec<&Session> = store.sessions().iter().map(|s| &**s).collect();
    out += &export::render(&sessions, ExportFormat::Json, true);
    for s in &sessions {
        let _ = writeln!(
            out,
            "{} placeholder={} status={:?} error={:?} compactions={} diff={:?} dir={:?}",
            s.id(),
            s.placeholder,
            s.status,
            s.error,
            s.compactions,
            s.diff,
            s.project_directory
        );
    }
    let _ = writeln!(out, "prompts: {:?}", store.prompts());
    let _ = writeln!(out, "ignored: {:?}", store.ignored_counts());
    let _ = writeln!(out, "errors: {:?}", store.global_errors());
    let _ = writeln!(out, "held deltas: {}", store.held_delta_count());
    out
}

/// The content check. `Ok(true)` when the case had rejected lines and the
/// state equals the state without them; `Ok(false)` when there was
/// nothing to compare (no line rejected, or not read as JSON lines).
fn rejected_lines_leave_no_trace(input: &[u8], replay: Replay) -> Result<bool, String> {
    let (store, stats, format) = replay(input);
    if format != Some(Format::JsonLines) || stats.dropped_problems() > 0 {
        return Ok(false);
    }
    let rejected: HashSet<u64> = stats
        .problems()
        .iter()
        .filter(|p| p.kind == ProblemKind::Malformed)
        .map(|p| p.line)
        .collect();
    if rejected.is_empty() {
        return Ok(false);
    }
    let mut without = Vec::with_capacity(input.len());
    for (i, line) in input.split_inclusive(|&b| b == b'\n').enumerate() {
        if !rejected.contains(&(i as u64 + 1)) {
            without.extend_from_slice(line);
        }
    }
    let (reference, ref_stats, ref_format) = replay(&without);
    if ref_format != Some(Format::JsonLines) {
        return Ok(false);
    }
    if ref_stats.malformed != 0 {
        return Err(format!(
            "without the rejected lines {:?}, still malformed: {:?}",
            rejected,
            ref_stats.problems()
        ));
    }
    let (got, want) = (state(&store), state(&reference));
    if got != want {
        let at = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        let shown = |s: &str| -> String {
            let line = s.lines().nth(at).unwrap_or("(end)");
            line.chars().take(300).collect()
        };
        return Err(format!(
            "the rejected lines {rejected:?} left a trace; first difference at state line {at}:\n  with them:    {}\n  without them: {}",
            shown(&got),
            shown(&want)
        ));
    }
    Ok(true)
}

/// Memory figures of this process, in KiB.
fn kib(field: &str) -> f64 {
    proc_status::kib(None, field).unwrap_or(0.0)
}

/// Start measuring a case's peak. Memory the allocator kept from earlier
/// cases is given back first (else a case would reuse it unseen), then the
/// kernel's high-water mark is reset to the resident size now
/// (`/proc/self/clear_refs`, 5). Returns that size, and whether the reset
/// worked (else only the resident size at the end of the case is read).
fn start_peak() -> (f64, bool) {
    wait_for_highlighters_to_end();
    // SAFETY: malloc_trim only releases free memory; no pointer is involved.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    (kib("VmRSS"), reset)
}

/// An earlier case's viewer was dropped, and its highlighting thread
/// ends after the block it is on, giving its grammars back: measured
/// before that, the next case would be charged for them.
fn wait_for_highlighters_to_end() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let highlighting = || {
        std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| {
            tasks.flatten().any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() == "ocview-highlight")
            })
        })
    };
    while highlighting() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// The case's cost so far: its peak (or its resident size) over `base`.
fn used_since(base: f64, peak_resets: bool) -> f64 {
    let now = if peak_resets {
        kib("VmHWM")
    } else {
        kib("VmRSS")
    };
    now - base
}

/// What one case did: whether the content check ran, and the memory it
/// took (KiB) for its input (bytes).
struct Checked {
    compared: bool,
    used_kib: f64,
    input_len: usize,
}

/// One case, or why it failed.
fn check(case: u64, streams: &[Vec<u8>]) -> Result<Checked, String> {
    let (input, touched, untouched) = case_input(case, streams);
    let (base_kib, peak_resets) = start_peak();

    let (store, stats) = common::replay_bytes(&input);
    if stats.malformed > touched {
        return Err(format!(
            "{} malformed lines, only {touched} were touched: {:?}",
            stats.malformed,
            stats.problems()
        ));
    }
    if stats.events + stats.skipped < untouched {
        return Err(format!(
            "{} of {untouched} untouched lines decoded",
            stats.events + stats.skipped
        ));
    }
    let compared = rejected_lines_leave_no_trace(&input, replay)?;
    let dump = ocview::headless::dump::render(&store, &stats);
    if let Some(e) = controls("--dump", &dump) {
        return Err(e);
    }
    let mut printer = PlainPrinter::new(Vec::new(), false);
    common::replay_with(&input, &mut printer);
    let plain = String::from_utf8_lossy(&printer.into_inner()).into_owned();
    if let Some(e) = controls("plain mode", &plain) {
        return Err(e);
    }
    let sessions: Vec<_> = store.sessions().iter().map(|s| &**s).collect();
    let md = export::render(&sessions, ExportFormat::Markdown, true);
    if let Some(e) = controls("the Markdown export", &md) {
        return Err(e);
    }
    // The viewer, every session's turns at a small size.
    let mut app = common::app_with(&input);
    for screen in common::screens_of_every_session(&mut app, 80, 24) {
        if let Some(e) = controls("the screen", &screen) {
            return Err(e);
        }
    }
    // What the case cost the process, measured while all of it is alive:
    // its peak resident size over the size before it.
    let used = used_since(base_kib, peak_resets);
    let bound = memory_bound_kib(input.len());
    if used > bound {
        return Err(format!(
            "the case took {used:.0} KiB of resident memory for {} bytes of input (bound {bound:.0} KiB)",
            input.len()
        ));
    }
    drop(app);
    Ok(Checked {
        compared,
        used_kib: used,
        input_len: input.len(),
    })
}

/// What a case may cost, in KiB: a multiple of its input (the store, the
/// laid-out lines, the screens), plus a constant: the allocator's own slack
/// and the syntax grammars each highlighter compiles on first use (held
/// until it is idle), which do not grow with the input.
fn memory_bound_kib(input_len: usize) -> f64 {
    (MEMORY_PER_INPUT_BYTE * input_len as f64) / 1024.0 + MEMORY_SLACK_KIB
}

const MEMORY_PER_INPUT_BYTE: f64 = 64.0;
const MEMORY_SLACK_KIB: f64 = 96.0 * 1024.0;

fn streams() -> Vec<Vec<u8>> {
    common::scenarios()
        .iter()
        .map(|dir| std::fs::read(dir.join("event.jsonl")).unwrap())
        .collect()
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_streams_never_panic_lose_or_leak_lines_show_controls_or_grow_unbounded() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cases = env_u64("OCVIEW_PROPTEST_CASES", 300);
    let seed = env_u64("OCVIEW_PROPTEST_SEED", 1);
    let streams = streams();
    let mut compared = 0;
    let mut largest = (0.0, 0);
    for case in seed..seed + cases {
        let outcome = std::panic::catch_unwind(|| check(case, &streams));
        match outcome {
            Ok(Ok(checked)) => {
                compared += u64::from(checked.compared);
                if checked.used_kib > largest.0 {
                    largest = (checked.used_kib, checked.input_len);
                }
            }
            Ok(Err(why)) => panic!("case {case} (OCVIEW_PROPTEST_SEED={case}): {why}"),
            Err(_) => panic!("case {case} (OCVIEW_PROPTEST_SEED={case}) panicked"),
        }
    }
    eprintln!(
        "{compared} of {cases} cases had rejected lines and were compared by content; \
         the costliest case took {:.0} KiB for {} bytes of input",
        largest.0, largest.1
    );
    // The content check must not pass by never running.
    assert!(
        compared * 3 >= cases,
        "only {compared} of {cases} cases were compared by content"
    );
}

/// A replay whose reducer lets a rejected line leak part of its effect, as
/// a decoder that acted on the `sessionID` it had read before the record
/// failed would: the session the line names is marked compacted (or made
/// up, when unknown).
fn leaky_replay(input: &[u8]) -> (Store, IngestStats, Option<Format>) {
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let mut stats = IngestStats::default();
    while let Some(record) = reader.next_record().unwrap() {
        if record.item.is_err() {
            let raw = String::from_utf8_lossy(lines[record.line as usize - 1]);
            if let Some(at) = raw.find("ses_") {
                let id: String = raw[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let leak = Event::SessionCompacted { session_id: id };
                store.apply(Envelope::new(leak), &mut NoObserver);
            }
        }
        apply_record(record, &mut store, &mut NoObserver, &mut stats);
    }
    (store, stats, reader.format())
}

/// The content check can fail: on the same cases, every time the leaky
/// reducer's state differs from the honest one's (the leak had an effect),
/// the check says so; and it did, in most cases.
#[test]
fn the_content_check_catches_a_reducer_that_leaks_a_rejected_line() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let streams = streams();
    let (mut leaked, mut compared) = (0, 0);
    let mut example = None;
    for case in 1..=40 {
        let (input, _, _) = case_input(case, &streams);
        if !rejected_lines_leave_no_trace(&input, replay).unwrap() {
            continue; // nothing rejected: nothing to leak
        }
        compared += 1;
        let verdict = rejected_lines_leave_no_trace(&input, leaky_replay);
        if state(&replay(&input).0) != state(&leaky_replay(&input).0) {
            leaked += 1;
            let why = verdict.expect_err(&format!("case {case}: the leak was not caught"));
            example.get_or_insert(why);
        } else {
            assert_eq!(verdict, Ok(true), "case {case}: no leak, yet a failure");
        }
    }
    eprintln!(
        "{leaked} of {compared} compared cases leaked, each caught; e.g. {}",
        example.as_deref().unwrap_or("none")
    );
    assert!(
        leaked * 2 >= compared && leaked >= 5,
        "{leaked} of {compared}"
    );
}

/// The memory bound reads the process's resident size: a case that holds
/// far more than its bound (here a buffer the size of the bound plus 64
/// MiB, touched so it is resident) is seen.
#[test]
fn the_memory_bound_sees_what_the_process_holds() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let input_len = 100_000;
    let (base, peak_resets) = start_peak();
    let size = (memory_bound_kib(input_len) as usize + 64 * 1024) * 1024;
    let mut held = vec![0u8; size];
    for page in held.chunks_mut(4096) {
        page[0] = 1;
    }
    let used = used_since(base, peak_resets);
    std::hint::black_box(&held);
    drop(held);
    assert!(
        used > memory_bound_kib(input_len),
        "{used:.0} KiB measured for a {size}-byte buffer"
    );
}
