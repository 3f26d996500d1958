//! A reconnect keeps the pages already loaded: it reads the newest page
//! again, and pages back only as far as the messages it already has (what
//! the gap may have brought); the older pages stay on screen, and paging on
//! goes on from where it was. A stand-in server counts the page requests.

use crate::support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ocview::app::Focus;
use ocview::source::msg::SourceState;
use support::history_server::{HistoryServer, SESSION, message_id};
use support::live_viewer::LiveViewer;

/// The loaded ids are `from..to` of the session, in order, none missing.
fn assert_run(v: &LiveViewer, from: usize, to: usize) {
    let s = v.app.store.session(SESSION).unwrap();
    let ids: Vec<&str> = s.messages.iter().map(|m| m.info.id.as_str()).collect();
    let want: Vec<String> = (from..to).map(message_id).collect();
    assert_eq!(ids.len(), want.len(), "messages loaded");
    assert!(
        ids.iter().zip(&want).all(|(a, b)| a == b),
        "ids out of order or missing"
    );
}

/// Open the session and scroll up until `pages` older pages of 100 are in.
async fn scrolled_back(server: &HistoryServer, pages: usize) -> LiveViewer {
    let mut v = LiveViewer::on_the_newest_page(server).await;
    v.app.focus = Focus::Turns;
    let want = 100 * (pages + 1);
    for _ in 0..400 {
        if v.loaded(SESSION) >= want && !v.app.history(SESSION).unwrap().asking {
            break;
        }
        v.press(&["pageup"]);
        v.pump(Duration::from_millis(10)).await;
    }
    assert!(v.loaded(SESSION) >= want, "{}", v.loaded(SESSION));
    v
}

/// Break the stream and wait until the viewer is live again and the resync
/// has loaded what it loads.
async fn reconnect(v: &mut LiveViewer, server: &HistoryServer) {
    let counts = server.counts.clone();
    let lives = v.states.iter().filter(|s| **s == SourceState::Live).count();
    counts.drop_streams.store(true, Ordering::Relaxed);
    v.until("live again after the resync", 10, |_| {
        counts.streams.load(Ordering::Relaxed) >= 2 && counts.todos.load(Ordering::Relaxed) >= 2
    })
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while v.states.iter().filter(|s| **s == SourceState::Live).count() <= lives {
        assert!(std::time::Instant::now() < deadline, "{:?}", v.states);
        v.pump(Duration::from_millis(50)).await;
    }
    v.pump(Duration::from_millis(300)).await;
}

/// The turn view's rows (the status line, which says "reconnecting", aside).
fn turn_rows(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[..lines.len() - 2].join("\n")
}

#[tokio::test]
async fn a_reconnect_reads_only_the_newest_page_again_and_keeps_the_older_ones_on_screen() {
    let n = 777;
    let server = HistoryServer::start(n).await;
    let mut v = scrolled_back(&server, 3).await;
    let loaded = v.loaded(SESSION);
    let before = v.frame();
    let pages = server.counts.pages.load(Ordering::Relaxed);

    reconnect(&mut v, &server).await;
    assert_eq!(
        server.counts.pages.load(Ordering::Relaxed),
        pages + 1,
        "only the newest page is read again"
    );
    assert_run(&v, n - loaded, n);
    assert_eq!(
        turn_rows(&v.frame()),
        turn_rows(&before),
        "the older pages stay on screen"
    );

    // Paging goes on from the oldest page loaded: the rest in one page of
    // the walk (500), nothing read twice.
    v.press(&["g"]);
    v.until("the whole history", 10, |a| {
        a.history(SESSION).is_some_and(|h| h.complete)
    })
    .await;
    assert_run(&v, 0, n);
    assert_eq!(server.counts.pages.load(Ordering::Relaxed), pages + 2);
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
}

#[tokio::test]
async fn a_reconnect_pages_back_through_what_came_in_the_gap_to_the_messages_it_has() {
    let n = 1_000;
    let gap = 150;
    let server = HistoryServer::start(n).await;
    server.counts.hide_newest.store(gap, Ordering::Relaxed);
    let mut v = scrolled_back(&server, 2).await;
    let loaded = v.loaded(SESSION);
    assert_run(&v, n - gap - loaded, n - gap);
    let pages = server.counts.pages.load(Ordering::Relaxed);

    // 150 messages come while the stream is down: the newest page (100)
    // does not reach the messages loaded, the one before it does.
    server.counts.hide_newest.store(0, Ordering::Relaxed);
    reconnect(&mut v, &server).await;
    assert_eq!(server.counts.pages.load(Ordering::Relaxed), pages + 2);
    assert_run(&v, n - gap - loaded, n);
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
}
