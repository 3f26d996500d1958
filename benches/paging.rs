//! Paging a 28,500-message session from its end to its first message, live.
//!
//! A stand-in server on loopback (tests/support/history_server.rs) pages the
//! session as opencode 1.18.33 does: newest page first, an opaque base64
//! cursor in `X-Next-Cursor`, HTTP 400 on a bare message id. The real live
//! source and App load it after `g`, a frame drawn after every batch of
//! source messages (more often than the loop's gate would). Measured:
//!
//! 1. the time to load all 28,500 messages page by page;
//! 2. the longest gap between frames: applying what arrived (pages put in
//!    front of the loaded ones) plus laying out and drawing a frame. Goal:
//!    under one frame interval (100 ms);
//! 3. memory: VmRSS before and after, and the peak (VmHWM).
//!
//! Run with `cargo bench --bench paging`.

#[path = "../tests/support/history_server.rs"]
mod history_server;
#[path = "../tests/support/proc_status.rs"]
mod proc_status;
#[path = "../tests/support/stand_in.rs"]
mod stand_in;

mod common;
use common::frame;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use history_server::{HistoryServer, SESSION};
use ocview::app::App;
use ocview::app::config::Config;
use ocview::source::live::{self, Client, LiveOptions};
use ocview::source::msg::SourceMsg;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const MESSAGES: usize = 28_500;
const W: u16 = 160;
const H: u16 = 50;

/// `VmRSS` and `VmHWM` of this process, in MiB.
fn memory() -> (f64, f64) {
    let mib = |field| proc_status::kib(None, field).unwrap_or(0.0) / 1024.0;
    (mib("VmRSS"), mib("VmHWM"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = HistoryServer::start(MESSAGES).await;
    let (rss_before, _) = memory();
    let (tx, mut rx) = tokio::sync::mpsc::channel(100_000);
    let mut app = App::new(Config::default(), "bench", false).unwrap();
    app.live = Some(live::spawn(
        Client::new(&server.url, None),
        LiveOptions::default(),
        tx,
        None,
    ));
    let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
    let loaded = |app: &App| app.store.session(SESSION).map_or(0, |s| s.messages.len());

    // Attach and open: the newest page.
    frame(&mut app, &mut terminal);
    while loaded(&app) < 100 {
        let msg = rx.recv().await.expect("the source runs");
        app.on_source(msg);
        frame(&mut app, &mut terminal);
    }
    app.focus = ocview::app::Focus::Turns;
    app.on_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE));
    frame(&mut app, &mut terminal);

    let start = Instant::now();
    let mut gaps: Vec<(Duration, usize)> = Vec::new();
    let mut longest_apply = Duration::ZERO;
    let mut longest_frame = Duration::ZERO;
    let mut pages = 0usize;
    let mut rss_half = None;
    while !app.history(SESSION).is_some_and(|h| h.complete) {
        let msg = rx.recv().await.expect("the source runs");
        let t0 = Instant::now();
        let mut batch = Vec::with_capacity(4);
        batch.push(msg);
        while let Ok(msg) = rx.try_recv() {
            batch.push(msg);
        }
        let mut in_batch = 0;
        for msg in batch {
            if let SourceMsg::Notice(n) = &msg {
                panic!("a notice while paging: {n}");
            }
            let is_page = matches!(msg, SourceMsg::Messages { .. });
            let a = Instant::now();
            app.on_source(msg);
            if is_page {
                longest_apply = longest_apply.max(a.elapsed());
                in_batch += 1;
            }
        }
        pages += in_batch;
        let f = Instant::now();
        frame(&mut app, &mut terminal);
        longest_frame = longest_frame.max(f.elapsed());
        gaps.push((t0.elapsed(), in_batch));
        if rss_half.is_none() && loaded(&app) >= MESSAGES / 2 {
            rss_half = Some((loaded(&app), memory().0));
        }
    }
    let total = start.elapsed();
    let (rss_after, hwm) = memory();
    assert_eq!(loaded(&app), MESSAGES, "every message loaded");
    let top = app.turn_state().map(|t| t.position.0);
    assert_eq!(top, Some(0), "the view ends at the first message");
    assert_eq!(
        server
            .counts
            .bad_requests
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );

    gaps.sort_by_key(|g| g.0);
    let (longest_gap, pages_in_it) = *gaps.last().unwrap();
    let median_gap = gaps[gaps.len() / 2].0;
    println!("paging {MESSAGES} messages back from the newest page, after g:");
    println!(
        "  all loaded in {:.0} ms: {pages} older pages, {:.2} ms a page, {} frames",
        ms(total),
        ms(total) / pages.max(1) as f64,
        gaps.len()
    );
    println!(
        "  longest gap between frames (apply + lay out + draw): {:.1} ms ({pages_in_it} page(s) in it); median {:.1} ms; goal < 100 ms",
        ms(longest_gap),
        ms(median_gap)
    );
    println!(
        "  longest single page apply: {:.1} ms; longest frame: {:.1} ms",
        ms(longest_apply),
        ms(longest_frame)
    );
    let (half_n, half_rss) = rss_half.unwrap_or((0, 0.0));
    println!(
        "  memory: VmRSS {rss_before:.1} MiB before, {half_rss:.1} MiB at {half_n} messages, {rss_after:.1} MiB after ({:.2} KiB a message); peak VmHWM {hwm:.1} MiB",
        (rss_after - rss_before) * 1024.0 / MESSAGES as f64
    );
}
