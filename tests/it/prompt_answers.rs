//! Answers as meant, and the answer keys always on screen (issue 24,
//! points 5 and 6), on a TestBackend: the own answer is a numbered row that
//! takes every key as text until enter or esc; a typed answer replaces a
//! single-choice pick and adds to a multiple-choice one; at 80×24 a long
//! command or a big diff shrinks while the line of choices stays.

use crate::common;

use common::{feed, press, screen};
use ocview::app::{App, Focus, Overlay};
use ocview::source::live::reply::Reply;
use tokio::sync::mpsc;

const SESSIONS: &str = r#"{"type":"session.created","properties":{"info":{"id":"ses_p","title":"Parent work","directory":"/p","time":{"created":1,"updated":2}}}}"#;

/// A single-choice question of two options, then a multiple-choice one of two.
const QUESTION: &str = r#"{"type":"question.asked","properties":{"id":"que_2028f0000002","sessionID":"ses_p","questions":[{"question":"Which linter?","header":"Linter","options":[{"label":"Ruff","description":"fast"},{"label":"Flake8","description":"classic"}]},{"question":"Which extras?","header":"Extras","multiple":true,"options":[{"label":"Format on save","description":""},{"label":"Strict mode","description":""}]}]}}"#;

/// A permission queued after the question: keys that leaked to the bar
/// (`]`, `y`) would reach it.
const BASH: &str = r#"{"type":"permission.asked","properties":{"id":"per_2028f0000009","sessionID":"ses_p","permission":"bash","patterns":["ls"],"always":["ls *"],"metadata":{"command":"ls"}}}"#;

fn app_with(lines: &[&str]) -> (App, mpsc::UnboundedReceiver<Reply>) {
    let mut app = App::new(ocview::app::config::Config::default(), "live test", false).unwrap();
    app.now_ms = 1_795_339_400_000;
    app.panes.prompts.arming = std::time::Duration::ZERO;
    let (tx, rx) = mpsc::unbounded_channel();
    app.replies = Some(tx);
    feed(&mut app, SESSIONS.as_bytes());
    feed(&mut app, lines.join("\n").as_bytes());
    (app, rx)
}

fn sent(rx: &mut mpsc::UnboundedReceiver<Reply>) -> Vec<Reply> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn answered(answers: Vec<Vec<&str>>) -> Vec<Reply> {
    vec![Reply::Answer {
        request_id: "que_2028f0000002".into(),
        answers: answers
            .into_iter()
            .map(|a| a.into_iter().map(String::from).collect())
            .collect(),
    }]
}

fn typed(app: &App) -> String {
    app.panes
        .prompts
        .editor
        .as_ref()
        .map(|e| e.lines().join("\n"))
        .unwrap_or_default()
}

/// The own-answer row is numbered after the options, its digit opens it,
/// and while it is open every key is text: digits, `q`, `?`, `y`, `n`,
/// space, the bar's and the panes' letters. Nothing is answered, nothing
/// moves, nothing opens, until enter takes the text.
#[test]
fn every_key_is_text_while_the_own_answer_is_open() {
    let (mut app, mut rx) = app_with(&[QUESTION, BASH]);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("3 ( ) ✎ type your own answer"), "{s}");
    assert!(s.contains("1-3 pick"), "{s}");
    press(&mut app, &["3"]);
    assert!(app.panes.prompts.editor.is_some(), "3 opens the own answer");
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("enter done · esc cancel"), "{s}");
    let keys = [
        "1", "2", "9", "q", "?", "y", "n", "a", "m", "x", "s", "v", "]", "[", "i", "/", "h", "l",
        "j", "k", "g", "G", "space", "ctrl-g", "Y", "}", "{",
    ];
    press(&mut app, &keys);
    assert_eq!(typed(&app), "129q?ynamxsv][i/hljkgG Y}{");
    assert!(!app.quit);
    assert_eq!(app.overlay, None, "no help, no view, no jump list");
    assert_eq!(app.focus, Focus::Prompt);
    assert!(sent(&mut rx).is_empty(), "nothing answered");
    assert_eq!(
        app.current_prompt().map(|p| p.2.request.id().to_string()),
        Some("que_2028f0000002".into()),
        "the bar stayed on the question"
    );
    assert_eq!(app.panes.prompts.drafts["que_2028f0000002"].tab, 0);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("129q?ynamxsv][i/hljkgG Y}{"), "{s}");
    // Enter takes it: a single-choice question moves on, as after a pick.
    press(&mut app, &["enter"]);
    assert!(app.panes.prompts.editor.is_none());
    let d = &app.panes.prompts.drafts["que_2028f0000002"];
    assert_eq!(
        (d.tab, d.typed[0].as_str()),
        (1, "129q?ynamxsv][i/hljkgG Y}{")
    );
    press(&mut app, &["s", "enter"]);
    assert_eq!(
        sent(&mut rx),
        answered(vec![vec!["129q?ynamxsv][i/hljkgG Y}{"], vec![]])
    );
}

/// Esc leaves the text box with what was there before.
#[test]
fn esc_cancels_the_own_answer_being_typed() {
    let (mut app, mut rx) = app_with(&[QUESTION]);
    screen(&mut app, 80, 24);
    press(&mut app, &["3", "m", "i", "n", "e", "enter", "left"]);
    press(&mut app, &["3", "backspace", "backspace", "x", "esc"]);
    assert!(app.panes.prompts.editor.is_none());
    assert_eq!(
        app.panes.prompts.drafts["que_2028f0000002"].typed[0],
        "mine"
    );
    assert!(screen(&mut app, 80, 24).contains("(•) ✎ your answer: mine"));
    assert!(sent(&mut rx).is_empty());
}

/// On a single-choice question a typed answer replaces the option picked
/// (and a pick made after replaces the typed one); on a multiple-choice
/// question it is added to the picks.
#[test]
fn a_typed_answer_replaces_a_single_pick_and_adds_to_multiple_ones() {
    let (mut app, mut rx) = app_with(&[QUESTION]);
    screen(&mut app, 80, 24);
    // Linter: pick Ruff (moves on), come back, type an own answer.
    press(&mut app, &["1", "left", "3", "m", "y", "p", "y", "enter"]);
    // Extras: toggle Format on save, add an own answer.
    press(&mut app, &["1", "3", "a", "l", "s", "o", "enter"]);
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("1 [x] Format on save") && s.contains("3 [x] ✎ your answer: also"),
        "{s}"
    );
    press(&mut app, &["left"]);
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("1 ( ) Ruff") && s.contains("3 (•) ✎ your answer: mypy"),
        "the typed answer is the one picked:\n{s}"
    );
    press(&mut app, &["s"]);
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("Which linter?: mypy") && s.contains("Which extras?: Format on save, also"),
        "{s}"
    );
    press(&mut app, &["enter"]);
    assert_eq!(
        sent(&mut rx),
        answered(vec![vec!["mypy"], vec!["Format on save", "also"]])
    );

    // A pick after the typed answer replaces it.
    let (mut app, mut rx) = app_with(&[QUESTION]);
    screen(&mut app, 80, 24);
    press(
        &mut app,
        &["3", "m", "y", "p", "y", "enter", "left", "2", "s", "enter"],
    );
    assert_eq!(sent(&mut rx), answered(vec![vec!["Flake8"], vec![]]));
}

/// The lines of a `len`-line command.
fn long_command(len: usize) -> String {
    (1..=len)
        .map(|i| format!("echo step-{i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An edit permission whose diff adds `len` lines to a new file.
fn big_edit(len: usize) -> String {
    let mut diff = format!(
        "Index: /p/src/big.py\n--- /p/src/big.py\n+++ /p/src/big.py\n@@ -0,0 +1,{len} @@\n"
    );
    for i in 1..=len {
        diff.push_str(&format!("+value_{i} = {i}\n"));
    }
    serde_json::json!({"type":"permission.asked","properties":{"id":"per_2028f0000003","sessionID":"ses_p","permission":"edit","patterns":["src/big.py"],"always":["*"],"metadata":{"filepath":"/p/src/big.py","diff":diff}}}).to_string()
}

fn big_bash(len: usize) -> String {
    serde_json::json!({"type":"permission.asked","properties":{"id":"per_2028f0000001","sessionID":"ses_p","permission":"bash","patterns":["echo *"],"always":["echo *"],"metadata":{"command":long_command(len)}}}).to_string()
}

const CHOICES: &str = "[y] allow once  [a] allow always  [n] reject  [m] reject with a message";

/// At 80×24 a 200-line diff shrinks to the rows the bar has, says how many
/// more lines `v` shows, and the line of choices and the keys stay.
#[test]
fn a_big_diff_leaves_the_choices_on_screen_at_80x24() {
    let (mut app, _rx) = app_with(&[&big_edit(200)]);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains(CHOICES), "{s}");
    assert!(s.contains("v view"), "{s}");
    assert!(
        s.contains("value_1 = 1") && s.contains("more lines (v shows all)"),
        "{s}"
    );
    insta::assert_snapshot!("big_diff_80x24", s);
    // The rejection's text box: how to send and cancel stays too.
    press(&mut app, &["m", "n", "o", "p", "e"]);
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("enter send · esc cancel") && s.contains("nope"),
        "{s}"
    );
    insta::assert_snapshot!("big_diff_reject_box_80x24", s);
}

#[test]
fn a_long_command_leaves_the_choices_on_screen_at_80x24() {
    let (mut app, _rx) = app_with(&[&big_bash(200)]);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains(CHOICES), "{s}");
    assert!(s.contains("$ echo step-1"), "{s}");
    assert!(s.contains("197 more lines (v shows all)"), "{s}");
    assert!(s.contains("v view"), "{s}");
    insta::assert_snapshot!("long_command_80x24", s);
}

/// `v` shows the whole prompt and names the answer keys it takes; an
/// answer that needs the bar (a message to type) closes it.
#[test]
fn the_whole_prompt_names_its_answer_keys() {
    let (mut app, _rx) = app_with(&[&big_edit(200)]);
    screen(&mut app, 80, 24);
    press(&mut app, &["v"]);
    assert_eq!(app.overlay, Some(Overlay::PromptView));
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("answer: y allow once · a allow always · n reject · m reject with a message"),
        "{s}"
    );
    press(&mut app, &["m"]);
    assert_eq!(app.overlay, None, "the text box is in the bar");
    assert!(screen(&mut app, 80, 24).contains("enter send · esc cancel"));

    let (mut app, _rx) = app_with(&[QUESTION]);
    screen(&mut app, 80, 24);
    press(&mut app, &["v"]);
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("answer: 1-3 pick · enter take · left/right question · s review · x dismiss"),
        "{s}"
    );
}

/// A narrow terminal: the choices get short labels rather than losing one.
#[test]
fn a_narrow_bar_keeps_every_answer_key() {
    let (mut app, _rx) = app_with(&[&big_edit(200)]);
    let s = screen(&mut app, 60, 24);
    assert!(
        s.contains("[y] once [a] always [n] reject [m] message"),
        "{s}"
    );
}
