//! Key to frame, as a person feels it: a key sent to a program in tmux at a
//! random moment, and the time until the pane's output (`pipe-pane`) shows
//! that key's effect. `less` is measured the same way in the same run, so
//! the figure can be read against a program everyone finds instant.

#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use super::tmux::Tmux;

/// One probe: the key sent and measured, the text its frame writes, and
/// the key that undoes it (sent after, not measured).
pub struct Probe<'a> {
    pub key: &'a str,
    pub shows: &'a [u8],
    pub undo: &'a str,
}

/// A small generator for the pauses between keys (reproducible per seed).
struct Pauses(u64);

impl Pauses {
    fn next_ms(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        low + (self.0 >> 33) % (high - low)
    }
}

fn holds(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

fn len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn written_since(p: &Path, from: u64) -> Vec<u8> {
    std::fs::read(p)
        .map(|b| b.get(from as usize..).unwrap_or_default().to_vec())
        .unwrap_or_default()
}

/// Wait (polling every ms) until the output past `from` holds `shows`.
fn until_shown(out: &Path, from: u64, shows: &[u8], limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if len(out) > from && holds(&written_since(out, from), shows) {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `n` keys at random moments (a pause of 50–400 ms before each): the time
/// from sending each to the first output holding its effect, in ms. A key
/// whose effect is not seen within 5 s counts as 5 s.
pub fn measure(t: &Tmux, out: &Path, probe: &Probe, n: usize, seed: u64) -> Vec<f64> {
    let mut pauses = Pauses(seed);
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        std::thread::sleep(Duration::from_millis(pauses.next_ms(50, 400)));
        let from = len(out);
        let sent = Instant::now();
        t.tmux(&["send-keys", "-t", t.name(), probe.key]);
        let waited = until_shown(out, from, probe.shows, Duration::from_secs(5))
            .map(|_| sent.elapsed())
            .unwrap_or(Duration::from_secs(5));
        times.push(waited.as_secs_f64() * 1000.0);
        if !probe.undo.is_empty() {
            std::thread::sleep(Duration::from_millis(30));
            let from = len(out);
            t.tmux(&["send-keys", "-t", t.name(), probe.undo]);
            let _ = until_shown(out, from, b"", Duration::from_secs(5));
        }
    }
    times
}

/// The `q`-quantile (0..=1) of `times`.
pub fn quantile(times: &[f64], q: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at]
}

/// `less` on a long file in a pane of its own: `n` keys (`j`, each a line
/// down), timed as `measure` times ocview's.
pub fn less_times(width: u16, height: u16, n: usize, seed: u64) -> Vec<f64> {
    let t = Tmux::start_sized("keys-less", width, height);
    let file = t.home().join("long.txt");
    let text: String = (0..20_000)
        .map(|i| format!("line {i} of a long file\n"))
        .collect();
    std::fs::write(&file, text).unwrap();
    let out = t.home().join("less.bytes");
    t.pipe_output_to(&out);
    t.line(&format!("less '{}'", file.display()));
    t.wait_for("less", |s| s.contains("line 3 of a long file"));
    measure(
        &t,
        &out,
        &Probe {
            key: "j",
            shows: b"of a long file",
            undo: "",
        },
        n,
        seed,
    )
}
