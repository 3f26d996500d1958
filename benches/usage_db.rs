//! The usage view's reads for a year (goal ≤ 1 s) on a database of 10,000
//! sessions and 1,000,000 parts over a year, with the schema opencode
//! 1.18.33 created. The database is generated once and kept under target/.
//! Smaller: OCVIEW_BENCH_SESSIONS=1000 cargo bench --bench usage_db.

#[path = "../tests/support/usage_db.rs"]
#[allow(dead_code)]
mod usage_db;

use std::path::PathBuf;
use std::time::Instant;

use ocview::source::opencode_db::Db;
use ocview::source::opencode_db::usage::{self, UsageQuery};

/// Assistant messages per session and parts per assistant message: with
/// 10,000 sessions, 1,000,000 parts.
const MESSAGES: usize = 20;
const PARTS: usize = 5;

fn main() {
    let sessions: usize = std::env::var("OCVIEW_BENCH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = target.join(format!("usage-bench-{sessions}.db"));
    // Fixed "now": the cached file stays valid; the reads use the same.
    let now_ms = 1_780_000_000_000;
    if !path.exists() {
        let start = Instant::now();
        let tmp = path.with_extension("tmp");
        usage_db::generate(&tmp, sessions, MESSAGES, PARTS, 365, now_ms, |i| {
            format!("ses_{i:08}")
        });
        std::fs::rename(&tmp, &path).unwrap();
        println!(
            "generated {} ({sessions} sessions, {} parts) in {:.1?}",
            path.display(),
            sessions * MESSAGES * PARTS,
            start.elapsed()
        );
    }
    let query = UsageQuery {
        since_ms: Some(usage::since_for_days(365, now_ms)),
        project: None,
        costliest: 50,
        tools: false,
        day_offset_ms: 0,
    };
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let db = Db::open(&path).unwrap();
        let u = db.usage(&query).unwrap();
        let took = start.elapsed().as_secs_f64();
        best = best.min(took);
        assert_eq!(u.sessions as usize, sessions);
    }
    println!(
        "usage view, a year of {sessions} sessions: {:.0} ms (goal ≤ 1000 ms)",
        best * 1000.0
    );
}
