//! What the archive costs in memory, live (issue 36, point 7): the real
//! binary in tmux beside OpenCode's own TUI, on one real server holding a
//! 5,700-message session and a 28,500-message one (about 1.2 KB of
//! Markdown a message, as real sessions hold).

use std::path::Path;
use std::time::{Duration, Instant};

use super::streaming::group_rss_mib;
use super::support::long_session::{LongSession, markdown_text};
use super::support::opencode::{Server, binary};
use super::support::tmux::Tmux;

const SHORT: &str = "ses_dfd705bd5ffeArchiveMemShrt";
const LONG: &str = "ses_dfd705bd5ffeArchiveMemLong";

fn text(i: usize) -> String {
    markdown_text(i, 9)
}

/// The words that start message `i` on screen.
fn head(i: usize) -> String {
    format!("Message {i}:")
}

/// The resident memory of what runs in the pane (its process group: the
/// program and any helper it started), once `shown` is on screen and
/// `settle` has passed for what was still arriving (the archive's writer
/// taking the pages); MiB.
fn settled(t: &Tmux, what: &str, shown: &str, settle: Duration) -> f64 {
    let asked = Instant::now();
    t.wait_for_secs(what, 300, |s| s.contains(shown));
    let took = asked.elapsed();
    std::thread::sleep(settle);
    let rss = group_rss_mib(t.ocview_pid());
    println!(
        "    {what}: on screen after {:.1} s, {rss:.1} MiB",
        took.as_secs_f64()
    );
    rss
}

/// `ocview attach` on `session` with `archive` flags: its memory once the
/// last message is shown, and (with `g`) once the first one is too.
fn ocview(
    server: &Server,
    tag: &str,
    session: &str,
    messages: usize,
    archive: &str,
    g: bool,
) -> f64 {
    let t = Tmux::start_sized(tag, 200, 50);
    // OCVIEW_BENCH_WRAP runs ocview under a tool (a heap profiler, say);
    // `{tag}` in it names the run.
    let wrap = std::env::var("OCVIEW_BENCH_WRAP")
        .unwrap_or_default()
        .replace("{tag}", tag);
    t.line(&format!(
        "OCVIEW_ARCHIVE= {wrap} {} attach {} --session {session} {archive}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    let opened = settled(
        &t,
        &format!("{tag}: opened"),
        &head(messages - 1),
        Duration::from_secs(3),
    );
    if !g {
        quit(&t, &wrap);
        return opened;
    }
    t.keys(&["g"]);
    // How long the archive's writer is given to take the pages before the
    // memory is read (OCVIEW_BENCH_SETTLE_S, default 5 s).
    let settle = std::env::var("OCVIEW_BENCH_SETTLE_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let all = settled(
        &t,
        &format!("{tag}: after g"),
        &head(0),
        Duration::from_secs(settle),
    );
    quit(&t, &wrap);
    all
}

/// `q`, and under a wrapping tool the time it needs to write its findings
/// before the pane goes.
fn quit(t: &Tmux, wrap: &str) {
    t.keys(&["q"]);
    if !wrap.is_empty() {
        std::thread::sleep(Duration::from_secs(30));
    }
}

/// OpenCode's own TUI on the same session.
fn opencode_tui(server: &Server, home: &Path, session: &str, messages: usize) -> Option<f64> {
    let t = Tmux::start_sized("am-opencode-tui", 200, 50);
    let dirs = ["data", "config", "cache", "state"]
        .map(|d| format!("XDG_{}_HOME={}", d.to_uppercase(), home.join(d).display()))
        .join(" ");
    t.line(&format!(
        "{dirs} {} attach {} --session {session}",
        binary().display(),
        server.url()
    ));
    let last = head(messages - 1);
    let shown = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settled(&t, "OpenCode's TUI: opened", &last, Duration::from_secs(3))
    }));
    let rss = shown.ok();
    if rss.is_none() {
        println!("    OpenCode's TUI never showed {last:?}:\n{}", t.capture());
    }
    t.keys(&["C-c"]);
    rss
}

pub async fn run(short: usize, long: usize) {
    let server = Server::start("http://127.0.0.1:9/v1").await;
    let t0 = Instant::now();
    for (session, title, messages, tag) in [
        (SHORT, "A 5,700-message session", short, "S"),
        (LONG, "A long session", long, "L"),
    ] {
        LongSession {
            session,
            title,
            messages,
            id_tail: &|i| format!("{tag}{i:013}"),
            text: &text,
        }
        .import(&server)
        .await;
    }
    println!(
        "archive memory: sessions of {short} and {long} messages imported in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir().unwrap();
    let fresh = |name: &str| format!("--archive '{}'", dir.path().join(name).display());

    let short_on = ocview(
        &server,
        "am-short-on",
        SHORT,
        short,
        &fresh("short.db"),
        false,
    );
    let short_off = ocview(&server, "am-short-off", SHORT, short, "--no-archive", false);
    let tui = opencode_tui(&server, dir.path(), SHORT, short);
    let long_on = ocview(&server, "am-long-on", LONG, long, &fresh("long.db"), true);
    let long_off = ocview(&server, "am-long-off", LONG, long, "--no-archive", true);

    let verdict = |ok: bool| if ok { "" } else { "  MISSES" };
    let ratio = short_on / short_off;
    println!(
        "  {short} messages opened, archive on ÷ off: {ratio:.2} (goal ≤ 1.2){}",
        verdict(ratio <= 1.2)
    );
    match tui {
        Some(tui) => {
            let r = short_on / tui;
            println!(
                "  {short} messages opened, ocview with its archive ÷ OpenCode's TUI ({tui:.1} MiB): {r:.3} (goal ≤ 0.1){}",
                verdict(r <= 0.1)
            );
        }
        None => println!("  OpenCode's TUI: not measured (see above)"),
    }
    let ratio = long_on / long_off;
    println!(
        "  `g` on {long} messages, archive on ÷ off: {ratio:.2} (goal ≤ 1.2){}",
        verdict(ratio <= 1.2)
    );
    println!(
        "  `g` on {long} messages with the archive: {long_on:.1} MiB (goal ≤ 150 MB = {:.1} MiB){}",
        150e6 / 1048576.0,
        verdict(long_on * 1048576.0 <= 150e6)
    );
}
