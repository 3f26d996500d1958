//! A search in a live session whose history is still loading (a stand-in
//! server that answers every page late): the hits in the pages already
//! loaded show at once, the status line says how much history is still
//! loading, and "no match" comes only once everything was searched.

use crate::support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ocview::app::Focus;
use ocview::app::overlays::search::worker::SearchWorker;
use ocview::source::live::LiveOptions;
use support::history_server::{HistoryServer, SESSION};
use support::live_viewer::LiveViewer;

const N: usize = 3_000;

/// The session open on its newest page, every later page answered late.
async fn slow_session(server: &HistoryServer) -> LiveViewer {
    let mut v = LiveViewer::attach(&server.url, LiveOptions::default());
    // Results answered at once, read after each batch of pages.
    v.app.overlays.search.worker = SearchWorker::inline();
    v.until("the newest page", 10, |a| {
        a.store
            .session(SESSION)
            .is_some_and(|s| s.messages.len() >= 100)
    })
    .await;
    server.counts.page_delay_ms.store(400, Ordering::Relaxed);
    v.app.focus = Focus::Turns;
    v.frame();
    v
}

fn search(v: &mut LiveViewer, text: &str) {
    let keys: Vec<String> = format!("/{text}").chars().map(String::from).collect();
    v.press(&keys.iter().map(String::as_str).collect::<Vec<_>>());
    v.press(&["enter"]);
    v.app.on_search_results();
}

/// The status line as drawn.
fn status_line(v: &mut LiveViewer) -> String {
    v.app.on_search_results();
    v.frame().lines().last().unwrap_or_default().to_string()
}

fn whole(v: &LiveViewer) -> bool {
    v.app.history(SESSION).is_some_and(|h| h.complete)
}

#[tokio::test]
async fn hits_in_loaded_pages_show_at_once_with_how_much_is_still_loading() {
    let server = HistoryServer::start(N).await;
    let mut v = slow_session(&server).await;
    // In the newest page (question 2998 and its answer).
    search(&mut v, "step 2998");
    let line = status_line(&mut v);
    assert!(!whole(&v), "the history loaded before the first look");
    insta::assert_snapshot!("search_hits_while_loading", line);

    // The count of the whole session, when known: "of".
    v.app.message_totals.set(SESSION.to_string(), N as u64);
    let line = status_line(&mut v);
    assert!(!whole(&v));
    insta::assert_snapshot!("search_hits_while_loading_of_total", line);

    v.until("the whole history", 30, |a| {
        a.history(SESSION).is_some_and(|h| h.complete)
    })
    .await;
    v.pump(Duration::from_millis(400)).await;
    let line = status_line(&mut v);
    assert!(!line.contains("searching"), "{line}");
    assert!(line.contains("/step 2998  1/1"), "{line}");
}

#[tokio::test]
async fn no_match_only_once_every_page_was_searched() {
    let server = HistoryServer::start(N).await;
    let mut v = slow_session(&server).await;
    search(&mut v, "nowhere to be found");
    let first = status_line(&mut v);
    insta::assert_snapshot!("search_nothing_yet_while_loading", first);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = vec![first];
    loop {
        let line = status_line(&mut v);
        if whole(&v) {
            break;
        }
        assert!(!line.contains("no match"), "{line}");
        lines.push(line);
        assert!(Instant::now() < deadline, "{lines:?}");
        v.pump(Duration::from_millis(100)).await;
    }
    // Pages came one by one: the loaded count went up while searching.
    let counts: std::collections::BTreeSet<&String> =
        lines.iter().filter(|l| l.contains("searching…")).collect();
    assert!(counts.len() >= 2, "{lines:?}");
    v.pump(Duration::from_millis(400)).await;
    let line = status_line(&mut v);
    insta::assert_snapshot!("search_no_match_when_whole", line);
}
