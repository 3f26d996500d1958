//! Seen means seen (issue 22, points 1 and 2): a prompt takes answers only
//! after a flushed frame showed its choices with nothing over them, keys
//! typed before that frame are thrown away, the keys of an overlay or a
//! text being typed never reach a prompt, and a prompt that arrives while
//! the person types or reads something else waits, says so and rings.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::frame_probe::FrameProbe;
use common::{feed, press, screen};
use crossterm::event::{Event, KeyCode, KeyEvent};
use ocview::app::config::Config;
use ocview::app::router::Layer;
use ocview::app::run::{Exit, run};
use ocview::app::{App, Focus, Overlay};
use ocview::source::live::reply::Reply;
use ratatui::Terminal;
use tokio::sync::mpsc;

const SESSION: &str = r#"{"type":"session.created","properties":{"info":{"id":"ses_p","title":"Build work","directory":"/p","time":{"created":1,"updated":2}}}}
{"type":"message.updated","properties":{"info":{"id":"msg_u","sessionID":"ses_p","role":"user","time":{"created":1}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_u","messageID":"msg_u","sessionID":"ses_p","type":"text","text":"clean up please"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"ses_p","role":"assistant","parentID":"msg_u","time":{"created":2}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_p","type":"tool","tool":"bash","callID":"call_1","state":{"status":"running","input":{"command":"rm -rf build"},"time":{"start":2}}}}}"#;

const RM: &str = r#"{"type":"permission.asked","properties":{"id":"per_2028f0000001","sessionID":"ses_p","permission":"bash","patterns":["rm -rf build"],"always":["rm *"],"metadata":{"command":"rm -rf build"},"tool":{"messageID":"msg_1","callID":"call_1"}}}"#;
const RM_ANSWERED: &str = r#"{"type":"permission.replied","properties":{"sessionID":"ses_p","requestID":"per_2028f0000001","reply":"reject"}}"#;
const QUESTION: &str = r#"{"type":"question.asked","properties":{"id":"que_2028f0000002","sessionID":"ses_p","questions":[{"question":"Which linter?","header":"Linter","options":[{"label":"Ruff","description":"fast"},{"label":"Flake8","description":"classic"}]}]}}"#;

const ARMING: Duration = Duration::from_millis(500);
const PAST_ARMING: Duration = Duration::from_millis(600);

/// A live app with the session, answers going to `rx`.
fn live_app() -> (App, mpsc::UnboundedReceiver<Reply>) {
    let mut app = App::new(Config::default(), "live test", false).unwrap();
    app.panes.prompts.arming = ARMING;
    let (tx, rx) = mpsc::unbounded_channel();
    app.replies = Some(tx);
    feed(&mut app, SESSION.as_bytes());
    (app, rx)
}

fn sent(rx: &mut mpsc::UnboundedReceiver<Reply>) -> Vec<Reply> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn draw(app: &mut App) -> String {
    screen(app, 100, 30)
}

/// The prompt on screen long enough to be armed.
async fn armed(app: &mut App) {
    draw(app);
    tokio::time::advance(PAST_ARMING).await;
    draw(app);
    assert!(app.prompt_armed(tokio::time::Instant::now()));
}

#[tokio::test(start_paused = true)]
async fn a_prompt_that_arrives_under_help_arms_only_after_help_closes_and_it_is_drawn() {
    let (mut app, mut rx) = live_app();
    draw(&mut app);
    press(&mut app, &["?"]);
    draw(&mut app);
    feed(&mut app, RM.as_bytes());
    let s = draw(&mut app);
    assert_eq!(app.top_layer(), Layer::Overlay(Overlay::Help));
    assert_ne!(app.focus, Focus::Prompt, "help keeps the keyboard");
    assert!(
        s.contains("waits until you close help"),
        "a line over help says a prompt waits:\n{s}"
    );
    assert!(
        app.attention.take_bell(),
        "the bell rings, terminal focused or not"
    );
    // Long under help: none of that time counts.
    tokio::time::advance(Duration::from_secs(5)).await;
    draw(&mut app);
    press(&mut app, &["?"]);
    assert_eq!(
        app.focus,
        Focus::Prompt,
        "help closed: the prompt takes focus"
    );
    tokio::time::advance(Duration::from_millis(50)).await;
    press(&mut app, &["y"]);
    draw(&mut app);
    tokio::time::advance(Duration::from_millis(50)).await;
    press(&mut app, &["y"]);
    assert!(
        sent(&mut rx).is_empty(),
        "y before the prompt was drawn and armed"
    );
    tokio::time::advance(PAST_ARMING).await;
    draw(&mut app);
    press(&mut app, &["y"]);
    assert_eq!(sent(&mut rx).len(), 1, "armed after a frame and the delay");
}

#[tokio::test(start_paused = true)]
async fn an_overlay_over_an_armed_prompt_disarms_it_and_its_keys_stay_its_own() {
    let (mut app, mut rx) = live_app();
    feed(&mut app, QUESTION.as_bytes());
    armed(&mut app).await;
    // The diff view over it: its keys (space, enter, digits) are the view's.
    press(&mut app, &["D"]);
    assert_eq!(app.top_layer(), Layer::Overlay(Overlay::Diffs));
    draw(&mut app);
    assert!(!app.prompt_armed(tokio::time::Instant::now()), "covered");
    press(&mut app, &["space", "1", "enter", "s", "enter"]);
    assert!(sent(&mut rx).is_empty(), "no key of the diff view answered");
    let draft = app.panes.prompts.drafts.get("que_2028f0000002");
    assert!(draft.is_none_or(|d| d.picked.iter().all(|p| p.is_empty())));
    // Closed: seen again only after a frame and the delay.
    press(&mut app, &["q"]);
    draw(&mut app);
    press(&mut app, &["1", "enter"]);
    assert!(sent(&mut rx).is_empty(), "not yet armed again");
    tokio::time::advance(PAST_ARMING).await;
    draw(&mut app);
    press(&mut app, &["1", "enter"]);
    assert_eq!(sent(&mut rx).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_jump_list_over_a_question_keeps_its_keys() {
    let (mut app, mut rx) = live_app();
    feed(&mut app, QUESTION.as_bytes());
    armed(&mut app).await;
    press(&mut app, &["i"]);
    assert_eq!(app.top_layer(), Layer::Overlay(Overlay::Prompts));
    draw(&mut app);
    press(&mut app, &["j", "j", "enter"]);
    draw(&mut app);
    press(&mut app, &["enter"]);
    assert!(sent(&mut rx).is_empty(), "{:?}", app.panes.prompts.drafts);
}

#[tokio::test(start_paused = true)]
async fn a_prompt_never_takes_the_keys_from_the_filter() {
    let (mut app, mut rx) = live_app();
    draw(&mut app);
    press(&mut app, &["/", "a", "b"]);
    feed(&mut app, RM.as_bytes());
    let s = draw(&mut app);
    assert_eq!(app.top_layer(), Layer::Filter);
    assert!(s.contains("waits until you close the filter"), "{s}");
    tokio::time::advance(Duration::from_secs(2)).await;
    press(&mut app, &["y", "e", "s"]);
    assert_eq!(
        app.panes.list.filter, "abyes",
        "the letters went to the filter"
    );
    assert!(sent(&mut rx).is_empty());
    // The filter closed: the prompt takes focus and arms as any other.
    press(&mut app, &["esc"]);
    assert_eq!(app.focus, Focus::Prompt);
    draw(&mut app);
    press(&mut app, &["y"]);
    assert!(sent(&mut rx).is_empty(), "drawn but not armed");
    tokio::time::advance(PAST_ARMING).await;
    draw(&mut app);
    press(&mut app, &["y"]);
    assert_eq!(sent(&mut rx).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_search_being_typed_keeps_its_keys() {
    let (mut app, mut rx) = live_app();
    app.focus = Focus::Turns;
    draw(&mut app);
    press(&mut app, &["/", "r"]);
    assert_eq!(app.top_layer(), Layer::Search);
    feed(&mut app, QUESTION.as_bytes());
    draw(&mut app);
    press(&mut app, &["1", "m"]);
    assert!(sent(&mut rx).is_empty());
    assert_ne!(app.focus, Focus::Prompt);
}

#[tokio::test(start_paused = true)]
async fn a_rejection_message_whose_permission_is_replaced_keeps_its_keys() {
    let (mut app, mut rx) = live_app();
    feed(&mut app, RM.as_bytes());
    armed(&mut app).await;
    press(&mut app, &["m", "n", "o", "t", " "]);
    // Answered in another client; a question arrives.
    feed(&mut app, format!("{RM_ANSWERED}\n{QUESTION}").as_bytes());
    let s = draw(&mut app);
    assert_eq!(app.top_layer(), Layer::StaleEditor);
    assert!(s.contains("gone: reject with a message"), "{s}");
    assert!(
        !s.contains("Which linter?"),
        "the question is not shown yet:\n{s}"
    );
    tokio::time::advance(PAST_ARMING).await;
    draw(&mut app);
    press(&mut app, &["1", "y", "e", "s", "enter"]);
    assert!(
        sent(&mut rx).is_empty(),
        "nothing sent for the gone permission, nothing to the question"
    );
    let s = draw(&mut app);
    assert!(s.contains("Which linter?"), "{s}");
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("not sent")),
        "{:?}",
        app.notice
    );
    press(&mut app, &["1", "enter"]);
    assert!(sent(&mut rx).is_empty(), "the question arms anew");
    tokio::time::advance(PAST_ARMING).await;
    draw(&mut app);
    press(&mut app, &["1"]);
    press(&mut app, &["enter"]);
    assert_eq!(sent(&mut rx).len(), 1);
}

/// Run the real loop on `app`: during frame `at_frame`, after drawing for
/// `slow` more, the key `typed` comes in; then each of `later` (a pause and
/// a key) from a task. Returns how it ended and how many frames it drew.
async fn run_typing(
    app: &mut App,
    at_frame: usize,
    slow: Duration,
    typed: char,
    later: &'static [(u64, char)],
) -> (Exit, usize) {
    let (key_tx, key_rx) = mpsc::unbounded_channel::<std::io::Result<Event>>();
    let typed_during_frame = key_tx.clone();
    let frames = Arc::new(Mutex::new(0));
    let counted = frames.clone();
    let backend = FrameProbe::new(100, 30, move |_| {
        let mut n = counted.lock().unwrap();
        *n += 1;
        if *n == at_frame {
            std::thread::sleep(slow);
            let key = KeyEvent::from(KeyCode::Char(typed));
            typed_during_frame.send(Ok(Event::Key(key))).unwrap();
        }
    });
    let mut terminal = Terminal::new(backend).unwrap();
    let (_source_tx, source_rx) = mpsc::channel(8);
    let mut input = Some(Box::pin(futures_util::stream::unfold(
        key_rx,
        |mut rx| async move { rx.recv().await.map(|e| (e, rx)) },
    )));
    let keys = tokio::spawn(async move {
        for &(pause_ms, key) in later {
            tokio::time::sleep(Duration::from_millis(pause_ms)).await;
            let key = KeyEvent::from(KeyCode::Char(key));
            key_tx.send(Ok(Event::Key(key))).unwrap();
        }
    });
    let exit = run(
        app,
        &mut terminal,
        move || input.take().expect("input starts once"),
        source_rx,
        std::future::pending(),
    )
    .await
    .unwrap();
    keys.await.unwrap();
    let frames = *frames.lock().unwrap();
    (exit, frames)
}

/// Through the real loop: a key that was already waiting when the frame
/// that first showed the prompt went out (typed while it was being drawn)
/// is thrown away, even with no arming delay at all; the next key, typed
/// after, answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_queued_before_the_prompts_first_frame_are_discarded() {
    let (mut app, mut rx) = live_app();
    app.panes.prompts.arming = Duration::ZERO;
    feed(&mut app, RM.as_bytes());
    let (exit, frames) =
        run_typing(&mut app, 1, Duration::ZERO, 'y', &[(1000, 'n'), (100, 'q')]).await;
    assert_eq!(exit, Exit::Quit);
    assert!(frames >= 2);
    assert_eq!(
        sent(&mut rx),
        [Reply::Permission {
            request_id: "per_2028f0000001".into(),
            reply: "reject".into(),
            message: None,
        }],
        "the early y was dropped; the n typed after the frame answered"
    );
}

/// Through the real loop, on the real clock: a typist who never pauses
/// never arms a prompt, however slow a frame is. A `y` is dropped while
/// the prompt arms; the frame it causes takes 700 ms to draw, and a second
/// `y` typed during that frame is handled after it: timed by when it was
/// processed it would follow 700 ms of quiet (armed, 300 ms), but it may
/// have been typed as the frame began, so it is dropped too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_frame_is_not_a_pause_in_typing() {
    let (mut app, mut rx) = live_app();
    app.panes.prompts.arming = Duration::from_millis(300);
    feed(&mut app, RM.as_bytes());
    // The frame after the first y is the slow one; then quiet, then q.
    let (exit, frames) = run_typing(
        &mut app,
        2,
        Duration::from_millis(700),
        'y',
        &[(100, 'y'), (2000, 'q')],
    )
    .await;
    assert_eq!(exit, Exit::Quit);
    assert!(frames >= 2);
    assert!(
        sent(&mut rx).is_empty(),
        "no y answered: the typist never paused"
    );
}
