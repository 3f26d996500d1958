//! The prompt bar, step by step: every state as an insta snapshot at a
//! narrow and a wide size, and exactly the replies the keys send.

use crate::common;

use common::{feed, press, screen};
use ocview::app::{App, Focus};
use ocview::source::live::reply::Reply;
use ocview::source::msg::ReplyOutcome;
use ocview::source::msg::SourceMsg;
use tokio::sync::mpsc;

const NOW: i64 = 1_795_339_400_000;

const SESSIONS: &str = r#"{"type":"session.created","properties":{"info":{"id":"ses_p","title":"Parent work","directory":"/p","time":{"created":1,"updated":2}}}}
{"type":"session.created","properties":{"info":{"id":"ses_c","parentID":"ses_p","title":"Child (@general subagent)","directory":"/p","time":{"created":1,"updated":2}}}}"#;

const BASH: &str = r#"{"type":"permission.asked","properties":{"id":"per_2028f0000001","sessionID":"ses_c","permission":"bash","patterns":["rm -rf build"],"always":["rm *"],"metadata":{"command":"rm -rf build"},"tool":{"messageID":"msg_1","callID":"call_1"}}}"#;
const EDIT: &str = r#"{"type":"permission.asked","properties":{"id":"per_2028f0000003","sessionID":"ses_p","permission":"edit","patterns":["src/main.py"],"always":["*"],"metadata":{"filepath":"/p/src/main.py","diff":"Index: a\n--- a\n+++ a\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"}}}"#;
const QUESTION: &str = r#"{"type":"question.asked","properties":{"id":"que_2028f0000002","sessionID":"ses_p","questions":[{"question":"Which linter?","header":"Linter","options":[{"label":"Ruff","description":"fast"},{"label":"Flake8","description":"classic"}]},{"question":"Which extras?","header":"Extras","multiple":true,"options":[{"label":"Format on save","description":""},{"label":"Strict mode","description":""}]},{"question":"Anything else?","header":"Notes","options":[]}]}}"#;

fn app_with(lines: &[&str]) -> (App, mpsc::UnboundedReceiver<Reply>) {
    let mut app = App::new(ocview::app::config::Config::default(), "live test", false).unwrap();
    app.now_ms = NOW;
    // Arming has its own tests below; here a drawn prompt takes keys at once.
    app.panes.prompts.arming = std::time::Duration::ZERO;
    let (tx, rx) = mpsc::unbounded_channel();
    app.replies = Some(tx);
    feed(&mut app, SESSIONS.as_bytes());
    feed(&mut app, lines.join("\n").as_bytes());
    (app, rx)
}

/// The reply "allow once" to the edit permission.
fn edit_allowed_once() -> Reply {
    Reply::Permission {
        request_id: "per_2028f0000003".into(),
        reply: "once".into(),
        message: None,
    }
}

fn sent(rx: &mut mpsc::UnboundedReceiver<Reply>) -> Vec<Reply> {
    let mut out = Vec::new();
    while let Ok(r) = rx.try_recv() {
        out.push(r);
    }
    out
}

fn both(app: &mut App, name: &str) {
    insta::assert_snapshot!(format!("{name}_80x24"), screen(app, 80, 24));
    insta::assert_snapshot!(format!("{name}_140x40"), screen(app, 140, 40));
}

#[test]
fn a_permission_step_by_step() {
    let (mut app, mut rx) = app_with(&[BASH, EDIT]);
    assert_eq!(app.focus, Focus::Prompt, "the first prompt takes focus");
    let s = screen(&mut app, 100, 30);
    assert!(
        s.contains("1 of 2")
            && s.contains("Parent work › Child (@general subagent)")
            && s.contains("$ rm -rf build"),
        "{s}"
    );
    both(&mut app, "permission_choose");
    press(&mut app, &["a"]);
    both(&mut app, "permission_confirm_always");
    press(&mut app, &["esc"]);
    assert!(sent(&mut rx).is_empty(), "Esc backs out without answering");
    press(&mut app, &["m", "n", "o", "t", " ", "n", "o", "w"]);
    both(&mut app, "permission_reject_message");
    press(&mut app, &["enter"]);
    assert_eq!(
        sent(&mut rx),
        [Reply::Permission {
            request_id: "per_2028f0000001".into(),
            reply: "reject".into(),
            message: Some("not now".into())
        }]
    );
    both(&mut app, "permission_sending");
    // A second press while sending sends nothing more.
    press(&mut app, &["y", "y"]);
    assert!(sent(&mut rx).is_empty());
    app.on_source(SourceMsg::Replied {
        request_id: "per_2028f0000001".into(),
        outcome: ReplyOutcome::Sent,
    });
    // The next in the queue: the edit, with its diff.
    let s = screen(&mut app, 100, 30);
    assert!(
        s.contains("1 of 1") && s.contains("permission · edit") && s.contains("return 2"),
        "{s}"
    );
    both(&mut app, "permission_edit_diff");
    press(&mut app, &["v"]);
    both(&mut app, "permission_full_view");
    press(&mut app, &["esc", "y"]);
    assert_eq!(sent(&mut rx), [edit_allowed_once()]);
    app.on_source(SourceMsg::Replied {
        request_id: "per_2028f0000003".into(),
        outcome: ReplyOutcome::Failed("HTTP 500 on /permission: boom".into()),
    });
    let s = screen(&mut app, 100, 30);
    assert!(
        s.contains("not sent: HTTP 500"),
        "a failure keeps the prompt with a message:\n{s}"
    );
    both(&mut app, "permission_failed");
    press(&mut app, &["y"]);
    assert_eq!(
        sent(&mut rx).len(),
        1,
        "after a failure it can be sent again"
    );
    app.on_source(SourceMsg::Replied {
        request_id: "per_2028f0000003".into(),
        outcome: ReplyOutcome::AlreadyGone,
    });
    assert!(app.current_prompt().is_none());
    assert_ne!(
        app.focus,
        Focus::Prompt,
        "the bar lets go when the queue is empty"
    );
    assert!(app.notice.as_deref().unwrap().contains("already answered"));
}

#[test]
fn always_and_the_queue_keys() {
    let (mut app, mut rx) = app_with(&[BASH, QUESTION, EDIT]);
    assert!(screen(&mut app, 100, 30).contains("1 of 3"));
    press(&mut app, &["]"]);
    assert!(screen(&mut app, 100, 30).contains("question"));
    press(&mut app, &["]", "]"]);
    let s = screen(&mut app, 100, 30);
    assert!(
        s.contains("permission · bash"),
        "wraps around to the first:\n{s}"
    );
    press(&mut app, &["ctrl-g"]);
    assert_eq!(
        app.selected.as_deref(),
        Some("ses_c"),
        "jumps to the asking session"
    );
    press(&mut app, &["right", "enter"]);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("The server will remember: rm *"), "{s}");
    press(&mut app, &["enter"]);
    assert!(
        sent(&mut rx).is_empty(),
        "Enter does not confirm \"always\""
    );
    press(&mut app, &["y"]);
    assert_eq!(
        sent(&mut rx),
        [Reply::Permission {
            request_id: "per_2028f0000001".into(),
            reply: "always".into(),
            message: None
        }]
    );
}

#[test]
fn a_question_step_by_step() {
    let (mut app, mut rx) = app_with(&[QUESTION]);
    both(&mut app, "question_first");
    press(&mut app, &["1"]);
    both(&mut app, "question_multi");
    press(&mut app, &["1", "2", "down", "down", "space"]);
    press(&mut app, &["a", "l", "s", "o"]);
    both(&mut app, "question_typing");
    press(&mut app, &["enter", "right"]);
    // The third question has no options: its own answer is typed, and
    // Enter on a single-choice question's own answer moves on (here to the
    // review), as picking does.
    press(&mut app, &["space", "n", "o", "n", "e", "enter"]);
    both(&mut app, "question_review");
    press(&mut app, &["enter"]);
    assert_eq!(
        sent(&mut rx),
        [Reply::Answer {
            request_id: "que_2028f0000002".into(),
            answers: vec![
                vec!["Ruff".into()],
                vec!["Format on save".into(), "Strict mode".into(), "also".into()],
                vec!["none".into()]
            ],
        }]
    );
}

#[test]
fn typed_answers_stay_with_their_question_and_review_lists_the_unanswered() {
    let (mut app, mut rx) = app_with(&[QUESTION]);
    screen(&mut app, 100, 30);
    press(
        &mut app,
        &["down", "down", "space", "x", "y", "enter", "right"],
    );
    let s = screen(&mut app, 100, 30);
    assert!(
        !s.contains("xy"),
        "what was typed for the first question does not show on the third:\n{s}"
    );
    press(&mut app, &["s"]);
    let s = screen(&mut app, 100, 30);
    assert!(
        s.contains("Which linter?: xy") && s.matches("(unanswered)").count() == 2,
        "{s}"
    );
    press(&mut app, &["x"]);
    assert_eq!(
        sent(&mut rx),
        [Reply::Dismiss {
            request_id: "que_2028f0000002".into()
        }]
    );
}

#[test]
fn a_prompt_answered_elsewhere_leaves_the_queue_with_a_notice() {
    let (mut app, _rx) = app_with(&[BASH]);
    assert!(app.current_prompt().is_some());
    feed(&mut app, br#"{"type":"permission.replied","properties":{"sessionID":"ses_c","requestID":"per_2028f0000001","reply":"once"}}"#);
    assert!(app.current_prompt().is_none());
    assert!(app.notice.as_deref().unwrap().contains("another client"));
}

#[test]
fn replay_and_read_only_never_send() {
    let (mut app, _rx) = app_with(&[BASH]);
    app.replies = None;
    app.focus = Focus::Prompt;
    press(&mut app, &["y"]);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("read-only: answers are not sent"), "{s}");
    both(&mut app, "permission_read_only");
}

#[test]
fn a_permission_whose_tool_ended_is_not_offered() {
    let tool_done = r#"{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"ses_c","role":"assistant","time":{"created":1}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_c","type":"tool","tool":"bash","callID":"call_1","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":1,"end":2}}}}}"#;
    let (app, _rx) = app_with(&[BASH, tool_done]);
    assert!(app.current_prompt().is_none());
}

#[test]
fn a_new_prompt_rings_once_live_and_never_in_replay() {
    let (mut app, _rx) = app_with(&[BASH]);
    let alerts = app.attention.take();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0].contains("permission · bash") && alerts[0].contains("rm -rf build"));
    feed(&mut app, EDIT.as_bytes());
    assert_eq!(app.attention.take().len(), 1, "only the new one");
    feed(&mut app, BASH.as_bytes());
    assert!(
        app.attention.take().is_empty(),
        "the same prompt again: no second ring"
    );
    // Focused terminal: nothing.
    app.on_terminal_event(crossterm::event::Event::FocusGained);
    feed(&mut app, QUESTION.as_bytes());
    assert!(app.attention.take().is_empty());
    // A replay never rings.
    let mut replay = common::app_with(format!("{SESSIONS}\n{BASH}").as_bytes());
    assert!(replay.attention.take().is_empty());
}

#[test]
fn a_replayed_prompt_shows_the_answer_that_was_given_and_when() {
    let mut app = common::app_with(&common::fixture("a_bash_permission_once", "event.jsonl"));
    let notice = app.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("permission · bash") && notice.contains("answered once after"),
        "{notice}"
    );
    assert!(app.attention.take().is_empty());
}

/// Keys typed for one prompt never answer the next: a prompt that takes
/// focus takes answers only once it has been drawn and `prompt_arming_ms`
/// has passed; Enter on a permission looks (the whole prompt) and never
/// allows by default.
#[tokio::test(start_paused = true)]
async fn a_prompt_that_takes_focus_ignores_keys_until_it_is_armed() {
    let (mut app, mut rx) = app_with(&[QUESTION, EDIT]);
    app.panes.prompts.arming = std::time::Duration::from_millis(500);
    let settle = std::time::Duration::from_millis(600);
    // Not drawn yet: nothing is taken.
    press(&mut app, &["1"]);
    screen(&mut app, 100, 30);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("arming"), "{s}");
    tokio::time::advance(settle).await;
    let s = screen(&mut app, 100, 30);
    assert!(!s.contains("arming"), "{s}");
    assert!(s.contains("Which linter?"), "{s}");
    // Answer the question to its review step and submit it, then keep
    // typing as a fast typist would: Enter, y, a.
    press(&mut app, &["1", "s", "enter", "enter", "y", "a", "1"]);
    assert_eq!(sent(&mut rx).len(), 1, "only the question's answer");
    app.on_source(SourceMsg::Replied {
        request_id: "que_2028f0000002".into(),
        outcome: ReplyOutcome::Sent,
    });
    // The edit permission now has focus, drawn but arming.
    press(&mut app, &["y", "enter"]);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("permission · edit"), "{s}");
    press(&mut app, &["y", "enter", "a"]);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("keys are ignored"), "{s}");
    assert!(
        sent(&mut rx).is_empty(),
        "no answer reached a prompt not armed"
    );
    tokio::time::advance(settle).await;
    screen(&mut app, 100, 30);
    // Armed: Enter shows the whole prompt and sends nothing.
    press(&mut app, &["enter"]);
    assert!(sent(&mut rx).is_empty(), "Enter does not allow by default");
    assert_eq!(app.overlay, Some(ocview::app::Overlay::PromptView));
    press(&mut app, &["esc", "y"]);
    assert_eq!(sent(&mut rx), [edit_allowed_once()]);
}

/// A typist who keeps going while a new prompt arms (a held key, the rest
/// of an answer) keeps it arming: only a pause of the arming delay arms it.
#[tokio::test(start_paused = true)]
async fn keys_while_arming_start_the_delay_again() {
    let (mut app, mut rx) = app_with(&[EDIT]);
    app.panes.prompts.arming = std::time::Duration::from_millis(500);
    screen(&mut app, 100, 30);
    for _ in 0..10 {
        tokio::time::advance(std::time::Duration::from_millis(300)).await;
        press(&mut app, &["left", "enter", "y"]);
    }
    assert!(sent(&mut rx).is_empty(), "3 s of keys, none answered");
    tokio::time::advance(std::time::Duration::from_millis(600)).await;
    press(&mut app, &["y"]);
    assert_eq!(sent(&mut rx).len(), 1, "armed after a pause");
}

/// Every key of the bar is data: rebound in the config, the new key
/// answers, the old one does nothing, and the bar's hints and `?` say so.
#[test]
fn the_bars_keys_come_from_the_keymap_and_can_be_rebound() {
    let mut config = ocview::app::config::Config::default();
    config.keys.insert("allow_once".into(), vec!["o".into()]);
    config
        .keys
        .insert("prompt_view".into(), vec!["ctrl-v".into()]);
    config.keys.insert("confirm".into(), vec!["Y".into()]);
    let mut app = App::new(config, "live test", false).unwrap();
    app.now_ms = NOW;
    app.panes.prompts.arming = std::time::Duration::ZERO;
    let (tx, mut rx) = mpsc::unbounded_channel();
    app.replies = Some(tx);
    feed(&mut app, SESSIONS.as_bytes());
    feed(&mut app, EDIT.as_bytes());
    let s = screen(&mut app, 140, 40);
    assert!(s.contains("[o] allow once"), "{s}");
    assert!(s.contains("enter/ctrl-v view"), "{s}");
    // The old keys: y does not allow; v does not open the view.
    press(&mut app, &["y", "v"]);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.overlay, None);
    // Allow always asks for the rebound confirmation key.
    press(&mut app, &["a"]);
    assert!(screen(&mut app, 140, 40).contains("Y confirm"));
    press(&mut app, &["y"]);
    assert!(sent(&mut rx).is_empty(), "y no longer confirms");
    press(&mut app, &["esc", "o"]);
    assert_eq!(sent(&mut rx), vec![edit_allowed_once()]);
    // `?` lists the bar's actions with their names.
    app.focus = Focus::Turns;
    press(&mut app, &["?"]);
    let help = screen(&mut app, 200, 120);
    for name in [
        "allow_once",
        "reject_message",
        "prompt_view",
        "confirm",
        "diff_close",
        "list_close",
    ] {
        assert!(help.contains(name), "{name} in help:\n{help}");
    }
}
