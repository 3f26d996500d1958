//! Lean beside OpenCode's own TUI (issue 26, point 6), on one real
//! `opencode serve` whose fake model streams a long answer in many deltas
//! (three words every 15 ms):
//! (a) streaming CPU: ocview attached in tmux to a fresh session while the
//!     answer streams, then `opencode attach URL --session ID` on another
//!     fresh session with the same answer; CPU is utime + stime of each
//!     one's process group from `/proc`, bytes what its pane was sent
//!     (`pipe-pane`). Prints ocview ÷ OpenCode (goal ≤ 0.11), per delta too.
//! (b) memory after opening the session: VmRSS, ocview ÷ OpenCode (goal ≤ 0.1).
//! (c) ocview's first frame: from the shell's start of it to its log's
//!     "first frame drawn".
//!
//! (d) key to frame: `?` (help) sent at random moments, idle and while the
//!     answer streams, to the frame that shows it, beside `less` in the same
//!     run (goals: p90 ≤ 50 ms idle, ≤ 100 ms streaming, idle ≤ 3× `less`).
//!     `OCVIEW_BENCH_ONLY=keys` measures only this.
//!
//! `OCVIEW_BENCH_WORDS` sets the answer's length (3,000 words: about 15 s of
//! streaming). Prints FAIL (exit 1) when a goal is missed. CPU heavy: run it
//! on a quiet machine with `cargo bench --bench lean`.

#[path = "../tests/support/fake_model.rs"]
#[allow(dead_code)]
mod fake_model;
#[path = "common/key_latency.rs"]
mod key_latency;
#[path = "../tests/support/opencode.rs"]
#[allow(dead_code)]
mod opencode;
#[path = "common/streaming.rs"]
mod streaming;
#[path = "../tests/support/tmux.rs"]
#[allow(dead_code)]
mod tmux;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use fake_model::{FakeModel, Step};
use opencode::Server;
use streaming::{env_number, group_cpu, group_rss_mib, long_answer};
use tmux::Tmux;

const WIDTH: u16 = 160;
const HEIGHT: u16 = 45;

/// `K='V' …` for a shell line, from a command's environment.
fn env_prefix(c: &Command) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    c.get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, quote(v?.to_str()?))))
        .collect::<Vec<_>>()
        .join(" ")
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Seconds since midnight (UTC) of a `HH:MM:SS.fraction` time.
fn seconds_of_day(hms: &str) -> f64 {
    let mut parts = hms.trim().split(':');
    let mut next = || parts.next().unwrap_or("0").parse::<f64>().unwrap_or(0.0);
    next() * 3600.0 + next() * 60.0 + next()
}

struct Run {
    cpu: f64,
    bytes: u64,
    rss_mib: f64,
    secs: f64,
}

/// Prompt `session` while the viewer (process group `pgid`) in `t` watches;
/// its CPU and the pane's bytes until the answer is finished and drawn.
fn measure(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    session: &str,
    t: &Tmux,
    pgid: u32,
    out: &Path,
) -> Run {
    let rss_mib = group_rss_mib(pgid);
    let (cpu, bytes) = (group_cpu(pgid), file_len(out));
    let start = Instant::now();
    rt.block_on(async {
        server.prompt(session, "Write a long answer.").await;
        server.wait_idle(session, 600).await;
    });
    let secs = start.elapsed().as_secs_f64();
    // The last frames (the finished message, the idle status).
    std::thread::sleep(Duration::from_secs(2));
    let _ = t.capture();
    Run {
        cpu: group_cpu(pgid) - cpu,
        bytes: file_len(out) - bytes,
        rss_mib,
        secs,
    }
}

/// How many keys each case sends.
const KEYS: usize = 40;

struct KeyFigures {
    idle: Vec<f64>,
    streaming: Vec<f64>,
    less: Vec<f64>,
}

impl KeyFigures {
    /// Print the figures; whether every goal is met.
    fn report(&self) -> bool {
        use key_latency::quantile;
        let line = |name: &str, t: &[f64]| {
            println!(
                "  key to frame, {name}: p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms ({} keys)",
                quantile(t, 0.5),
                quantile(t, 0.9),
                quantile(t, 1.0),
                t.len()
            )
        };
        line("ocview idle", &self.idle);
        line("ocview while an answer streams", &self.streaming);
        line("less", &self.less);
        let (idle, streaming, less) = (
            quantile(&self.idle, 0.9),
            quantile(&self.streaming, 0.9),
            quantile(&self.less, 0.9),
        );
        let ratio = idle / less.max(f64::EPSILON);
        let verdict = |ok: bool| if ok { "ok" } else { "FAIL" };
        println!(
            "  key p90 idle {idle:.1} ms (goal ≤ 50) {}; streaming {streaming:.1} ms (goal ≤ 100) {}; idle ÷ less {ratio:.2} (goal ≤ 3) {}",
            verdict(idle <= 50.0),
            verdict(streaming <= 100.0),
            verdict(ratio <= 3.0)
        );
        idle <= 50.0 && streaming <= 100.0 && ratio <= 3.0
    }
}

/// (d): `?` opens the help (its frame writes "Keys ("), escape closes it.
fn key_figures(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    session: &str,
    t: &Tmux,
    out: &Path,
) -> KeyFigures {
    let probe = key_latency::Probe {
        key: "?",
        shows: b"Keys (",
        undo: "Escape",
    };
    let idle = key_latency::measure(t, out, &probe, KEYS, 7);
    // The same keys while a fresh answer streams into the open session.
    rt.block_on(server.prompt(session, "Write a long answer."));
    std::thread::sleep(Duration::from_secs(1));
    let streaming = key_latency::measure(t, out, &probe, KEYS, 11);
    rt.block_on(server.wait_idle(session, 600));
    let (width, height) = (WIDTH, HEIGHT);
    KeyFigures {
        idle,
        streaming,
        less: key_latency::less_times(width, height, KEYS, 7),
    }
}

fn main() {
    let words = env_number("OCVIEW_BENCH_WORDS", 3000) as usize;
    let deltas = words.div_ceil(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answer = long_answer(words);
    let (_model, server) = rt.block_on(async {
        // Every turn gets the long answer (the key probe prompts again).
        let every_turn = answer.clone();
        let script: fake_model::Script = std::sync::Arc::new(move |_, _| Step::text(&every_turn));
        let model = FakeModel::start(script).await;
        let server = Server::start(&model.url()).await;
        (model, server)
    });
    let url = server.url();
    println!("lean: a {words}-word answer in {deltas} deltas from {url}");

    // (a, b, c) ocview.
    let session = rt.block_on(server.create_session());
    let t = Tmux::start_sized("lean-ocview", WIDTH, HEIGHT);
    let out = t.home().join("ocview.bytes");
    t.pipe_output_to(&out);
    let start_file = t.home().join("start");
    t.line(&format!(
        "date -u +%T.%N > '{}'; TERM=xterm-256color {} attach {url} --session {session}",
        start_file.display(),
        env!("CARGO_BIN_EXE_ocview"),
    ));
    t.wait_for("ocview, live", |s| {
        s.contains("live") && s.contains("Sessions")
    });
    let pid = t.ocview_pid();
    let first_frame_ms = std::fs::read_to_string(t.home().join("ocview/ocview.log"))
        .ok()
        .and_then(|log| {
            let line = log
                .lines()
                .find(|l| l.contains("first frame drawn"))?
                .to_string();
            let at = line.split('T').nth(1)?.split('Z').next()?.to_string();
            let started = seconds_of_day(&std::fs::read_to_string(&start_file).ok()?);
            let ms = (seconds_of_day(&at) - started) * 1000.0;
            Some(if ms < 0.0 { ms + 86_400_000.0 } else { ms })
        });
    // Past highlighting's idle time, as tests/e2e/lean_start.rs reads memory.
    std::thread::sleep(Duration::from_secs(4));
    let keys_only = std::env::var("OCVIEW_BENCH_ONLY").is_ok_and(|v| v == "keys");
    let ocview = (!keys_only).then(|| measure(&rt, &server, &session, &t, pid, &out));
    let keys = key_figures(&rt, &server, &session, &t, &out);
    drop(t);
    let keys_ok = keys.report();
    let Some(ocview) = ocview else {
        drop(server);
        std::process::exit(if keys_ok { 0 } else { 1 });
    };

    // OpenCode's own TUI on a fresh session of the same server.
    let session = rt.block_on(server.create_session());
    let t = Tmux::start_sized("lean-tui", WIDTH, HEIGHT);
    let out = t.home().join("tui.bytes");
    t.pipe_output_to(&out);
    let bin = opencode::binary();
    t.line(&format!(
        "cd '{}' && env {} '{}' attach '{url}' --session {session}",
        server.project.display(),
        env_prefix(&server.command(&bin)),
        bin.display(),
    ));
    // A TUI takes seconds to start and draw: let it settle.
    std::thread::sleep(Duration::from_secs(15));
    let tui_pid = t.ocview_pid();
    let tui = measure(&rt, &server, &session, &t, tui_pid, &out);
    drop(t);
    drop(server);

    let per = |r: &Run| (r.cpu * 1e6 / deltas as f64, r.bytes as f64 / deltas as f64);
    for (name, r) in [("ocview", &ocview), ("OpenCode TUI", &tui)] {
        let (us, b) = per(r);
        println!(
            "  {name}: {:.2} s CPU over {:.1} s of streaming ({us:.0} µs a delta), {} bytes to the terminal ({b:.0} a delta); {:.1} MiB after opening",
            r.cpu, r.secs, r.bytes, r.rss_mib
        );
    }
    let cpu_ratio = ocview.cpu / tui.cpu.max(f64::EPSILON);
    let rss_ratio = ocview.rss_mib / tui.rss_mib.max(f64::EPSILON);
    let verdict = |ok: bool| if ok { "ok" } else { "FAIL" };
    println!(
        "  streaming CPU, ocview ÷ OpenCode: {cpu_ratio:.3} (goal ≤ 0.11) {}",
        verdict(cpu_ratio <= 0.11)
    );
    println!(
        "  bytes written, ocview ÷ OpenCode: {:.3}",
        ocview.bytes as f64 / (tui.bytes as f64).max(1.0)
    );
    println!(
        "  memory after opening, ocview ÷ OpenCode: {rss_ratio:.3} (goal ≤ 0.1) {}",
        verdict(rss_ratio <= 0.1)
    );
    match first_frame_ms {
        Some(ms) => println!("  ocview's first frame: {ms:.1} ms"),
        None => println!("  ocview's first frame: not found in its log"),
    }
    if cpu_ratio > 0.11 || rss_ratio > 0.1 || !keys_ok {
        std::process::exit(1);
    }
}
