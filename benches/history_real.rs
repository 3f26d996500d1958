//! opencode's database read with no server, against the real opencode
//! 1.18.33 (issue 27's last two bench goals), the real binary in tmux:
//!
//! 1. memory: the same 5,700-message session (`opencode import`ed into a
//!    real `opencode serve`) (b) attached live (`ocview attach URL
//!    --session ID`) and (a) opened from the server's own database with the
//!    server stopped (`ocview history DB`, the row opened with Enter): the
//!    viewer's VmRSS once the last message is on screen, both and the ratio
//!    a ÷ b (goal ≤ 2);
//! 2. `opencode import` of a 5,700-message session into a database (a)
//!    alone and (b) while `ocview history DB` follows that database,
//!    rounds alternating, medians, and the ratio b ÷ a (goal ≤ 1.1).
//!
//! 3. the archive's cost in memory (issue 36, point 7), live on the same
//!    server: a 5,700-message session opened with `ocview attach --session`
//!    with a fresh archive, without one, and in OpenCode's own TUI
//!    (`opencode attach --session`, its process group); then `g` on a
//!    28,500-message session (every page loaded) with and without the
//!    archive. Goals: ocview with its archive ÷ OpenCode's TUI ≤ 0.1, on ÷
//!    off ≤ 1.2 for both, ≤ 150 MB after `g`.
//!
//! Run with `cargo bench --bench history_real` (needs opencode-ai 1.18.33
//! as the tests find it, and tmux). `OCVIEW_BENCH_MESSAGES=N` for another
//! size, `OCVIEW_BENCH_ROUNDS=R` import rounds of each kind,
//! `OCVIEW_BENCH_ONLY=memory|import|archive` for one of the three
//! (`OCVIEW_BENCH_LONG=N` for the long session's size).

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::long_session::LongSession;
use support::opencode::{Server, binary};
use support::tmux::Tmux;

#[path = "common/archive_memory.rs"]
mod archive_memory;
#[path = "common/streaming.rs"]
mod streaming;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn text(i: usize) -> String {
    if i.is_multiple_of(2) {
        format!("Question {i}: and then?")
    } else {
        format!(
            "Answer {i}: step {i} is done.\n\nNext comes step {}.",
            i + 1
        )
    }
}

/// The server's own database file (`opencode.db`, or a channel's).
fn server_db(server: &Server) -> PathBuf {
    let dir = server.home.join("data/opencode");
    std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("opencode") && name.ends_with(".db")
        })
        .unwrap_or_else(|| panic!("no database in {}", dir.display()))
}

/// In a history list: the selection moved down to the row holding `title`,
/// then opened; when Enter was pressed.
fn open_row(t: &Tmux, title: &str) -> Instant {
    let selected = |s: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with('›'))
            .unwrap_or("")
            .to_string()
    };
    // The list settles first (its first poll, a group folded by then).
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["g"]);
    t.wait_for("a row selected", |s| !selected(s).is_empty());
    if t.capture().contains("space unfolds it") {
        t.keys(&["Space"]);
        t.wait_for("the group unfolded", |s| s.contains(title));
    }
    for _ in 0..10 {
        let row = selected(&t.capture());
        if row.contains(title) {
            let pressed = Instant::now();
            t.keys(&["Enter"]);
            return pressed;
        }
        t.keys(&["j"]);
        t.wait_for("the selection moved", |s| selected(s) != row);
    }
    panic!("no row {title:?}:\n{}", t.capture());
}

/// The viewer's resident memory (and peak) once `last` is on screen and a
/// second has passed for what was still arriving; MiB.
fn settled_rss(t: &Tmux, last: &str, asked: Instant) -> (f64, f64) {
    t.wait_for_secs("the last message on screen", 120, |s| s.contains(last));
    let took = asked.elapsed();
    std::thread::sleep(Duration::from_secs(1));
    let pid = t.ocview_pid();
    let kib = |f| support::proc_status::kib(Some(pid), f).unwrap_or(0.0);
    println!(
        "    (the last message on screen {:.0} ms after it was asked for, as tmux saw it)",
        took.as_secs_f64() * 1e3
    );
    (kib("VmRSS") / 1024.0, kib("VmHWM") / 1024.0)
}

async fn memory(messages: usize) {
    let session = "ses_dfd705bd5ffeHistoryMemory0";
    let title = "A long imported session";
    let mut server = Server::start("http://127.0.0.1:9/v1").await;
    let t0 = Instant::now();
    LongSession {
        session,
        title,
        messages,
        id_tail: &|i| format!("Mem{i:011}"),
        text: &text,
    }
    .import(&server)
    .await;
    println!(
        "memory: a {messages}-message session imported in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    // The last message's own words (user messages at even indexes).
    let last = text(messages - 1);
    let last = last.split(':').next().unwrap().to_string() + ":";

    // (b) live: attached to the server holding it.
    let t = Tmux::start_sized("hist-mem-live", 200, 50);
    let asked = Instant::now();
    t.line(&format!(
        "{} attach {} --session {session}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    let (live, live_hwm) = settled_rss(&t, &last, asked);
    t.keys(&["q"]);
    drop(t);
    let db = server_db(&server);
    server.kill();

    // (a) the server's database, no server.
    let t = Tmux::start_sized("hist-mem-db", 200, 50);
    t.line(&format!(
        "{} history {}",
        env!("CARGO_BIN_EXE_ocview"),
        db.display()
    ));
    t.wait_for("the history listed", |s| s.contains(title));
    let asked = open_row(&t, title);
    let (history, history_hwm) = settled_rss(&t, &last, asked);
    t.keys(&["q"]);
    println!(
        "  attached live: VmRSS {live:.1} MiB (peak {live_hwm:.1}); from the database, no server: VmRSS {history:.1} MiB (peak {history_hwm:.1})"
    );
    println!(
        "memory of the {messages}-message session, database ÷ live attach: {:.2} (goal ≤ 2)",
        history / live
    );
}

/// One timed `opencode import` of `file` with the server's environment.
fn import(server: &Server, file: &Path) -> Duration {
    let start = Instant::now();
    let out = server
        .command(&binary())
        .args(["import", &file.display().to_string()])
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "opencode import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn import_under_follow(messages: usize, rounds: usize) {
    // The server only makes the database (its migrations done) and names
    // the project; the imports run with no server, as a person's would.
    let mut server = Server::start("http://127.0.0.1:9/v1").await;
    let project = server.get("/project/current").await;
    let project = project["id"].as_str().unwrap().to_string();
    let directory = server.project.display().to_string();
    let db = server_db(&server);
    server.kill();
    let files: Vec<PathBuf> = (0..rounds * 2)
        .map(|r| {
            let session = format!("ses_dfd705bd5ffeImportRound{r:03}");
            let tail = move |i: usize| format!("R{r:03}{i:010}");
            let (doc, _) = LongSession {
                session: &session,
                title: &format!("Imported in round {r}"),
                messages,
                id_tail: &tail,
                text: &text,
            }
            .document(&project, &directory);
            let file = server.home.join(format!("round-{r}.json"));
            std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
            file
        })
        .collect();
    let mut alone = Vec::new();
    let mut followed = Vec::new();
    for r in 0..rounds {
        // Which comes first alternates, so a growing file weighs on both.
        let order = if r.is_multiple_of(2) {
            [false, true]
        } else {
            [true, false]
        };
        for (k, follow) in order.into_iter().enumerate() {
            let file = &files[r * 2 + k];
            if follow {
                let t = Tmux::start_sized("hist-follow", 120, 30);
                t.line(&format!(
                    "{} history {}",
                    env!("CARGO_BIN_EXE_ocview"),
                    db.display()
                ));
                t.wait_for("the history listed", |s| s.contains("history"));
                std::thread::sleep(Duration::from_millis(500));
                let took = import(&server, file);
                // The import was followed: its session is listed.
                t.wait_for_secs("the imported session listed", 10, |s| {
                    s.contains(&format!("Imported in round {}", r * 2 + k))
                });
                t.keys(&["q"]);
                println!(
                    "  round {r}: import while ocview follows: {:.0} ms",
                    took.as_secs_f64() * 1e3
                );
                followed.push(took);
            } else {
                let took = import(&server, file);
                println!(
                    "  round {r}: import alone: {:.0} ms",
                    took.as_secs_f64() * 1e3
                );
                alone.push(took);
            }
        }
    }
    let a = median(&mut alone);
    let b = median(&mut followed);
    println!(
        "opencode import of {messages} messages: alone {:.0} ms, while ocview follows {:.0} ms (medians of {rounds}); followed ÷ alone = {:.3} (goal ≤ 1.1)",
        a.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        b.as_secs_f64() / a.as_secs_f64()
    );
}

fn main() {
    let messages = env_or("OCVIEW_BENCH_MESSAGES", 5_700);
    let rounds = env_or("OCVIEW_BENCH_ROUNDS", 5).max(1);
    let only = std::env::var("OCVIEW_BENCH_ONLY").unwrap_or_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if only.is_empty() || only == "memory" {
        rt.block_on(memory(messages));
    }
    if only.is_empty() || only == "import" {
        rt.block_on(import_under_follow(messages, rounds));
    }
    if only.is_empty() || only == "archive" {
        let long = env_or("OCVIEW_BENCH_LONG", 28_500);
        rt.block_on(archive_memory::run(messages, long));
    }
}
