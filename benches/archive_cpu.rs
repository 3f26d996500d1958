//! Live streaming with the archive on against off (issue 28, Performance):
//! one real `opencode serve` whose fake model streams a long answer in many
//! deltas (three words every 15 ms), watched by `ocview attach` in tmux on
//! a fresh session each time, once with `--archive PATH` (a new SQLite
//! archive: every event goes through the writer thread into the file) and
//! once with `--no-archive`. CPU is utime + stime of ocview's process group
//! from `/proc` while the answer streams and is drawn, and memory (VmRSS)
//! once it is in. Prints on ÷ off for each (goals ≤ 1.2) with the raw
//! numbers, and what the archive holds after.
//!
//! `OCVIEW_BENCH_WORDS` sets the answer's length (3,000 words: about 15 s
//! of streaming); `OCVIEW_BENCH_ROUNDS` (2) how many times each runs, the
//! two alternating. Run with `cargo bench --bench archive_cpu`.

#[path = "../tests/support/fake_model.rs"]
#[allow(dead_code)]
mod fake_model;
#[path = "../tests/support/opencode.rs"]
#[allow(dead_code)]
mod opencode;
#[path = "common/streaming.rs"]
mod streaming;
#[path = "../tests/support/tmux.rs"]
#[allow(dead_code)]
mod tmux;

use std::time::{Duration, Instant};

use fake_model::{FakeModel, Step, steps};
use opencode::Server;
use streaming::{env_number, group_cpu, group_rss_mib, long_answer};
use tmux::Tmux;

const WIDTH: u16 = 160;
const HEIGHT: u16 = 45;

/// ocview attached to a fresh session (with `archive` flags) while the
/// answer streams: its CPU seconds, the streaming's wall time, and its
/// memory (MiB) once the answer is in.
fn run(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    name: &str,
    archive: &str,
) -> (f64, f64, f64) {
    let session = rt.block_on(server.create_session());
    let t = Tmux::start_sized(name, WIDTH, HEIGHT);
    t.line(&format!(
        "TERM=xterm-256color OCVIEW_ARCHIVE= {} attach {} --session {session} {archive}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url(),
    ));
    t.wait_for("ocview, live", |s| {
        s.contains("live") && s.contains("Sessions")
    });
    let pid = t.ocview_pid();
    // Past highlighting's idle time and the writer's start.
    std::thread::sleep(Duration::from_secs(4));
    let cpu = group_cpu(pid);
    let start = Instant::now();
    rt.block_on(async {
        server.prompt(&session, "Write a long answer.").await;
        server.wait_idle(&session, 600).await;
    });
    let secs = start.elapsed().as_secs_f64();
    // The last frames, and the writer's last batch (it writes every 250 ms).
    std::thread::sleep(Duration::from_secs(2));
    let _ = t.capture();
    let cpu = group_cpu(pid) - cpu;
    let rss = group_rss_mib(pid);
    drop(t);
    (cpu, secs, rss)
}

fn main() {
    let words = env_number("OCVIEW_BENCH_WORDS", 3000) as usize;
    let rounds = env_number("OCVIEW_BENCH_ROUNDS", 2);
    let deltas = words.div_ceil(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answer = long_answer(words);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    let mut on = Vec::new();
    let mut off = Vec::new();
    let (_model, server) = rt.block_on(async {
        // Step 0 of every conversation: each fresh session gets the answer.
        let model = FakeModel::start(steps(vec![Step::text(&answer)])).await;
        let server = Server::start(&model.url()).await;
        (model, server)
    });
    println!(
        "archive_cpu: a {words}-word answer in {deltas} deltas from {}",
        server.url()
    );
    for round in 0..rounds {
        let flag = format!("--archive '{}'", archive.display());
        on.push(run(&rt, &server, &format!("arch-on-{round}"), &flag));
        off.push(run(
            &rt,
            &server,
            &format!("arch-off-{round}"),
            "--no-archive",
        ));
    }
    drop(server);
    let total = |v: &[(f64, f64, f64)]| v.iter().map(|r| r.0).sum::<f64>();
    let memory = |v: &[(f64, f64, f64)]| v.iter().map(|r| r.2).sum::<f64>();
    for (name, v) in [("archive on", &on), ("archive off", &off)] {
        for (cpu, secs, rss) in v.iter() {
            println!(
                "  {name}: {cpu:.2} s CPU over {secs:.1} s of streaming ({:.0} µs a delta), {rss:.1} MiB after",
                cpu * 1e6 / deltas as f64
            );
        }
    }
    let held = rusqlite::Connection::open(&archive)
        .and_then(|c| {
            c.query_row(
                "SELECT (SELECT count(*) FROM event_keys), (SELECT count(*) FROM parts)",
                [],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            )
        })
        .map(|(e, p)| format!("{e} events, {p} parts"))
        .unwrap_or_else(|e| format!("unreadable: {e}"));
    println!("  the archive holds {held}");
    let held_ratio = memory(&on) / memory(&off).max(f64::EPSILON);
    println!(
        "  memory after streaming, archive on ÷ off: {held_ratio:.3} (goal ≤ 1.2){}",
        if held_ratio > 1.2 { "  MISSES" } else { "" }
    );
    let ratio = total(&on) / total(&off).max(f64::EPSILON);
    println!(
        "  streaming CPU, archive on ÷ off: {ratio:.3} (goal ≤ 1.2) ratio to goal {:.2}{}",
        ratio / 1.2,
        if ratio > 1.2 { "  MISSES" } else { "" }
    );
}
