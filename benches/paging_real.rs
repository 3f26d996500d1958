//! `g` on a long session against the real `opencode serve` 1.18.33, as a
//! ratio of the server's own floor (issue 26: ≤ 1.5).
//!
//! The session is built with `opencode import` (tests/support/long_session.rs;
//! about 24 s for 28,500 messages). Measured:
//!
//! 1. the floor: the least time the server needs to serve every message
//!    once, the best of one request without `limit` and pages of several
//!    sizes fetched back to back, bodies read but not decoded;
//! 2. `g`: the real live source and App, from the key to the first message
//!    loaded, a frame drawn after every batch of source messages;
//! 3. `g ÷ floor`.
//!
//! Run with `cargo bench --bench paging_real` (`OCVIEW_BENCH_MESSAGES=N`
//! for another size; `OCVIEW_BENCH_ROUNDS=R` rounds, best kept).

#[path = "../tests/support/long_session.rs"]
#[allow(dead_code)]
mod long_session;
#[path = "../tests/support/opencode.rs"]
#[allow(dead_code)]
mod opencode;

mod common;
use common::frame;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ocview::app::App;
use ocview::app::config::Config;
use ocview::source::live::{self, Client, LiveOptions};
use ocview::source::msg::SourceMsg;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const SESSION: &str = "ses_dfd705bd5ffeBenchPagingReal";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn tail(i: usize) -> String {
    format!("{:014}", i % 100_000_000_000_000)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Every message once: one request without `limit`, or pages of `limit`
/// back to back through the cursors. Bodies read, not decoded.
async fn serve_all(url: &str, limit: Option<usize>) -> (Duration, usize) {
    let http = reqwest::Client::new();
    let start = Instant::now();
    let mut cursor: Option<String> = None;
    let mut bytes = 0;
    loop {
        let mut u = format!("{url}/session/{SESSION}/message");
        if let Some(l) = limit {
            u.push_str(&format!("?limit={l}"));
            if let Some(c) = &cursor {
                u.push_str(&format!("&before={c}"));
            }
        }
        let resp = http.get(&u).send().await.unwrap();
        assert!(resp.status().is_success(), "{u}: {}", resp.status());
        cursor = resp
            .headers()
            .get("x-next-cursor")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        bytes += resp.bytes().await.unwrap().len();
        if limit.is_none() || cursor.is_none() {
            return (start.elapsed(), bytes);
        }
    }
}

/// `g` in the App with the live source: from the key to the whole history.
async fn g(url: &str, messages: usize) -> (Duration, Duration) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(100_000);
    let mut app = App::new(Config::default(), "bench", false).unwrap();
    app.live = Some(live::spawn(
        Client::new(url, None),
        LiveOptions::default(),
        tx,
        None,
    ));
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    let loaded = |app: &App| app.store.session(SESSION).map_or(0, |s| s.messages.len());
    frame(&mut app, &mut terminal);
    while loaded(&app) < 100.min(messages) {
        app.on_source(rx.recv().await.expect("the source runs"));
        frame(&mut app, &mut terminal);
    }
    app.focus = ocview::app::Focus::Turns;
    let start = Instant::now();
    app.on_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE));
    frame(&mut app, &mut terminal);
    let mut longest_gap = Duration::ZERO;
    while !app.history(SESSION).is_some_and(|h| h.complete) {
        let msg = rx.recv().await.expect("the source runs");
        let t0 = Instant::now();
        let mut batch = vec![msg];
        while let Ok(msg) = rx.try_recv() {
            batch.push(msg);
        }
        for msg in batch {
            if let SourceMsg::Notice(n) = &msg {
                panic!("a notice while paging: {n}");
            }
            app.on_source(msg);
        }
        frame(&mut app, &mut terminal);
        longest_gap = longest_gap.max(t0.elapsed());
    }
    let took = start.elapsed();
    assert_eq!(loaded(&app), messages, "every message loaded");
    (took, longest_gap)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let messages = env_or("OCVIEW_BENCH_MESSAGES", 28_500);
    let rounds = env_or("OCVIEW_BENCH_ROUNDS", 3).max(1);
    let mut server = opencode::Server::start("http://127.0.0.1:9/v1").await;
    let t = Instant::now();
    long_session::LongSession {
        session: SESSION,
        title: "A long imported session",
        messages,
        id_tail: &tail,
        text: &|i| {
            if i % 2 == 0 {
                format!("Question {i}: and then?")
            } else {
                format!(
                    "Answer {i}: step {i} is done.\n\nNext comes step {}.",
                    i + 1
                )
            }
        },
    }
    .import(&server)
    .await;
    println!(
        "paging_real: a {messages}-message session imported in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let url = server.url();

    let mut floor = (Duration::MAX, String::new());
    let mut gs = Vec::new();
    for round in 0..rounds {
        for limit in [None, Some(1_000), Some(2_000), Some(3_000), Some(5_000)] {
            let (d, bytes) = serve_all(&url, limit).await;
            let how = limit.map_or("one request".to_string(), |l| format!("pages of {l}"));
            println!(
                "  round {round}: floor by {how}: {:.0} ms ({:.1} MB)",
                ms(d),
                bytes as f64 / 1e6
            );
            if d < floor.0 {
                floor = (d, how);
            }
        }
        let (took, gap) = g(&url, messages).await;
        println!(
            "  round {round}: g: {:.0} ms (longest gap between frames {:.1} ms)",
            ms(took),
            ms(gap)
        );
        gs.push(took);
    }
    let best_g = gs.iter().min().copied().unwrap();
    println!(
        "g on {messages} messages: {:.0} ms; the server's floor: {:.0} ms ({}); g ÷ floor = {:.2} (goal ≤ 1.5)",
        ms(best_g),
        ms(floor.0),
        floor.1,
        best_g.as_secs_f64() / floor.0.as_secs_f64()
    );
    server.kill();
}
