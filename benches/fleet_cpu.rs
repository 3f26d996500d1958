//! What watching costs the servers (issue 26, point 2): the CPU of eight
//! idle real `opencode serve` processes (utime + stime of each server's
//! process group, from `/proc`) over a window, (a) with one `ocview` fleet
//! watching all eight (plain `ocview`, finding them by their processes), and
//! (b) with eight `opencode attach URL` TUIs, one per server, each in a tmux
//! session of its own (they need a terminal). The servers' CPU with nothing
//! attached is measured too, for scale. Prints the ratio ocview ÷ TUIs
//! (goal ≤ 1.0) with the raw numbers, and FAIL (exit 1) when it misses.
//!
//! `OCVIEW_BENCH_SECS` sets the window (60 s by default); `OCVIEW_BENCH_SERVERS`
//! the number of servers (8). CPU heavy: run it on a quiet machine with
//! `cargo bench --bench fleet_cpu`.

#[path = "../tests/support/opencode.rs"]
#[allow(dead_code)]
mod opencode;
#[path = "common/streaming.rs"]
mod streaming;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use opencode::Server;
use streaming::{env_number, group, ticks_per_second};

/// No model is ever called: the servers only idle.
const NO_MODEL: &str = "http://127.0.0.1:9/v1";

/// CPU seconds (user + system) of every process in process group `pgid`,
/// and of the children its leader has waited for (cutime, cstime).
fn group_cpu(pgid: u32) -> f64 {
    let ticks: u64 = group(pgid)
        .iter()
        .map(|(pid, f)| {
            // f[0] is field 3: utime is field 14, stime 15, cutime 16, cstime 17.
            let own = f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0);
            let waited = if *pid == pgid {
                f.get(13).unwrap_or(&0) + f.get(14).unwrap_or(&0)
            } else {
                0
            };
            own + waited
        })
        .sum();
    ticks as f64 / ticks_per_second()
}

/// The servers' CPU seconds over `window`.
fn servers_cpu(servers: &[Server], window: Duration) -> f64 {
    let pgids: Vec<u32> = servers.iter().filter_map(Server::pid).collect();
    let total = || pgids.iter().map(|p| group_cpu(*p)).sum::<f64>();
    let before = total();
    std::thread::sleep(window);
    total() - before
}

/// A tmux server of this run's own.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new() -> Tmux {
        Tmux {
            socket: format!("ocview-fleet-cpu-{}", std::process::id()),
        }
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A detached session running `command` (through `sh -c`, exec'd so
    /// that the pane's process is the command's); its pid.
    fn session(&self, name: &str, dir: &Path, command: &str) -> u32 {
        let dir = dir.display().to_string();
        self.run(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "160",
            "-y",
            "45",
            "-c",
            &dir,
            &format!("exec {command}"),
        ]);
        self.run(&["display", "-p", "-t", name, "#{pane_pid}"])
            .trim()
            .parse()
            .expect("the pane's pid")
    }

    fn screen(&self, name: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", name])
    }

    fn kill_session(&self, name: &str) {
        self.run(&["kill-session", "-t", name]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// `K='V' …` for a shell line, from a command's environment.
fn env_prefix(c: &Command) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    c.get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, quote(v?.to_str()?))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `/proc` holding only the servers' processes and the socket tables:
/// the ocview under test watches these servers, not every opencode on the
/// machine.
fn proc_of(dir: &Path, servers: &[Server]) {
    for pid in servers.iter().filter_map(Server::pid) {
        std::os::unix::fs::symlink(format!("/proc/{pid}"), dir.join(pid.to_string())).unwrap();
    }
    std::os::unix::fs::symlink("/proc/net", dir.join("net")).unwrap();
}

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn main() {
    let window = Duration::from_secs(env_number("OCVIEW_BENCH_SECS", 60));
    let n = env_number("OCVIEW_BENCH_SERVERS", 8) as usize;
    let settle = Duration::from_secs(10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("fleet CPU: starting {n} idle opencode servers…");
    let servers: Vec<Server> = rt.block_on(async {
        let started = futures_util::future::join_all((0..n).map(|_| Server::start(NO_MODEL))).await;
        for s in &started {
            s.create_session().await;
        }
        started
    });
    let urls: Vec<String> = servers.iter().map(Server::url).collect();
    // A fresh server works for a while after it answers (plugins, the
    // project instance): wait until they idle (under 2 % of a core each
    // over 2 s), so that no phase pays for the boot.
    let booted = Instant::now();
    while booted.elapsed() < Duration::from_secs(180) {
        let cpu = servers_cpu(&servers, Duration::from_secs(2));
        if cpu < 0.02 * 2.0 * n as f64 {
            break;
        }
    }
    println!(
        "  the servers idle after {:.0} s",
        booted.elapsed().as_secs_f64()
    );
    let tmux = Tmux::new();

    // Nothing attached: the servers' own idle cost.
    let idle = servers_cpu(&servers, window);

    // (a) One ocview fleet, finding the servers by their processes.
    let proc_dir = tempfile::tempdir().unwrap();
    proc_of(proc_dir.path(), &servers);
    let ocview = PathBuf::from(env!("CARGO_BIN_EXE_ocview"));
    let line = format!(
        "env -u OPENCODE_SERVER_URL -u OPENCODE_SERVER_PASSWORD OCVIEW_DISCOVER_PROC='{}' XDG_CONFIG_HOME=/nonexistent-ocview-config {}",
        proc_dir.path().display(),
        ocview.display()
    );
    let viewer = tmux.session("ocview", proc_dir.path(), &line);
    let all_live = format!("{n} servers: {n} live");
    wait_for("ocview's fleet live", 60, || {
        tmux.screen("ocview").contains(&all_live)
    });
    std::thread::sleep(settle);
    let viewer_before = group_cpu(viewer);
    let with_ocview = servers_cpu(&servers, window);
    let viewer_cpu = group_cpu(viewer) - viewer_before;
    tmux.kill_session("ocview");
    std::thread::sleep(settle);

    // (b) One OpenCode TUI per server.
    let bin = opencode::binary();
    let mut tuis = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let c = server.command(&bin);
        let line = format!(
            "env {} '{}' attach '{}'",
            env_prefix(&c),
            bin.display(),
            server.url()
        );
        let name = format!("tui{i}");
        tuis.push(tmux.session(&name, &server.project, &line));
    }
    // A TUI takes seconds to start and draw: let every one settle.
    std::thread::sleep(settle * 2);
    let tuis_before: f64 = tuis.iter().map(|p| group_cpu(*p)).sum();
    let with_tuis = servers_cpu(&servers, window);
    let tuis_cpu = tuis.iter().map(|p| group_cpu(*p)).sum::<f64>() - tuis_before;
    let alive = tuis
        .iter()
        .filter(|p| Path::new(&format!("/proc/{p}")).exists())
        .count();
    drop(tmux);

    let secs = window.as_secs_f64();
    let pct = |cpu: f64| cpu / secs * 100.0;
    println!(
        "fleet CPU over {secs:.0} s, {n} idle servers ({}):",
        urls.join(" ")
    );
    println!(
        "  servers, nothing attached: {idle:.2} s ({:.1} % of a core)",
        pct(idle)
    );
    println!(
        "  servers, one ocview fleet watching: {with_ocview:.2} s ({:.1} %); ocview itself {viewer_cpu:.2} s",
        pct(with_ocview)
    );
    println!(
        "  servers, {n} OpenCode TUIs attached ({alive} still running at the end): {with_tuis:.2} s ({:.1} %); the TUIs themselves {tuis_cpu:.2} s",
        pct(with_tuis)
    );
    let ratio = with_ocview / with_tuis.max(f64::EPSILON);
    let verdict = if ratio <= 1.0 { "ok" } else { "FAIL" };
    println!("  server CPU, ocview fleet ÷ {n} OpenCode TUIs: {ratio:.2} (goal ≤ 1.0) {verdict}");
    drop(servers);
    if ratio > 1.0 {
        std::process::exit(1);
    }
}
