//! Copy, open and abort as the app decides them (drawn on ratatui's
//! TestBackend): what `y`/`Y` ask the loop to write, what the status line
//! says, the code block offer, and the abort confirmation with what it
//! sends, or why it sends nothing.

use crate::common;

use common::{feed, fixture, press, screen};
use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::verbs::Request;
use ocview::app::verbs::clipboard::Clipboard;
use ocview::source::live::reply::Reply;
use ocview::source::msg::ReplyOutcome;
use ocview::source::msg::SourceMsg;

const NOW: i64 = 1_795_339_400_000;

fn app_on(name: &str, recorded: bool) -> App {
    let mut app = App::new(Config::default(), "verbs test", recorded).unwrap();
    app.now_ms = NOW;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app.verbs.clipboard = Clipboard::Osc52 { screen: false };
    feed(&mut app, &fixture(name, "event.jsonl"));
    app
}

/// The text an OSC 52 request carries.
fn osc52_text(request: Option<Request>) -> String {
    let Some(Request::Write(bytes)) = request else {
        panic!("no OSC 52 write: {request:?}");
    };
    let s = String::from_utf8(bytes).unwrap();
    let payload = s
        .strip_prefix("\u{1b}]52;c;")
        .and_then(|p| p.strip_suffix('\u{7}'))
        .unwrap_or_else(|| panic!("not an OSC 52: {s:?}"));
    String::from_utf8(decode(payload)).unwrap()
}

fn decode(s: &str) -> Vec<u8> {
    let v = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(v).collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (18 - 6 * i)));
        for i in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

fn status_line(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

#[test]
fn y_copies_the_selected_card_and_says_what_and_how_big() {
    let mut app = app_on("a_bash_permission_once", true);
    screen(&mut app, 100, 30);
    press(&mut app, &["tab", "J", "y"]);
    let text = osc52_text(app.verbs.request.take());
    assert!(text.starts_with("$ ls -la\ntotal 24\n"), "{text}");
    assert!(text.ends_with("src\nexit 0\n"), "{text}");
    insta::assert_snapshot!("copy_status", screen(&mut app, 100, 30));
    // The next key clears it.
    press(&mut app, &["j"]);
    assert!(!screen(&mut app, 100, 30).contains("copied"));
}

#[test]
fn y_on_a_message_with_code_offers_its_blocks_and_a_digit_picks_one() {
    let mut app = app_on("f_reasoning_markdown", true);
    screen(&mut app, 120, 30);
    press(&mut app, &["tab", "y"]);
    assert!(app.verbs.request.is_none(), "nothing copied yet");
    let offer = screen(&mut app, 120, 30);
    insta::assert_snapshot!("copy_pick", status_line(&offer));
    // A digit past the blocks keeps the offer open.
    press(&mut app, &["7"]);
    assert!(app.verbs.request.is_none() && app.verbs.pick.is_some());
    press(&mut app, &["1"]);
    let code = osc52_text(app.verbs.request.take());
    assert!(!code.is_empty() && !code.contains("```"), "{code}");
    let said = status_line(&screen(&mut app, 120, 30));
    assert!(said.contains("copied code block 1 (python)"), "{said}");
    // `y y` takes the whole message, fences and all.
    press(&mut app, &["y", "y"]);
    let whole = osc52_text(app.verbs.request.take());
    assert!(
        whole.contains("```python") && whole.contains(&code),
        "{whole}"
    );
}

#[test]
fn big_y_copies_the_session_as_markdown() {
    let mut app = app_on("a_bash_permission_once", true);
    screen(&mut app, 100, 30);
    press(&mut app, &["Y"]);
    let md = osc52_text(app.verbs.request.take());
    assert!(md.starts_with("# "), "{md}");
    assert!(md.contains("## User\n\nPlease list the files in this project."));
    assert!(md.contains("**Tool `bash`** (completed)"));
    assert!(status_line(&screen(&mut app, 100, 30)).contains("copied session as Markdown"));
}

#[test]
fn big_y_redacts_secrets_and_y_copies_a_card_as_printed() {
    use crate::support::secrets;
    let (text, planted) = secrets::with_secrets();
    let mut app = App::new(Config::default(), "verbs test", true).unwrap();
    app.now_ms = NOW;
    app.verbs.clipboard = Clipboard::Osc52 { screen: false };
    feed(&mut app, text.as_bytes());
    screen(&mut app, 100, 30);
    press(&mut app, &["Y"]);
    let md = osc52_text(app.verbs.request.take());
    assert!(
        md.contains("deploy notes") && md.contains("[REDACTED:"),
        "{md}"
    );
    let leaked: Vec<&str> = planted
        .iter()
        .filter(|p| md.contains(&p.value))
        .map(|p| p.kind)
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}");
    let said = status_line(&screen(&mut app, 100, 30));
    assert!(said.contains("secrets redacted"), "{said}");
    // One card's copy is what the agent printed.
    press(&mut app, &["tab", "y"]);
    let card = osc52_text(app.verbs.request.take());
    assert!(planted.iter().any(|p| card.contains(&p.value)), "{card}");
}

#[test]
fn o_and_e_ask_the_loop_to_open_the_card() {
    use ocview::app::verbs::handover::Program;
    let mut app = app_on("a_bash_permission_once", true);
    screen(&mut app, 100, 30);
    press(&mut app, &["tab", "J", "o"]);
    match app.verbs.request.take() {
        Some(Request::Open(Program::Pager, c)) => {
            assert_eq!(c.what, "bash output");
            assert!(c.text.ends_with("exit 0\n"));
        }
        other => panic!("{other:?}"),
    }
    press(&mut app, &["e"]);
    assert!(matches!(
        app.verbs.request.take(),
        Some(Request::Open(Program::Editor, _))
    ));
    // O still shows the card whole in place.
    press(&mut app, &["O"]);
    assert!(app.verbs.request.is_none());
}

/// A live app whose session is busy, with a channel for what it sends.
fn busy_live_app() -> (App, tokio::sync::mpsc::UnboundedReceiver<Reply>, String) {
    let mut app = app_on("a_bash_permission_once", false);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    app.replies = Some(tx);
    let id = app.selected.clone().unwrap();
    let busy = format!(
        "{{\"t\": 9000, \"event\": {{\"id\": \"evt_x\", \"type\": \"session.status\", \"properties\": {{\"sessionID\": \"{id}\", \"status\": {{\"type\": \"busy\"}}}}}}}}\n"
    );
    feed(&mut app, busy.as_bytes());
    (app, rx, id)
}

#[test]
fn x_asks_naming_the_session_and_y_sends_the_abort() {
    let (mut app, mut rx, id) = busy_live_app();
    screen(&mut app, 100, 30);
    press(&mut app, &["X"]);
    let asked = screen(&mut app, 100, 30);
    insta::assert_snapshot!("abort_confirmation", asked);
    assert!(asked.contains(&id));
    assert!(rx.try_recv().is_err(), "nothing sent before the answer");
    press(&mut app, &["y"]);
    let sent = rx.try_recv().unwrap();
    assert_eq!(
        sent,
        Reply::Abort {
            session_id: id.clone(),
            directory: Some("/home/dev/demo-project".into())
        }
    );
    let shown = screen(&mut app, 100, 30);
    let stopping = status_line(&shown);
    assert!(
        stopping.contains("stopping List project files…"),
        "{stopping}"
    );
    let header = shown.lines().next().unwrap();
    assert!(header.contains("List project files  stopping…"), "{header}");
    assert!(app.verbs.aborting.contains(&id));
    app.on_source(SourceMsg::Aborted {
        session_id: id,
        outcome: ReplyOutcome::Sent,
    });
    let done = status_line(&screen(&mut app, 100, 30));
    assert!(done.contains("stopped List project files"), "{done}");
}

#[test]
fn any_other_key_keeps_it_running_and_sends_nothing() {
    let (mut app, mut rx, _) = busy_live_app();
    for key in ["n", "esc", "enter", "q"] {
        press(&mut app, &["X", key]);
        assert!(rx.try_recv().is_err(), "{key} sent an abort");
        assert!(!app.quit, "{key} went on to quit");
        assert!(app.verbs.confirm_abort.is_none());
    }
}

#[test]
fn x_sends_nothing_in_replay_read_only_or_when_idle() {
    let mut replay = app_on("a_bash_permission_once", true);
    press(&mut replay, &["X"]);
    assert!(replay.verbs.confirm_abort.is_none());
    assert!(status_line(&screen(&mut replay, 100, 30)).contains("replay: nothing is sent"));

    let mut read_only = app_on("a_bash_permission_once", false);
    press(&mut read_only, &["X"]);
    assert!(read_only.verbs.confirm_abort.is_none());
    assert!(status_line(&screen(&mut read_only, 100, 30)).contains("read-only"));

    let (mut idle, mut rx, _) = busy_live_app();
    let id = idle.selected.clone().unwrap();
    let line = format!(
        "{{\"t\": 9100, \"event\": {{\"id\": \"evt_y\", \"type\": \"session.status\", \"properties\": {{\"sessionID\": \"{id}\", \"status\": {{\"type\": \"idle\"}}}}}}}}\n"
    );
    feed(&mut idle, line.as_bytes());
    press(&mut idle, &["X"]);
    assert!(idle.verbs.confirm_abort.is_none());
    assert!(rx.try_recv().is_err());
    let said = status_line(&screen(&mut idle, 100, 30));
    assert!(said.contains("is not running: nothing to stop"), "{said}");
}

/// Past OSC 52's limit the first lines are copied, and the status line says
/// how much of how much, and where the rest is.
#[test]
fn a_copy_past_the_osc52_limit_keeps_whole_lines_and_says_so() {
    use ocview::app::verbs::clipboard::OSC52_LIMIT;
    let events = String::from_utf8(fixture("a_bash_permission_once", "event.jsonl")).unwrap();
    // The bash part's last update, with 3000 lines of output.
    let last = events
        .lines()
        .rfind(|l| l.contains("message.part.updated") && l.contains("\"tool\": \"bash\""))
        .unwrap();
    let mut ev: serde_json::Value = serde_json::from_str(last).unwrap();
    let big: String = (0..3000)
        .map(|i| format!("output line {i:05} {}\n", "x".repeat(30)))
        .collect();
    ev["t"] = serde_json::json!(99_000);
    ev["event"]["id"] = serde_json::json!("evt_2028ffffffffffffffffffffff");
    ev["event"]["properties"]["part"]["state"]["output"] = serde_json::json!(big);
    let mut app = app_on("a_bash_permission_once", true);
    feed(&mut app, format!("{ev}\n").as_bytes());
    screen(&mut app, 100, 30);
    press(&mut app, &["tab", "J", "y"]);
    let text = osc52_text(app.verbs.request.take());
    assert!(
        text.len() <= OSC52_LIMIT && text.len() > OSC52_LIMIT - 100,
        "{}",
        text.len()
    );
    assert!(text.starts_with("$ ls -la\noutput line 00000") && text.ends_with('\n'));
    let said = app.verbs.feedback.clone().unwrap();
    assert!(said.error);
    assert!(
        said.text.starts_with("copied only the first ")
            && said.text.contains("of 3002 lines")
            && said
                .text
                .contains("OSC 52 carries 73 KB at most; o or e opens it all"),
        "{}",
        said.text
    );
}

/// The confirmation, the code block offer and a long status message draw
/// on a tiny terminal too.
#[test]
fn verb_overlays_fit_a_tiny_terminal() {
    let (mut app, _rx, id) = busy_live_app();
    press(&mut app, &["X"]);
    for (w, h) in [(20, 6), (40, 10), (8, 3)] {
        let s = screen(&mut app, w, h);
        assert!(s.lines().count() == h as usize, "{s}");
    }
    assert_eq!(
        app.verbs
            .confirm_abort
            .as_ref()
            .map(|c| c.session_id.as_str()),
        Some(id.as_str())
    );
    let mut md = app_on("f_reasoning_markdown", true);
    screen(&mut md, 120, 30);
    press(&mut md, &["tab", "y"]);
    assert!(md.verbs.pick.is_some());
    for (w, h) in [(20, 6), (8, 3)] {
        screen(&mut md, w, h);
    }
}
