//! Paging a long session back through the server's cursors, against a
//! stand-in server that answers as opencode 1.18.33 does (a bare message id
//! in `before=` is HTTP 400; the oldest page has no cursor).

use crate::support;

use std::sync::atomic::Ordering;

use ocview::app::Focus;
use ocview::app::panes::turn_view::layout::AHEAD_SCREENS;
use ocview::model::PartBody;
use ocview::source::live::{Client, LiveOptions};
use ocview::source::recording::recorder::Feed;
use support::history_server::{FIRST_TEXT, HistoryServer, SESSION, message_id};
use support::live_viewer::LiveViewer;

fn first_text(v: &LiveViewer) -> Option<String> {
    let s = v.app.store.session(SESSION)?;
    s.messages
        .first()?
        .parts
        .iter()
        .find_map(|p| match &p.body {
            PartBody::Text(t) => Some(t.text.clone()),
            _ => None,
        })
}

/// The loaded ids are exactly the session's, in order.
fn assert_whole(v: &LiveViewer, n: usize) {
    let s = v.app.store.session(SESSION).unwrap();
    let ids: Vec<&str> = s.messages.iter().map(|m| m.info.id.as_str()).collect();
    let want: Vec<String> = (0..n).map(message_id).collect();
    assert_eq!(ids.len(), n);
    assert!(
        ids.iter().zip(&want).all(|(a, b)| a == b),
        "ids out of order or missing"
    );
}

#[tokio::test]
async fn the_server_refuses_a_bare_message_id_and_pages_by_cursor() {
    let server = HistoryServer::start(250).await;
    let client = Client::new(&server.url, None);
    let newest = client.page(SESSION, 100, None).await.unwrap();
    assert_eq!(newest.messages.len(), 100);
    let cursor = newest.older.clone().expect("a cursor for the page before");
    let err = client
        .page(SESSION, 100, Some(&message_id(150)))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    let middle = client.page(SESSION, 100, Some(&cursor)).await.unwrap();
    assert_eq!(middle.messages[99]["info"]["id"], message_id(149));
    let oldest = client
        .page(SESSION, 100, middle.older.as_deref())
        .await
        .unwrap();
    assert_eq!(oldest.messages.len(), 50);
    assert_eq!(oldest.older, None, "the first page has no cursor");
}

#[tokio::test]
async fn g_loads_every_page_to_the_first_message_without_a_400() {
    let n = 1_234;
    let server = HistoryServer::start(n).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    assert_eq!(v.loaded(SESSION), 100, "only the newest page on open");
    v.app.focus = Focus::Turns;
    v.press(&["g"]);
    v.until("the whole history", 30, |a| {
        a.history(SESSION).is_some_and(|h| h.complete)
    })
    .await;
    assert_whole(&v, n);
    let screen = v.frame();
    assert!(screen.contains(FIRST_TEXT), "{screen}");
    assert!(screen.contains("beginning of session"), "{screen}");
    assert_eq!(first_text(&v).as_deref(), Some(FIRST_TEXT));
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
    assert_eq!(v.app.notice, None);
    // The newest page of 100, then every older page at once, growing:
    // 500 and the last 634 (asked for as 1,500), each once.
    assert_eq!(server.counts.pages.load(Ordering::Relaxed), 3);
    // Complete: no more asking, whatever the frames do.
    for _ in 0..5 {
        v.frame();
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(server.counts.pages.load(Ordering::Relaxed), 3);
}

#[tokio::test]
async fn scrolling_up_loads_ahead_of_the_reader() {
    let server = HistoryServer::start(1_000).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    v.app.focus = Focus::Turns;
    // Page up until the view is near the top of the loaded messages: the
    // next page comes before the reader gets there.
    let mut above = usize::MAX;
    for _ in 0..200 {
        v.press(&["pageup"]);
        v.frame();
        above = v.app.turn_state().unwrap().lines_above;
        let height = ocview::app::boxes::turn_inner(v.app.areas.turns).height as usize;
        if above < AHEAD_SCREENS * height {
            break;
        }
    }
    assert!(above > 0, "a page up jumped straight to the top");
    assert!(
        v.app.history(SESSION).unwrap().asking,
        "the older page is asked for before the reader reaches the top"
    );
    v.until("an older page, ahead", 10, |a| {
        a.store
            .session(SESSION)
            .is_some_and(|s| s.messages.len() >= 200)
    })
    .await;
    let t = v.app.turn_state().unwrap();
    assert!(
        t.position.0 > 0,
        "the reader never reached the top: {:?}",
        t.position
    );
    assert!(!v.app.history(SESSION).unwrap().complete);
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
}

#[tokio::test]
async fn load_all_pages_to_the_first_message_and_records_todos() {
    let n = 2_345;
    let server = HistoryServer::start(n).await;
    let options = LiveOptions {
        load_all_messages: true,
        ..Default::default()
    };
    let mut v = LiveViewer::attach(&server.url, options);
    v.until("every message and the todos", 20, |a| {
        a.store
            .session(SESSION)
            .is_some_and(|s| s.messages.len() == n && !s.todos.is_empty())
    })
    .await;
    assert_whole(&v, n);
    assert!(v.app.history(SESSION).unwrap().complete);
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
    // The todos are recorded like everything else loaded.
    let mut todos = 0;
    while let Ok(feed) = v.raw.try_recv() {
        if let Feed::Loaded(event) = feed
            && event["type"] == "todo.updated"
        {
            assert_eq!(event["properties"]["sessionID"], SESSION);
            todos += 1;
        }
    }
    assert_eq!(todos, 1);
}

#[tokio::test]
async fn a_reconnect_reloads_the_todos_keeps_the_pages_and_paging_goes_on() {
    let n = 777;
    let server = HistoryServer::start(n).await;
    let counts = server.counts.clone();
    let mut v = LiveViewer::attach(&server.url, LiveOptions::default());
    v.until("the newest page and the todos", 10, |a| {
        a.store
            .session(SESSION)
            .is_some_and(|s| s.messages.len() >= 100 && !s.todos.is_empty())
    })
    .await;
    assert_eq!(counts.todos.load(Ordering::Relaxed), 1);
    v.app.focus = Focus::Turns;
    for _ in 0..100 {
        if v.loaded(SESSION) >= 200 {
            break;
        }
        v.press(&["pageup"]);
        v.pump(std::time::Duration::from_millis(20)).await;
    }
    let before = v.loaded(SESSION);
    assert!((200..n).contains(&before), "{before}");

    // The stream breaks: a resync loads the newest page and the todos again.
    counts.drop_streams.store(true, Ordering::Relaxed);
    v.until("the resync", 10, |_| {
        counts.streams.load(Ordering::Relaxed) >= 2 && counts.todos.load(Ordering::Relaxed) >= 2
    })
    .await;
    v.pump(std::time::Duration::from_millis(200)).await;
    assert!(v.loaded(SESSION) >= before, "the older pages stay");

    v.press(&["g"]);
    v.until("the whole history after the resync", 10, |a| {
        a.history(SESSION).is_some_and(|h| h.complete)
    })
    .await;
    assert_whole(&v, n);
    assert_eq!(counts.bad_requests.load(Ordering::Relaxed), 0);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
    let mut todos = 0;
    while let Ok(feed) = v.raw.try_recv() {
        if let Feed::Loaded(event) = feed
            && event["type"] == "todo.updated"
        {
            todos += 1;
        }
    }
    assert_eq!(todos, 2, "the todos are recorded at each (re)sync");
}

/// Search needs no `g` first: finding from the list loads every session's
/// history in the background, counts the hits once the pages are in, and
/// `enter` opens the session at the first message, a thousand messages up.
#[tokio::test]
async fn a_search_from_the_list_loads_whole_histories_and_finds_the_first_message() {
    let n = 1_234;
    let server = HistoryServer::start(n).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    v.app.overlays.search.worker = ocview::app::overlays::search::worker::SearchWorker::inline();
    v.app.focus = Focus::Sessions;
    v.press(&["/"]);
    for c in "FIRST-PROMPT".chars() {
        v.press(&[&c.to_string()]);
    }
    v.until("the whole history, asked for by the search", 30, |a| {
        a.history(SESSION).is_some_and(|h| h.complete)
    })
    .await;
    assert_whole(&v, n);
    // The counts are searched again once the pages are in.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let screen = loop {
        let screen = v.frame();
        v.app.on_search_results();
        if screen.contains("1 hit") || std::time::Instant::now() > deadline {
            break screen;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(screen.contains("1 hit"), "{screen}");
    v.press(&["enter"]);
    v.app.on_search_results();
    v.frame();
    v.app.on_search_results();
    let screen = v.frame();
    assert!(screen.contains(FIRST_TEXT), "{screen}");
    assert!(screen.lines().last().unwrap().contains("1/1"), "{screen}");
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
}

/// A search in a live session whose older pages are still coming says
/// "searching…" with what is loaded, never "no match", until the hit in
/// the first page is found.
#[tokio::test]
async fn a_search_says_searching_while_older_pages_load_never_no_match() {
    let server = HistoryServer::start(1_234).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    // Results answered at once, read below after each batch of pages.
    v.app.overlays.search.worker = ocview::app::overlays::search::worker::SearchWorker::inline();
    v.app.focus = Focus::Turns;
    v.frame();
    let keys: Vec<String> = "/FIRST-PROMPT".chars().map(String::from).collect();
    v.press(&keys.iter().map(String::as_str).collect::<Vec<_>>());
    v.app.on_search_results();
    let status = |v: &LiveViewer| v.app.search_status().map(|(t, _)| t).unwrap_or_default();
    assert!(
        status(&v).contains("searching… 100 messages loaded"),
        "{}",
        status(&v)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !status(&v).contains("1/1") {
        assert!(!status(&v).contains("no match"), "{}", status(&v));
        assert!(std::time::Instant::now() < deadline, "{}", status(&v));
        v.pump(std::time::Duration::from_millis(100)).await;
        v.app.on_search_results();
    }
    assert_eq!(v.loaded(SESSION), 1_234);
    assert!(v.frame().contains(FIRST_TEXT));
}

/// `Y` on a live session of many pages: the status line says how far the
/// history has loaded, and the copy holds every message, not the newest
/// page.
#[tokio::test]
async fn capital_y_loads_the_whole_history_with_progress_then_copies_it_all() {
    use ocview::app::verbs::Request;
    // Three pages, within what one OSC 52 carries.
    let n = 300;
    let server = HistoryServer::start(n).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    v.press(&["Y"]);
    let said = v
        .app
        .verbs
        .feedback
        .clone()
        .map(|f| f.text)
        .unwrap_or_default();
    assert!(
        said.contains("loading history… 100 messages so far"),
        "{said}"
    );
    assert!(
        v.app.verbs.request.is_none(),
        "nothing copied before it is whole"
    );
    let mut progress = vec![said];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let request = loop {
        if let Some(r) = v.app.verbs.request.take() {
            break r;
        }
        if let Some(f) = &v.app.verbs.feedback {
            progress.push(f.text.clone());
        }
        assert!(std::time::Instant::now() < deadline, "{progress:?}");
        v.pump(std::time::Duration::from_millis(50)).await;
    };
    let text = match request {
        Request::Write(bytes) => support::osc52::osc52_payloads(&bytes).concat(),
        Request::Clipboard { content, .. } => content.text,
        other => panic!("{other:?}"),
    };
    assert!(text.contains(FIRST_TEXT));
    assert_eq!(text.matches("Question number ").count(), n / 2 - 1);
    assert_eq!(server.counts.bad_requests.load(Ordering::Relaxed), 0);
}

/// OpenCode 1.18 ends a turn with both `session.idle` and `session.status`
/// idle: the open session's stored messages are fetched once for it, and a
/// session nobody opened is not fetched at all.
#[tokio::test]
async fn a_turn_end_said_twice_is_fetched_once_and_only_for_an_open_session() {
    let server = HistoryServer::start(120).await;
    let mut v = LiveViewer::on_the_newest_page(&server).await;
    let pages = || server.counts.pages.load(Ordering::Relaxed);
    assert_eq!(pages(), 1);
    let status = |id: &str, kind: &str| {
        format!(
            r#"{{"type":"session.status","properties":{{"sessionID":"{id}","status":{{"type":"{kind}"}}}}}}"#
        )
    };
    let idle =
        |id: &str| format!(r#"{{"type":"session.idle","properties":{{"sessionID":"{id}"}}}}"#);
    let turn = |id: &str| vec![status(id, "busy"), status(id, "idle"), idle(id)];
    for round in 1..=2 {
        let mut events = turn(SESSION);
        events.extend(turn("ses_nobody_opened"));
        server.counts.inject.lock().unwrap().extend(events);
        v.until("the turn's end fetched", 10, |_| pages() > round)
            .await;
        // Time for a second fetch, were one coming.
        for _ in 0..10 {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            v.frame();
        }
        assert_eq!(pages(), 1 + round, "one fetch for turn {round}");
    }
    assert_eq!(server.counts.other_pages.load(Ordering::Relaxed), 0);
}
