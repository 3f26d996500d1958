//! Replay ingest speed against a plain `serde_json::Value` parse.
//!
//! Prints throughput for both over the same lines and their ratio
//! (ours / Value). The goal is a ratio of at least 1.0: typed parsing with
//! borrowed fields plus applying to the store should not cost more than
//! building a generic JSON tree. Run with `cargo bench --bench ingest`.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use ocview::model::{NoObserver, Store};
use ocview::source::{ReplayReader, ingest};

const TARGET_BYTES: usize = 32 << 20;
const ROUNDS: usize = 9;

fn best_of(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn mib_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / d.as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would too, and a
    // quick run there is enough to prove it still works.
    let quick = std::env::args().any(|a| a == "--quick");
    let target = if quick { 1 << 20 } else { TARGET_BYTES };
    let input = common::long_recording(target);
    let lines = input.lines().count();

    // `--profile` runs only our side, for `perf record`.
    let profile = std::env::args().any(|a| a == "--profile");
    let value = best_of(if profile { 0 } else { ROUNDS }, || {
        for line in input.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            black_box(v);
        }
    });
    let mut stats = None;
    let ours = best_of(ROUNDS, || {
        let mut store = Store::new();
        let mut reader = ReplayReader::new(input.as_bytes());
        let s = ingest(&mut reader, &mut store, &mut NoObserver).unwrap();
        black_box(&store);
        stats = Some(s);
    });
    let stats = stats.unwrap();
    assert_eq!(stats.malformed, 0, "the bench input must be clean");

    let (v, o) = (mib_per_s(input.len(), value), mib_per_s(input.len(), ours));
    println!(
        "ingest: {} MiB, {lines} lines, {} events applied",
        input.len() >> 20,
        stats.applied
    );
    println!("  serde_json::Value parse : {v:8.1} MiB/s ({value:?})");
    println!("  ocview parse + apply    : {o:8.1} MiB/s ({ours:?})");
    println!("  ratio (ocview / Value)  : {:.2} (goal >= 1.00)", o / v);
}
