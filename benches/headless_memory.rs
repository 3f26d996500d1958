//! Headless memory (issue 26, point 5), as ratios measured in one run on
//! the real binary (peaks from /proc VmHWM):
//!
//! 1. `export URL` of a 28,500-message session on the real server: peak ÷
//!    the document's size (goal ≤ 3; and ≤ 100 MB);
//! 2. `attach URL --dump-when-idle` on the same session: peak above the
//!    process's start (the same mode with nothing to print) ÷ the text
//!    printed (goal ≤ 2);
//! 3. `replay FILE --instant` in the viewer (tmux) ÷ `replay FILE --dump`
//!    on the same recording (goal ≤ 1.3).
//!
//! Run with `cargo bench --bench headless_memory` (needs opencode-ai
//! 1.18.33 as the tests find it, and tmux). `OCVIEW_BENCH_MESSAGES` and
//! `OCVIEW_BENCH_MB` change the sizes.

#[path = "../tests/support/mod.rs"]
mod support;

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use support::fake_model::{FakeModel, steps};
use support::long_session::{LongSession, markdown_text};
use support::opencode::Server;
use support::tmux::{Tmux, player_position};

const SESSION: &str = "ses_dfd705bd5ffeHeadlessBench0";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// ocview with `args`, its output into `out`: (peak KiB, bytes written).
fn run(args: &[&str], out: &std::path::Path) -> (u64, u64) {
    let file = std::fs::File::create(out).unwrap();
    let r = support::peak::run(
        Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(args)
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .stdin(Stdio::null())
            .stdout(file),
    );
    assert_eq!(r.code, Some(0), "ocview {args:?}");
    (r.peak_kib, std::fs::metadata(out).unwrap().len())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn server_ratios(messages: usize, dir: &std::path::Path) {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    let url = server.url();
    let dump_args = ["attach", url.as_str(), "--dump-when-idle"];
    let (start, _) = run(&dump_args, &dir.join("empty"));
    LongSession {
        session: SESSION,
        title: "A long session to export",
        messages,
        id_tail: &|i| format!("Bench{i:09}"),
        text: &|i| markdown_text(i, 9),
    }
    .import(&server)
    .await;
    for format in ["md", "json"] {
        let (peak, size) = run(
            &["export", &url, "--format", format],
            &dir.join(format!("export.{format}")),
        );
        let size_kib = size / 1024;
        println!(
            "export {format}, {messages} messages: peak {:.1} MiB, document {:.1} MiB, peak ÷ size {:.2} (goal ≤ 3)",
            mib(peak),
            mib(size_kib),
            peak as f64 / size_kib.max(1) as f64
        );
    }
    let (peak, size) = run(&dump_args, &dir.join("dump"));
    let size_kib = size / 1024;
    println!(
        "--dump-when-idle, {messages} messages: peak {:.1} MiB, at start {:.1} MiB, text {:.1} MiB, (peak − start) ÷ text {:.2} (goal ≤ 2)",
        mib(peak),
        mib(start),
        mib(size_kib),
        peak.saturating_sub(start) as f64 / size_kib.max(1) as f64
    );
}

fn instant_ratio(mb: usize, dir: &std::path::Path) {
    let path = dir.join("long.jsonl");
    std::fs::write(&path, common::long_recording(mb << 20)).unwrap();
    let file = path.display().to_string();
    let (dump, _) = run(&["replay", &file, "--dump"], &dir.join("replay-dump"));
    let t = Tmux::start("bench-instant");
    t.line(&format!(
        "{} replay {file} --instant",
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for("the viewer", |s| s.contains("Sessions"));
    let pid = t.ocview_pid();
    let hwm = || support::proc_status::kib(Some(pid), "VmHWM").unwrap_or(0.0) as u64;
    let mut peak = 0;
    t.wait_for_secs("played to the end", 600, |s| {
        peak = peak.max(hwm());
        player_position(s).is_some_and(|(n, total)| n == total && total > 0)
    });
    std::thread::sleep(Duration::from_millis(500));
    peak = peak.max(hwm());
    t.keys(&["q"]);
    println!(
        "replay {mb} MB: --instant peak {:.1} MiB, --dump peak {:.1} MiB, --instant ÷ --dump {:.2} (goal ≤ 1.3)",
        mib(peak),
        mib(dump),
        peak as f64 / dump.max(1) as f64
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let messages = env_or("OCVIEW_BENCH_MESSAGES", 28_500);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(server_ratios(messages, dir.path()));
    instant_ratio(env_or("OCVIEW_BENCH_MB", 200), dir.path());
}
