//! A long session on the real server (imported with `opencode import`),
//! scrolled to its first message: in a real terminal through tmux (`g`), and
//! in-process to check every message arrived in order, with no HTTP error;
//! then the same across a server kill and restart mid-scroll.

use crate::support;

use std::time::{Duration, Instant};

use ocview::app::Focus;
use ocview::model::PartBody;
use ocview::source::live::LiveOptions;
use ocview::source::msg::SourceState;

use support::fake_model::{FakeModel, steps};
use support::live_viewer::LiveViewer;
use support::long_session::LongSession;
use support::opencode::Server;
use support::tmux::Tmux;

const MESSAGES: usize = 2_000;
const FIRST: &str = "FIRST-PROMPT-MARKER: where the long session began";

/// 14 characters after the 12 hex digits of an opencode id.
fn tail(i: usize) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..14)
        .map(|_| {
            x ^= x >> 29;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            A[(x % A.len() as u64) as usize] as char
        })
        .collect()
}

/// Import a long session into the server's project; its id and message ids.
async fn import_long_session(server: &Server) -> (String, Vec<String>) {
    let session = format!("ses_dfd705bd5ffe{}", tail(999_999));
    let ids = LongSession {
        session: &session,
        title: "A long imported session",
        messages: MESSAGES,
        id_tail: &tail,
        text: &|i| match i {
            0 => FIRST.to_string(),
            i if i % 2 == 0 => format!("Question {i}: and then?"),
            i => format!(
                "Answer {i}: step {i} is done.\n\nNext comes step {}.",
                i + 1
            ),
        },
    }
    .import(server)
    .await;
    let newest = server
        .get(&format!("/session/{session}/message?limit=1"))
        .await;
    assert_eq!(newest[0]["info"]["id"], ids[MESSAGES - 1].as_str());
    (session, ids)
}

fn wait_screen(t: &Tmux, what: &str, secs: u64, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = t.capture();
        if ok(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn attach_in_tmux(tag: &str, url: &str) -> Tmux {
    let t = Tmux::start_sized(tag, 120, 40);
    t.line(&format!("{} attach {url}", env!("CARGO_BIN_EXE_ocview")));
    wait_screen(&t, "the viewer, live, with the long session", 30, |s| {
        s.contains("live") && s.contains("A long imported session") && s.contains("Answer 1999")
    });
    t
}

/// No HTTP error notice on the screen.
fn assert_no_error(screen: &str) {
    assert!(
        !screen.contains("HTTP"),
        "an HTTP error on the screen:\n{screen}"
    );
}

/// Every message in order, the first one's text shown.
fn assert_whole_history(v: &LiveViewer, session: &str, ids: &[String]) {
    let s = v.app.store.session(session).unwrap();
    let loaded: Vec<&str> = s.messages.iter().map(|m| m.info.id.as_str()).collect();
    assert_eq!(loaded.len(), ids.len());
    assert!(loaded.iter().zip(ids).all(|(a, b)| a == b));
    let first = s.messages[0].parts.iter().find_map(|p| match &p.body {
        PartBody::Text(t) => Some(t.text.as_str()),
        _ => None,
    });
    assert_eq!(first, Some(FIRST));
}

fn in_process_viewer(url: &str) -> LiveViewer {
    LiveViewer::attach(url, LiveOptions::default())
}

async fn newest_page(v: &mut LiveViewer, session: &str) {
    let session = session.to_string();
    v.until("the newest page", 30, |a| {
        a.store
            .session(&session)
            .is_some_and(|s| s.messages.len() >= 100)
    })
    .await;
    v.app.focus = Focus::Turns;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g_reaches_the_first_message_of_a_long_imported_session() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    let (session, ids) = import_long_session(&server).await;

    // A person, in a real terminal.
    let t = attach_in_tmux("paging", &server.url());
    t.keys(&["Tab", "g"]);
    let screen = wait_screen(&t, "the first message", 60, |s| {
        s.contains("FIRST-PROMPT-MARKER") && s.contains("beginning of session")
    });
    assert!(screen.contains("msg 1/2,000"), "{screen}");
    assert_no_error(&screen);
    t.keys(&["q"]);
    t.assert_terminal_restored();

    // The same in-process: every message, in order, no notice.
    let mut v = in_process_viewer(&server.url());
    newest_page(&mut v, &session).await;
    v.press(&["g"]);
    let sid = session.clone();
    v.until("the whole history", 60, |a| {
        a.history(&sid).is_some_and(|h| h.complete)
    })
    .await;
    assert_whole_history(&v, &session, &ids);
    assert!(v.notices.is_empty(), "{:?}", v.notices);
    let screen = v.frame();
    assert!(screen.contains("FIRST-PROMPT-MARKER"), "{screen}");
    assert!(screen.contains("beginning of session"), "{screen}");
    assert_no_error(&screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_goes_on_after_the_server_restarts_mid_scroll() {
    let model = FakeModel::start(steps(vec![])).await;
    let mut server = Server::start(&model.url()).await;
    let (session, ids) = import_long_session(&server).await;
    let t = attach_in_tmux("paging-restart", &server.url());
    let mut v = in_process_viewer(&server.url());
    newest_page(&mut v, &session).await;

    // Mid-scroll: some older pages loaded, the first message not yet.
    t.keys(&["Tab"]);
    for _ in 0..12 {
        t.keys(&["PageUp"]);
    }
    let sid = session.clone();
    for _ in 0..200 {
        if v.loaded(&sid) >= 300 {
            break;
        }
        v.press(&["pageup"]);
        v.pump(Duration::from_millis(50)).await;
    }
    assert!(v.loaded(&sid) >= 300, "two older pages while scrolling up");
    let before_kill = v.loaded(&sid);
    assert!(before_kill < MESSAGES, "everything loaded before the kill");

    server.kill();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !v
        .states
        .iter()
        .any(|s| matches!(s, SourceState::Reconnecting { .. }))
    {
        assert!(Instant::now() < deadline, "no reconnect: {:?}", v.states);
        v.pump(Duration::from_millis(200)).await;
    }
    wait_screen(&t, "the terminal to show the reconnect", 30, |s| {
        s.contains("reconnecting")
    });
    server.launch().await;
    let live_again = |v: &LiveViewer| {
        v.states
            .iter()
            .rposition(|s| *s == SourceState::Live)
            .zip(
                v.states
                    .iter()
                    .position(|s| matches!(s, SourceState::Reconnecting { .. })),
            )
            .is_some_and(|(live, reconnect)| live > reconnect)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !live_again(&v) {
        assert!(Instant::now() < deadline, "not live again: {:?}", v.states);
        v.pump(Duration::from_millis(200)).await;
    }
    // The newest page again did not drop the older pages already loaded.
    assert!(v.loaded(&sid) >= before_kill, "older pages were dropped");
    let notices_before = v.notices.len();

    v.press(&["g"]);
    v.until("the whole history after the restart", 60, |a| {
        a.history(&sid).is_some_and(|h| h.complete)
    })
    .await;
    assert_whole_history(&v, &session, &ids);
    let after: Vec<&String> = v.notices[notices_before..].iter().collect();
    assert!(after.is_empty(), "{after:?}");
    assert!(
        !v.notices.iter().any(|n| n.contains("400")),
        "{:?}",
        v.notices
    );
    assert_eq!(v.app.notice, None);

    wait_screen(&t, "live again", 60, |s| {
        s.contains("live") && !s.contains("reconnecting")
    });
    t.keys(&["g"]);
    let screen = wait_screen(&t, "the first message after the restart", 60, |s| {
        s.contains("FIRST-PROMPT-MARKER") && s.contains("beginning of session")
    });
    assert_no_error(&screen);
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
