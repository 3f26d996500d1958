//! Every pane state, drawn on ratatui's TestBackend and kept as insta
//! snapshots (tests/snapshots). Review changes with `cargo insta review`, or
//! `INSTA_UPDATE=always cargo test` and a look at the diff.

use crate::common;

use common::{app_with, feed, fixture, press, screen};
use ocview::app::App;
use ocview::app::config::Config;

/// A fixed wall clock, so spinners and countdowns are stable.
const NOW: i64 = 1_795_339_400_000;

fn app(bytes: &[u8]) -> App {
    let mut app = app_with(bytes);
    app.now_ms = NOW;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app
}

fn ended(mut app: App) -> App {
    app.on_source(ocview::source::msg::SourceMsg::State(
        ocview::source::msg::SourceState::Ended,
    ));
    app
}

#[test]
fn empty_state() {
    let mut app = app(b"");
    insta::assert_snapshot!("empty_waiting", screen(&mut app, 80, 24));
    let mut app = ended(app);
    insta::assert_snapshot!("empty_ended", screen(&mut app, 80, 24));
    // No server yet: the turn pane says in full what the status line cuts.
    let mut app = App::new(Config::default(), "http://127.0.0.1:4999", false).unwrap();
    app.on_source(ocview::source::msg::SourceMsg::State(
        ocview::source::msg::SourceState::Reconnecting {
            attempt: 3,
            reason: "no server at http://127.0.0.1:4999 (start one: opencode serve --port 4999)"
                .into(),
        },
    ));
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("opencode serve") && s.contains("--port 4999"),
        "{s}"
    );
    insta::assert_snapshot!("empty_no_server_80x24", s);
}

/// Live-looking states on top of recorded sessions: a busy session, one in
/// retry with a countdown, one that failed, and a permission waiting in a
/// child session (which badges its parent).
fn live_states() -> Vec<u8> {
    let lines = [
        r#"{"type":"session.status","properties":{"sessionID":"ses_dfd6f2fb6ffeuG7wiFVzuFL4dv","status":{"type":"busy"}}}"#.to_string(),
        r#"{"type":"session.status","properties":{"sessionID":"ses_dfd6fec7affeeDwTwanXmz9Byg","status":{"type":"retry","attempt":3,"message":"Rate limited","next":1795339412000}}}"#.to_string(),
        r#"{"type":"session.error","properties":{"sessionID":"ses_dfd705bd5ffeOV3U02UYpF0oDi","error":{"name":"APIError","data":{"message":"invalid key"}}}}"#.to_string(),
        r#"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_dfd6f6cb2ffewxMhviEyTeJrgz","permission":"bash","patterns":["rm -rf build"],"metadata":{"command":"rm -rf build"},"always":["rm *"]}}"#.to_string(),
    ];
    lines.join("\n").into_bytes()
}

fn demo() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap()
}

#[test]
fn session_list_with_tree_statuses_and_badges() {
    let mut app = app(&demo());
    feed(&mut app, &live_states());
    let text = screen(&mut app, 100, 30);
    insta::assert_snapshot!("tree_statuses_badges", text);
    // Folding the parent hides the child; its badge stays on the parent.
    press(&mut app, &["j", "space"]);
    insta::assert_snapshot!("tree_folded", screen(&mut app, 100, 30));
}

#[test]
fn turn_view_follows_then_scrolls() {
    let mut app = ended(app(&fixture("f_reasoning_markdown", "event.jsonl")));
    press(&mut app, &["tab"]);
    insta::assert_snapshot!("turns_following", screen(&mut app, 100, 30));
    press(&mut app, &["k", "k", "k", "ctrl-u"]);
    let scrolled = screen(&mut app, 100, 30);
    assert!(scrolled.contains("scrolled"));
    insta::assert_snapshot!("turns_scrolled", scrolled);
    press(&mut app, &["g"]);
    insta::assert_snapshot!("turns_top", screen(&mut app, 100, 30));
    press(&mut app, &["G"]);
    assert_eq!(
        screen(&mut app, 100, 30),
        insta_free_following(&mut ended(self::app(&fixture(
            "f_reasoning_markdown",
            "event.jsonl"
        ))))
    );
}

fn insta_free_following(app: &mut App) -> String {
    press(app, &["tab"]);
    screen(app, 100, 30)
}

#[test]
fn cards_select_fold_and_open_a_child_session() {
    let mut app = ended(app(&fixture("e_task_subagent", "event.jsonl")));
    press(&mut app, &["tab", "g", "}"]);
    let selected = screen(&mut app, 100, 30);
    assert!(selected.contains("› ✓ ▾ task"), "{selected}");
    insta::assert_snapshot!("card_selected", selected);
    press(&mut app, &["space"]);
    let folded = screen(&mut app, 100, 30);
    assert!(
        folded.contains("› ✓ ▸ task") && !folded.contains("<task_result>"),
        "{folded}"
    );
    insta::assert_snapshot!("card_folded", folded);
    press(&mut app, &["space", "enter"]);
    let child = screen(&mut app, 100, 30);
    let header = child.lines().next().unwrap();
    assert!(header.contains("Inspect util module (@gen"), "{child}");
    assert!(header.contains("esc back"), "{header}");
    insta::assert_snapshot!("child_opened", child);
    press(&mut app, &["esc"]);
    assert!(
        screen(&mut app, 100, 30)
            .lines()
            .next()
            .unwrap()
            .contains("Delegate util inspection")
    );
}

#[test]
fn help_overlay() {
    let mut app = app(&demo());
    press(&mut app, &["?"]);
    insta::assert_snapshot!("help_80x24", screen(&mut app, 80, 24));
    press(&mut app, &["j", "j", "j"]);
    insta::assert_snapshot!("help_80x24_scrolled", screen(&mut app, 80, 24));
    insta::assert_snapshot!("help_200x60", screen(&mut app, 200, 60));
    press(&mut app, &["esc"]);
    assert!(!screen(&mut app, 80, 24).contains("Keys ("));
}

#[test]
fn side_panel_docked_when_wide_and_an_overlay_when_narrow() {
    let mut app = ended(app(&fixture("c_todowrite", "event.jsonl")));
    insta::assert_snapshot!("side_docked_200x60", screen(&mut app, 200, 60));
    let narrow = screen(&mut app, 80, 24);
    assert!(
        !narrow.contains("Todos"),
        "no side panel at 80 columns until asked"
    );
    press(&mut app, &["t"]);
    insta::assert_snapshot!("side_overlay_80x24", screen(&mut app, 80, 24));
    let mut app = ended(self::app(&fixture("b_edit_write_diff", "event.jsonl")));
    insta::assert_snapshot!("side_modified_files_160x40", screen(&mut app, 160, 40));
}

#[test]
fn whole_demo_at_80x24_and_200x60() {
    let mut app = ended(app(&demo()));
    insta::assert_snapshot!("demo_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("demo_200x60", screen(&mut app, 200, 60));
}

/// The demo's first hour: `F` says the demo keeps no archive (it blames
/// no flag nobody passed); `u` with no database says why, what it reads
/// and how to leave.
#[test]
fn the_demos_f_and_u_say_what_they_can_and_how_to_leave() {
    let mut app = ended(app(&demo()));
    app.archive.none_because = Some(ocview::app::overlays::archive_search::DEMO_KEEPS_NONE);
    press(&mut app, &["F"]);
    let f = screen(&mut app, 80, 24);
    assert!(!f.contains("--no-archive"), "{f}");
    insta::assert_snapshot!("demo_archive_key_80x24", f);
    app.overlays.usage.db = Some("/nonexistent/ocview-test/opencode.db".into());
    press(&mut app, &["u"]);
    // Its reader answers on a thread of its own.
    let mut u = screen(&mut app, 80, 24);
    for _ in 0..250 {
        if !u.contains("loading") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        u = screen(&mut app, 80, 24);
    }
    assert!(u.contains("closes it"), "{u}");
    insta::assert_snapshot!("demo_usage_no_database_80x24", u);
}

/// A todo too long for the card wraps under its text: nothing is cut.
#[test]
fn a_long_todo_wraps_in_its_card() {
    let long = "Update all callers of add_numbers across the services, the command-line tools and the notebooks, then run the linters";
    let bytes = String::from_utf8(fixture("c_todowrite", "event.jsonl"))
        .unwrap()
        .replace("Update all callers", long);
    let mut app = ended(app(bytes.as_bytes()));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("then run the linters"), "{text}");
    insta::assert_snapshot!("long_todo_80x24", text);
}

#[test]
fn filter_by_title_as_you_type() {
    let mut app = app(&demo());
    press(&mut app, &["/", "u", "t", "i", "l"]);
    insta::assert_snapshot!("filter_typing", screen(&mut app, 100, 20));
    // Enter opens the first session found at its first hit, with the
    // filter as the session's search; the list stays filtered.
    press(&mut app, &["enter"]);
    let kept = screen(&mut app, 100, 20);
    assert!(kept.contains("/util"));
    assert_eq!(app.focus, ocview::app::Focus::Turns);
    // The first esc leaves the search, the second the filter.
    press(&mut app, &["esc"]);
    assert!(app.overlays.search.session.is_none());
    assert!(screen(&mut app, 100, 20).contains("/util"));
    press(&mut app, &["esc"]);
    assert!(screen(&mut app, 100, 20).contains("Sessions 7"));
}

#[test]
fn wide_characters_never_spill_out_of_their_pane() {
    let title = "日本語のタイトル🎉e\u{301}e\u{301} with a long tail that goes on";
    let text = "漢字とかなの混じった長い文章が折り返される👩‍👩‍👧‍👦 e\u{301}\u{301} ok ".repeat(6);
    let events = format!(
        "{}\n{}\n{}\n",
        format_args!(
            r#"{{"type":"session.created","properties":{{"sessionID":"ses_w","info":{{"id":"ses_w","title":"{title}","directory":"/p","time":{{"created":1,"updated":2}}}}}}}}"#
        ),
        r#"{"type":"message.updated","properties":{"sessionID":"ses_w","info":{"id":"msg_a","sessionID":"ses_w","role":"user","time":{"created":1}}}}"#,
        format_args!(
            r#"{{"type":"message.part.updated","properties":{{"sessionID":"ses_w","part":{{"id":"prt_a","messageID":"msg_a","sessionID":"ses_w","type":"text","text":"{text}"}}}}}}"#
        ),
    );
    let mut app = app(events.as_bytes());
    // The folded one-line list holds the title too.
    for w in [80, 57, 31] {
        let s = screen(&mut app, w, 20);
        for line in s.lines() {
            assert!(
                unicode_width::UnicodeWidthStr::width(line) <= w as usize,
                "{w}: {line}"
            );
        }
        assert!(s.lines().next().unwrap().contains("日本語"), "{s}");
    }
    // The whole list, at every width.
    app.panes.list_shown = Some(true);
    for (w, h) in [(80, 24), (57, 20), (121, 30)] {
        let s = screen(&mut app, w, h);
        for line in s.lines() {
            assert!(
                unicode_width::UnicodeWidthStr::width(line) <= w as usize,
                "{w}: {line}"
            );
        }
        // The list's border column is intact on every row.
        assert!(
            s.lines()
                .skip(1)
                .take((h - 2) as usize)
                .all(|l| l.contains('│')),
            "{s}"
        );
    }
    insta::assert_snapshot!("wide_chars_80x24", screen(&mut app, 80, 24));
}

fn mouse(app: &mut App, kind: crossterm::event::MouseEventKind, column: u16, row: u16) -> bool {
    app.on_terminal_event(crossterm::event::Event::Mouse(
        crossterm::event::MouseEvent {
            kind,
            column,
            row,
            modifiers: crossterm::event::KeyModifiers::NONE,
        },
    ))
}

#[test]
fn mouse_wheel_scrolls_the_pane_under_it_and_clicks_select_and_fold() {
    use crossterm::event::{MouseButton, MouseEventKind};
    let mut app = ended(app(&demo()));
    let before = screen(&mut app, 100, 30);
    assert!(
        selected_row(&before).contains("Refactoring plan"),
        "{before}"
    );
    // Click the third row of the list (rows start under the list header).
    assert!(mouse(
        &mut app,
        MouseEventKind::Down(MouseButton::Left),
        5,
        3
    ));
    let clicked = screen(&mut app, 100, 30);
    assert!(
        selected_row(&clicked).contains("Inspect util module"),
        "{clicked}"
    );
    // The wheel over the turns scrolls them, and leaves follow mode.
    assert!(mouse(&mut app, MouseEventKind::ScrollUp, 60, 10));
    let wheeled = screen(&mut app, 100, 30);
    assert!(
        wheeled.lines().next().unwrap().contains("scrolled"),
        "{wheeled}"
    );
    // A click on a tool card folds it.
    let row = wheeled
        .lines()
        .position(|l| l.contains("✓ ▾ read"))
        .expect("a read card on screen");
    assert!(mouse(
        &mut app,
        MouseEventKind::Down(MouseButton::Left),
        60,
        row as u16
    ));
    let folded = screen(&mut app, 100, 30);
    assert!(folded.contains("✓ ▸ read"), "{folded}");
    // The wheel over the list moves the selection.
    assert!(mouse(&mut app, MouseEventKind::ScrollDown, 5, 5));
    assert!(selected_row(&screen(&mut app, 100, 30)).contains("Choose project setup"));
    // Outside every pane: nothing to do, no redraw.
    assert!(!mouse(&mut app, MouseEventKind::ScrollDown, 5, 29));
}

fn selected_row(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with('›'))
        .unwrap_or("")
        .to_string()
}

#[test]
fn diff_overlay_unified_and_side_by_side() {
    let mut app = ended(app(&fixture("b_edit_write_diff", "event.jsonl")));
    press(&mut app, &["D"]);
    let unified = screen(&mut app, 120, 30);
    assert!(
        unified.contains("Modified files") && unified.contains("2 +     # friendlier greeting"),
        "{unified}"
    );
    insta::assert_snapshot!("diff_unified_120x30", unified);
    let wide = screen(&mut app, 200, 30);
    assert!(
        wide.lines()
            .any(|l| l.contains("return 'hello ' + name") && l.contains("# friendlier greeting")),
        "old and new side by side:\n{wide}"
    );
    insta::assert_snapshot!("diff_side_by_side_200x30", wide);
    press(&mut app, &["j"]);
    let second = screen(&mut app, 120, 30);
    assert!(second.contains("circle_area"), "{second}");
    press(&mut app, &["esc"]);
    assert!(!screen(&mut app, 120, 30).contains("Modified files ("));
}

#[test]
fn detail_levels_and_whole_output() {
    let mut app = ended(app(&fixture("e_task_subagent", "event.jsonl")));
    press(&mut app, &["tab", "g"]);
    press(&mut app, &["d", "d"]);
    let compact = screen(&mut app, 100, 30);
    assert!(
        compact.contains("✓ ▸ task")
            && !compact.contains("<task_result>")
            && !compact.contains("It adds"),
        "{compact}"
    );
    press(&mut app, &["d"]);
    let normal = screen(&mut app, 100, 30);
    assert!(normal.contains("✓ ▾ task"), "{normal}");
}
