//! A long live session's position names its whole length: attached to a
//! real server on this machine, ocview counts the session's messages in
//! opencode's database (off the UI thread) and the turn view says
//! "msg 5xx of 600 (100 loaded)" instead of "msg 91 of 100 loaded, more
//! before"; the count follows new messages. In-process on a test backend,
//! and in a real terminal through tmux with `XDG_DATA_HOME` pointing at
//! the server's data.

use crate::support;

use std::time::{Duration, Instant};

use ocview::app::launch::message_totals::local_database;
use ocview::source::live::LiveOptions;
use ocview::source::opencode_db::DbEnv;

use support::fake_model::{FakeModel, Step, steps};
use support::live_viewer::LiveViewer;
use support::long_session::LongSession;
use support::opencode::Server;
use support::tmux::Tmux;

const MESSAGES: usize = 600;

const SESSION: &str = "ses_dfd705bd5ffeTotalsLongSess";

/// A session of `MESSAGES` messages, imported; its id.
async fn import_long_session(server: &Server) -> String {
    LongSession {
        session: SESSION,
        title: "A long session to count",
        messages: MESSAGES,
        id_tail: &|i| format!("Total{i:09}"),
        text: &|i| {
            if i % 2 == 0 {
                format!("Question {i}")
            } else {
                format!("Answer {i}")
            }
        },
    }
    .import(server)
    .await;
    SESSION.to_string()
}

fn database_of(server: &Server) -> std::path::PathBuf {
    let env = DbEnv {
        opencode_db: None,
        xdg_data_home: Some(server.home.join("data")),
        home: None,
    };
    local_database(&server.url(), &env).expect("a server on this machine has a local database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_position_names_the_sessions_whole_length_from_the_local_database() {
    let model = FakeModel::start(steps(vec![Step::text("One more answer.")])).await;
    let server = Server::start(&model.url()).await;
    let session = import_long_session(&server).await;

    let mut v = LiveViewer::attach(&server.url(), LiveOptions::default());
    v.count_from_database(database_of(&server));
    let sid = session.clone();
    v.until("the newest page", 30, |a| {
        a.store
            .session(&sid)
            .is_some_and(|s| s.messages.len() >= 100)
    })
    .await;
    assert!(
        v.loaded(&session) < MESSAGES,
        "the whole session came at once"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let screen = loop {
        let screen = v.frame();
        if screen.contains("of 600 (100 loaded)") {
            break screen;
        }
        assert!(Instant::now() < deadline, "no total on screen:\n{screen}");
        v.pump(Duration::from_millis(200)).await;
    };
    // The loaded messages are the newest: the one at the top of the view
    // is numbered in the whole session.
    let at: usize = screen
        .split("msg ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .expect("a position");
    assert!((MESSAGES - 100 + 1..=MESSAGES).contains(&at), "{screen}");
    assert!(!screen.contains("more before"), "{screen}");

    // New messages: the count follows (the database is read again once
    // opencode commits, within a few seconds).
    server.prompt(&session, "And one more?").await;
    server.wait_idle(&session, 60).await;
    let expected = MESSAGES + 2;
    let want = format!("of {expected} (");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let screen = v.frame();
        if screen.contains(&want) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the total did not follow:\n{screen}"
        );
        v.pump(Duration::from_millis(200)).await;
    }

    // A real terminal: `ocview attach` with the server's data folder.
    let t = Tmux::start_sized("totals", 120, 40);
    t.line(&format!(
        "XDG_DATA_HOME={} {} attach {}",
        server.home.join("data").display(),
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    let screen = t.wait_for_secs("the total in a real terminal", 30, |s| {
        s.contains("A long session to count") && s.contains(&format!("of {expected} (1"))
    });
    assert!(!screen.contains("more before"), "{screen}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_local_database_does_not_hold_gets_no_total() {
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    let session = import_long_session(&server).await;
    // Another machine's database, in effect: a fresh server's, which does
    // not hold this session. The position must not borrow its counts.
    let other = Server::start(&model.url()).await;
    other.create_session().await;

    let mut v = LiveViewer::attach(&server.url(), LiveOptions::default());
    v.count_from_database(database_of(&other));
    let sid = session.clone();
    v.until("the newest page", 30, |a| {
        a.store
            .session(&sid)
            .is_some_and(|s| s.messages.len() >= 100)
    })
    .await;
    v.pump(Duration::from_secs(3)).await;
    let screen = v.frame();
    assert!(screen.contains("of 100 loaded, more before"), "{screen}");
    assert_eq!(v.app.message_totals.total(&session), None);
}
