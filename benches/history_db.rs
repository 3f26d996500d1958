//! opencode's database as history, at the size of a heavy user's: 10,000
//! sessions and 1,000,000 parts, built with the schema a real opencode
//! 1.18.33 made (tests/fixtures/opencode-1.18.33/database-schema.sql, read
//! from its own file) and filled with generated rows; the file is cached
//! under target/ and built once per size. Measured:
//!
//! 1. the list's first screen: from starting the history reader to a frame
//!    that shows sessions (goal ≤ 100 ms);
//! 2. a 5,700-message session's last message on screen after opening it
//!    (goal ≤ 300 ms);
//! 3. memory (VmRSS) after that session is open, for comparison with the
//!    same session attached live (the `paging` bench).
//!
//! Smaller sizes: `OCVIEW_BENCH_SESSIONS=1000 OCVIEW_BENCH_PARTS=100000`.
//! Run with `cargo bench --bench history_db`.

#[path = "../tests/support/proc_status.rs"]
mod proc_status;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ocview::app::App;
use ocview::source::msg::SourceMsg;
use ocview::source::opencode_db::history;
use rusqlite::{Connection, params};
use tokio::sync::mpsc;

const BIG_SESSION: &str = "ses_0000big";
const BIG_MESSAGES: usize = 5_700;
const T0: i64 = 1_795_000_000_000;

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The database for these sizes, built once.
fn database(sessions: usize, parts: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-history");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("opencode-{sessions}-{parts}.db"));
    if path.is_file() {
        return path;
    }
    let building = path.with_extension("building");
    let _ = std::fs::remove_file(&building);
    let mut c = Connection::open(&building).unwrap();
    let schema = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/opencode-1.18.33/database-schema.sql"),
    )
    .unwrap();
    c.execute_batch(&schema).unwrap();
    let tx = c.transaction().unwrap();
    tx.execute(
        "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('prj', '/work/p', ?1, ?1, '[]')",
        [T0],
    )
    .unwrap();
    {
        let mut s = tx
            .prepare("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?1, 'prj', 's', '/work/p', ?2, '1.18.33', ?3, ?3)")
            .unwrap();
        let mut m = tx
            .prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)")
            .unwrap();
        let mut p = tx
            .prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)")
            .unwrap();
        // The big session's messages, two parts each; the rest of the
        // parts spread over the other sessions' messages.
        let mut part_n = 0usize;
        let mut add_message = |session: &str,
                               n: usize,
                               t: i64,
                               part_n: &mut usize,
                               parts_each: usize| {
            let mid = format!("msg_{session}_{n:06}");
            let role = if n.is_multiple_of(2) {
                "user"
            } else {
                "assistant"
            };
            let data = format!(
                r#"{{"role":"{role}","time":{{"created":{t}}},"agent":"build","modelID":"m","providerID":"p"}}"#
            );
            m.execute(params![mid, session, t, data]).unwrap();
            for k in 0..parts_each {
                let pid = format!("prt_{session}_{n:06}_{k}");
                let text = format!(
                    r#"{{"type":"text","text":"Step {n}, part {k}: a line of generated text."}}"#
                );
                p.execute(params![pid, mid, session, t, text]).unwrap();
                *part_n += 1;
            }
        };
        s.execute(params![BIG_SESSION, "The big session", T0 + 1])
            .unwrap();
        for n in 0..BIG_MESSAGES {
            add_message(BIG_SESSION, n, T0 + n as i64, &mut part_n, 2);
        }
        let others = sessions.saturating_sub(1).max(1);
        let per_session = parts.saturating_sub(part_n) / others;
        let messages_each = (per_session / 4).max(1);
        for i in 0..others {
            let id = format!("ses_{i:07}");
            s.execute(params![id, format!("Session number {i}"), T0 + i as i64])
                .unwrap();
            for n in 0..messages_each {
                add_message(&id, n, T0 + i as i64, &mut part_n, 4);
            }
        }
    }
    tx.commit().unwrap();
    drop(c);
    std::fs::rename(&building, &path).unwrap();
    path
}

fn frame(app: &mut App, w: u16, h: u16) -> String {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.prepare(ratatui::layout::Rect::new(0, 0, w, h));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    let buf = terminal.backend().buffer();
    buf.content().iter().map(|c| c.symbol()).collect()
}

/// Apply what arrived and draw, until `ok` holds of a frame.
fn until(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    rx: &mut mpsc::Receiver<SourceMsg>,
    ok: impl Fn(&str) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        if ok(&frame(app, 200, 50)) {
            return start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never came");
        rt.block_on(async {
            if let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(5), rx.recv()).await {
                app.on_source(msg);
            }
        });
        while let Ok(msg) = rx.try_recv() {
            app.on_source(msg);
        }
    }
}

fn main() {
    let sessions = size("OCVIEW_BENCH_SESSIONS", 10_000);
    let parts = size("OCVIEW_BENCH_PARTS", 1_000_000);
    let built = Instant::now();
    let db = database(sessions, parts);
    println!(
        "database: {} ({:.1} s to find or build)",
        db.display(),
        built.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rss_before = proc_status::rss_mib();
    let mut app = App::new(ocview::app::config::Config::default(), "history", false).unwrap();
    let (tx, mut rx) = mpsc::channel(8192);
    let start = Instant::now();
    let handle = history::spawn(db, tx);
    let _guard = rt.enter();
    app.live = Some(ocview::app::launch::archive_list::route(
        None,
        Some(handle),
        None,
    ));
    let first = start.elapsed() + until(&rt, &mut app, &mut rx, |s| s.contains("Session number"));
    println!(
        "first screen of the list: {:.1} ms (goal ≤ 100)",
        first.as_secs_f64() * 1e3
    );

    app.selected = Some(format!("{BIG_SESSION}@history"));
    let last = format!("Step {}, part 1", BIG_MESSAGES - 1);
    let opened = until(&rt, &mut app, &mut rx, |s| s.contains(&last));
    println!(
        "{BIG_MESSAGES}-message session, last message on screen: {:.1} ms (goal ≤ 300)",
        opened.as_secs_f64() * 1e3
    );
    println!(
        "memory: {:.1} MiB after (was {:.1} MiB before); compare the paging bench's live attach",
        proc_status::rss_mib(),
        rss_before
    );
}
