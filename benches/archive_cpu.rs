//! Live streaming with the archive on against off (issue 28, Performance):
//! one real `opencode serve` whose fake model streams a long answer in many
//! deltas (three words every 15 ms), watched by `ocview attach` in tmux on
//! a fresh session each time, once with `--archive PATH` (a new SQLite
//! archive: every event goes through the writer thread into the file) and
//! once with `--no-archive`. CPU is utime + stime of ocview's process group
//! from `/proc` while the answer streams and is drawn. Prints on ÷ off
//! (goal ≤ 1.2) with the raw numbers, and what the archive holds after.
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
#[path = "../tests/support/tmux.rs"]
#[allow(dead_code)]
mod tmux;

use std::time::{Duration, Instant};

use fake_model::{FakeModel, Step, steps};
use opencode::Server;
use tmux::Tmux;

const WIDTH: u16 = 160;
const HEIGHT: u16 = 45;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A long Markdown answer: paragraphs of prose with some emphasis and code.
fn long_answer(words: usize) -> String {
    const WORDS: [&str; 16] = [
        "the", "server", "streams", "each", "answer", "in", "small", "pieces,", "and", "a",
        "viewer", "draws", "them", "as", "they", "arrive;",
    ];
    let mut out = String::new();
    for i in 0..words {
        let w = WORDS[(i * 7 + i / 16) % WORDS.len()];
        match i % 53 {
            10 => out.push_str(&format!("**{w}** ")),
            30 => out.push_str(&format!("`{w}` ")),
            52 => out.push_str(&format!("{w}.\n\n")),
            _ => {
                out.push_str(w);
                out.push(' ');
            }
        }
    }
    out
}

/// Clock ticks a second, as `/proc/PID/stat` counts them.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// The processes of process group `pgid`: (pid, its stat fields from 3 on).
fn group(pgid: u32) -> Vec<(u32, Vec<u64>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces: the fields start after its `)`.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        // rest[0] is field 3 (state, not a number): kept as 0.
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        // pgrp is field 5.
        if f.get(2) == Some(&(pgid as u64)) {
            out.push((pid, f));
        }
    }
    out
}

/// CPU seconds (user + system, fields 14 and 15) of a process group.
fn group_cpu(pgid: u32) -> f64 {
    let ticks: u64 = group(pgid)
        .iter()
        .map(|(_, f)| f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0))
        .sum();
    ticks as f64 / ticks_per_second()
}

#[allow(dead_code)]
/// VmRSS of a process group, MiB.
fn group_rss_mib(pgid: u32) -> f64 {
    group(pgid)
        .iter()
        .filter_map(|(pid, _)| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .sum::<f64>()
        / 1024.0
}

/// ocview attached to a fresh session (with `archive` flags) while the
/// answer streams: its CPU seconds and the streaming's wall time.
fn run(rt: &tokio::runtime::Runtime, server: &Server, name: &str, archive: &str) -> (f64, f64) {
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
    drop(t);
    (cpu, secs)
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
    let total = |v: &[(f64, f64)]| v.iter().map(|r| r.0).sum::<f64>();
    for (name, v) in [("archive on", &on), ("archive off", &off)] {
        for (cpu, secs) in v.iter() {
            println!(
                "  {name}: {cpu:.2} s CPU over {secs:.1} s of streaming ({:.0} µs a delta)",
                cpu * 1e6 / deltas as f64
            );
        }
    }
    let held = rusqlite::Connection::open(&archive)
        .and_then(|c| {
            c.query_row(
                "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM parts)",
                [],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            )
        })
        .map(|(e, p)| format!("{e} events, {p} parts"))
        .unwrap_or_else(|e| format!("unreadable: {e}"));
    println!("  the archive holds {held}");
    let ratio = total(&on) / total(&off).max(f64::EPSILON);
    println!(
        "  streaming CPU, archive on ÷ off: {ratio:.3} (goal ≤ 1.2) ratio to goal {:.2}{}",
        ratio / 1.2,
        if ratio > 1.2 { "  MISSES" } else { "" }
    );
}
