//! The turns get the width: the side panel takes columns only when it has
//! something to show (or was asked for with its key), and the session list
//! is as wide as the titles in view need, up to its limit. Snapshots at
//! 80×24, 120×40 and 200×50.

use crate::common;

use common::{app_with, feed, fixture, press, screen};
use ocview::app::App;

/// A fixed wall clock, so ages and spinners are stable.
const NOW: i64 = 1_795_339_400_000;

fn ended(bytes: &[u8]) -> App {
    let mut app = app_with(bytes);
    app.now_ms = NOW;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app.on_source(ocview::source::msg::SourceMsg::State(
        ocview::source::msg::SourceState::Ended,
    ));
    app
}

fn demo() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap()
}

/// One session with a short title and a message, no todos, no files.
fn short_session(id: &str, title: &str) -> String {
    session_at(id, title, NOW - 1000)
}

/// The same, last updated at `ms`.
fn session_at(id: &str, title: &str, ms: i64) -> String {
    format!(
        "{}\n{}\n{}\n",
        format_args!(
            r#"{{"type":"session.created","properties":{{"sessionID":"{id}","info":{{"id":"{id}","title":"{title}","directory":"/p","time":{{"created":{ms},"updated":{ms}}}}}}}}}"#
        ),
        format_args!(
            r#"{{"type":"message.updated","properties":{{"sessionID":"{id}","info":{{"id":"msg_{id}","sessionID":"{id}","role":"user","time":{{"created":{ms}}}}}}}}}"#
        ),
        format_args!(
            r#"{{"type":"message.part.updated","properties":{{"sessionID":"{id}","part":{{"id":"prt_{id}","messageID":"msg_{id}","sessionID":"{id}","type":"text","text":"hello"}}}}}}"#
        ),
    )
}

fn todos(id: &str) -> String {
    format!(
        r#"{{"type":"todo.updated","properties":{{"sessionID":"{id}","todos":[{{"id":"1","content":"write the tests","status":"in_progress","priority":"high"}},{{"id":"2","content":"ship it","status":"pending","priority":"low"}}]}}}}"#
    ) + "\n"
}

#[test]
fn the_demo_at_120x40_gives_the_turns_80_columns_and_no_empty_side_panel() {
    let mut app = ended(&demo());
    let s = screen(&mut app, 120, 40);
    assert!(
        app.areas.turns.width >= 80,
        "turns {} wide:\n{s}",
        app.areas.turns.width
    );
    assert!(!s.contains("Todos 0/0"), "an empty side panel:\n{s}");
    insta::assert_snapshot!("demo_120x40", s);
    let s = screen(&mut app, 80, 24);
    insta::assert_snapshot!("demo_80x24", s);
    // Wide: the selected session has no todos, no files and little context,
    // so the panel stays away and the turns take the rest.
    let s = screen(&mut app, 200, 50);
    assert!(app.areas.side.is_none(), "{s}");
    assert_eq!(app.areas.turns.width, 200 - app.areas.sessions.width, "{s}");
    insta::assert_snapshot!("demo_200x50", s);
}

#[test]
fn the_side_panel_comes_with_todos_and_is_gone_without() {
    let mut app = ended(short_session("ses_a", "Fix the build").as_bytes());
    let before = screen(&mut app, 200, 50);
    assert!(app.areas.side.is_none(), "{before}");
    assert!(!before.contains("Todos"), "{before}");
    feed(&mut app, todos("ses_a").as_bytes());
    let after = screen(&mut app, 200, 50);
    let side = app.areas.side.expect("the side panel, docked");
    assert_eq!(side.width, 38);
    assert!(after.contains("Todos 0/2"), "{after}");
    assert!(after.contains("write the tests"), "{after}");
    insta::assert_snapshot!("todos_arrived_200x50", after);
    // Where the panel would leave the turns fewer than 80 columns, the
    // todos (also cards in the turn view) do not take them by themselves.
    let s = screen(&mut app, 120, 40);
    assert!(app.areas.side.is_none(), "{s}");
    assert!(app.areas.turns.width >= 80, "{s}");
    insta::assert_snapshot!("todos_120x40", s);
}

#[test]
fn t_shows_an_empty_panel_and_hides_it_again() {
    let mut app = ended(short_session("ses_a", "Fix the build").as_bytes());
    screen(&mut app, 200, 50);
    assert!(app.areas.side.is_none());
    press(&mut app, &["t"]);
    let shown = screen(&mut app, 200, 50);
    assert!(app.areas.side.is_some(), "{shown}");
    assert!(
        shown.contains("Todos 0/0") && shown.contains("Modified files 0"),
        "{shown}"
    );
    press(&mut app, &["t"]);
    let hidden = screen(&mut app, 200, 50);
    assert!(app.areas.side.is_none(), "{hidden}");
    // A panel that shows by itself hides with the key, and stays hidden
    // when todos come.
    let mut app = ended(
        format!(
            "{}{}",
            short_session("ses_a", "Fix the build"),
            todos("ses_a")
        )
        .as_bytes(),
    );
    screen(&mut app, 200, 50);
    assert!(app.areas.side.is_some());
    press(&mut app, &["t"]);
    screen(&mut app, 200, 50);
    assert!(app.areas.side.is_none());
    // Narrow: still an overlay over the turns, opened and closed by `t`.
    let mut app = ended(short_session("ses_a", "Fix the build").as_bytes());
    press(&mut app, &["t"]);
    let overlay = screen(&mut app, 80, 24);
    assert!(overlay.contains("Todos 0/0"), "{overlay}");
    press(&mut app, &["t"]);
    assert!(!screen(&mut app, 80, 24).contains("Todos"));
}

#[test]
fn the_side_panel_comes_for_modified_files() {
    let mut app = ended(&fixture("b_edit_write_diff", "event.jsonl"));
    let s = screen(&mut app, 200, 50);
    assert!(app.areas.side.is_some(), "{s}");
    assert!(s.contains("Modified files 2"), "{s}");
}

#[test]
fn the_list_is_as_wide_as_its_titles_need() {
    let mut app = ended(
        format!(
            "{}{}",
            short_session("ses_a", "Fix it"),
            short_session("ses_b", "Docs")
        )
        .as_bytes(),
    );
    app.panes.list_shown = Some(true);
    let s = screen(&mut app, 120, 40);
    // Short titles: the floor, not the configured 34 columns.
    assert_eq!(app.areas.sessions.width, 22, "{s}");
    assert_eq!(app.areas.turns.width, 98, "{s}");
    insta::assert_snapshot!("short_titles_120x40", s);
    // A longer title widens the list to what it needs ("› · " + title + a
    // space + its age "now" + the border)...
    let title = "Make the session list fit";
    feed(&mut app, short_session("ses_c", title).as_bytes());
    screen(&mut app, 120, 40);
    assert_eq!(
        app.areas.sessions.width as usize,
        4 + title.len() + 1 + 3 + 1
    );
    // ... up to its limit, where the title is cut.
    let long = "A very long title that would take half of the screen if it could";
    feed(&mut app, short_session("ses_d", long).as_bytes());
    let s = screen(&mut app, 120, 40);
    assert_eq!(app.areas.sessions.width, 34, "{s}");
    assert!(s.contains("A very long title") && s.contains('…'), "{s}");
}

#[test]
fn the_list_measures_only_the_rows_in_view() {
    // A long title far below the rows on screen does not widen the list.
    let mut events = session_at(
        "ses_long",
        "An old session whose title is long",
        NOW - 3_600_000,
    );
    for i in 0..40 {
        events.push_str(&short_session(&format!("ses_{i:02}"), "Short"));
    }
    let mut app = ended(events.as_bytes());
    app.panes.list_shown = Some(true);
    press(&mut app, &["g"]);
    let s = screen(&mut app, 120, 20);
    assert!(!s.contains("An old session"), "{s}");
    assert_eq!(app.areas.sessions.width, 22, "{s}");
    // Moved to it, the list widens to show it whole, in the same frame.
    press(&mut app, &["G"]);
    let s = screen(&mut app, 120, 20);
    assert!(s.contains("An old session"), "{s}");
    assert_eq!(app.areas.sessions.width, 34, "{s}");
}
