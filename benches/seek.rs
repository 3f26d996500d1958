//! Seeking in a 100 MB recording: to 50 %, then back to 10 %, each against
//! one full ingest of the file. Goal: each ≤ 0.3×. `cargo bench --bench seek`.

mod common;
use common::median;

use std::io::Write;
use std::time::Instant;

use ocview::model::{NoObserver, Store};
use ocview::source::timeline::{IndexOptions, Timeline};
use ocview::source::{ReplayReader, ingest};

const ROUNDS: usize = 5;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let size = if quick { 4 << 20 } else { 100 << 20 };
    let path = std::env::temp_dir().join(format!("ocview-seek-bench-{}.jsonl", std::process::id()));
    {
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(common::long_recording(size).as_bytes())
            .unwrap();
    }
    // Every figure is the median of ROUNDS runs: this is a shared 2-core
    // machine, and one run of anything can be twice as slow as the next.
    let mut fulls = Vec::new();
    let mut stats = Default::default();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let file =
            std::io::BufReader::with_capacity(256 * 1024, std::fs::File::open(&path).unwrap());
        let mut store = Store::new();
        stats = ingest(&mut ReplayReader::new(file), &mut store, &mut NoObserver).unwrap();
        fulls.push(t.elapsed());
    }
    let full = median(fulls);

    let t = Instant::now();
    let opened = Timeline::open(&path, IndexOptions::default()).unwrap();
    let open = t.elapsed();
    let (mut timeline, mut store, mut seek_stats) = (opened.timeline, opened.store, opened.stats);
    let n = timeline.len();
    let mut timed = |target: usize, timeline: &mut Timeline| {
        let t = Instant::now();
        timeline.seek(target, &mut store, &mut seek_stats).unwrap();
        t.elapsed()
    };
    let (mut halves, mut tenths, mut backs) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round > 0 {
            timed(n, &mut timeline);
        }
        halves.push(timed(n / 2, &mut timeline));
        tenths.push(timed(n / 10, &mut timeline));
        let at = timeline.position();
        backs.push(timed(at - 1, &mut timeline));
    }
    let (to_half, to_tenth, step_back) = (median(halves), median(tenths), median(backs));
    std::fs::remove_file(&path).ok();

    println!(
        "seek: {} MiB, {n} records, {} events applied",
        size >> 20,
        stats.applied
    );
    println!("  (medians of {ROUNDS} runs)");
    println!("  full ingest          : {full:>10.2?}");
    println!("  index + checkpoints  : {open:>10.2?} (once, when the file is opened)");
    println!(
        "  seek end → 50%       : {to_half:>10.2?}  ratio {:.3} (goal <= 0.3)",
        to_half.as_secs_f64() / full.as_secs_f64()
    );
    println!(
        "  seek 50% → 10%       : {to_tenth:>10.2?}  ratio {:.3} (goal <= 0.3)",
        to_tenth.as_secs_f64() / full.as_secs_f64()
    );
    println!(
        "  one event back       : {step_back:>10.2?}  ratio {:.3}",
        step_back.as_secs_f64() / full.as_secs_f64()
    );
}
