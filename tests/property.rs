//! A property test of the decoder and the reducer (issue 14, point 6), on
//! stable Rust with a seeded generator: captured streams, mutated at random
//! (truncated, bytes flipped, lines dropped, duplicated and swapped, values
//! of the wrong type, invalid UTF-8, huge values), go through the same path
//! as any recording. On every case: no panic, every untouched line is still
//! decoded, nothing a person sees (the viewer's screen, `--dump`, plain
//! mode, the Markdown export) holds a control character, and what the
//! viewer lays out stays within a bound of the input's size.
//!
//! A few hundred cases run in the normal suite; `OCVIEW_PROPTEST_CASES=N`
//! runs more (`OCVIEW_PROPTEST_SEED` picks another start).

mod common;

use ocview::export::{self, ExportFormat};
use ocview::plain::PlainPrinter;

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

/// One case: returns why it failed.
fn check(case: u64, streams: &[Vec<u8>]) -> Result<(), String> {
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
    let touched = lines.len() as u64 - untouched;
    let mut input = Vec::new();
    for l in &lines {
        input.extend_from_slice(&l.bytes);
        input.push(b'\n');
    }

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
    let dump = ocview::dump::render(&store, &stats);
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
    // What the viewer laid out and cached stays within a bound of the input.
    let cached = app.cache.bytes();
    if cached > 64 * input.len() + (1 << 20) {
        return Err(format!(
            "{cached} bytes cached for {} bytes of input",
            input.len()
        ));
    }
    Ok(())
}

#[test]
fn mutated_streams_never_panic_lose_lines_leak_controls_or_grow_unbounded() {
    let cases: u64 = std::env::var("OCVIEW_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed: u64 = std::env::var("OCVIEW_PROPTEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let streams: Vec<Vec<u8>> = common::scenarios()
        .iter()
        .map(|dir| std::fs::read(dir.join("event.jsonl")).unwrap())
        .collect();
    for case in seed..seed + cases {
        let outcome = std::panic::catch_unwind(|| check(case, &streams));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(why)) => panic!("case {case} (OCVIEW_PROPTEST_SEED={case}): {why}"),
            Err(_) => panic!("case {case} (OCVIEW_PROPTEST_SEED={case}) panicked"),
        }
    }
}
