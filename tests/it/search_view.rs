//! Search as a person uses it, drawn on the TestBackend: as you type in a
//! session, n/N, esc, and across sessions from the list.

use crate::common;

use common::{app_with, fixture, press, screen};
use ocview::app::{App, Focus};
use ocview::render::theme::Role;

fn demo() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap()
}

fn app(bytes: &[u8]) -> App {
    let mut app = app_with(bytes);
    app.now_ms = 1_795_339_400_000;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app
}

fn open(app: &mut App, title: &str) {
    let id = app
        .store
        .sessions()
        .iter()
        .find(|s| s.title().contains(title))
        .unwrap_or_else(|| panic!("no session {title:?}"))
        .info
        .id
        .clone();
    app.selected = Some(id);
    app.focus = Focus::Turns;
}

fn typed(app: &mut App, text: &str) {
    let keys: Vec<String> = text.chars().map(|c| c.to_string()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    press(app, &keys);
}

/// Cells drawn with a role's background, as text per row.
fn cells_with_bg(app: &mut App, role: Role, width: u16, height: u16) -> Vec<String> {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(ratatui::layout::Rect::new(0, 0, width, height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    let bg = app.theme.style(role).bg.expect("the role has a background");
    let buf = terminal.backend().buffer();
    let mut out = Vec::new();
    for y in 0..height {
        let row: String = (0..width)
            .filter(|&x| buf[(x, y)].bg == bg)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        if !row.is_empty() {
            out.push(row);
        }
    }
    out
}

fn status(app: &mut App) -> String {
    screen(app, 110, 32).lines().last().unwrap().to_string()
}

#[test]
fn typing_marks_every_match_and_n_steps_through_them() {
    let mut app = app(&demo());
    open(&mut app, "Refactoring plan");
    press(&mut app, &["/"]);
    typed(&mut app, "greet");
    let s = screen(&mut app, 110, 32);
    insta::assert_snapshot!("search_typing", s);
    assert!(status(&mut app).contains("/greet▏"), "{s}");
    let current = cells_with_bg(&mut app, Role::MatchCurrent, 110, 32);
    assert_eq!(current.len(), 1, "one current match: {current:?}");
    assert!(current[0].eq_ignore_ascii_case("greet"), "{current:?}");
    let others = cells_with_bg(&mut app, Role::Match, 110, 32);
    assert!(!others.is_empty(), "the other visible matches are marked");
    for row in &others {
        assert!(row.to_lowercase().contains("greet"), "{others:?}");
    }

    press(&mut app, &["enter"]);
    let kept = status(&mut app);
    let pos = |s: &str| {
        s.split_whitespace()
            .find(|w| w.contains('/') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .unwrap_or("")
            .to_string()
    };
    let first = pos(&kept);
    assert!(first.ends_with("/9"), "{kept}");
    press(&mut app, &["n"]);
    let second = pos(&status(&mut app));
    assert_ne!(first, second);
    press(&mut app, &["N"]);
    assert_eq!(pos(&status(&mut app)), first);
    // Smart case: an uppercase letter makes it exact.
    press(&mut app, &["/"]);
    typed(&mut app, "Greeter");
    assert!(status(&mut app).contains("/2"), "{}", status(&mut app));
    press(&mut app, &["esc"]);
    assert!(app.overlays.search.session.is_none());
    assert!(cells_with_bg(&mut app, Role::Match, 110, 32).is_empty());
    assert!(cells_with_bg(&mut app, Role::MatchCurrent, 110, 32).is_empty());
}

#[test]
fn a_match_in_a_folded_card_unfolds_it() {
    let mut app = app(&fixture("a_bash_permission_once", "event.jsonl"));
    open(&mut app, "");
    // Compact: the bash card is folded to its header.
    press(&mut app, &["d", "d"]);
    let folded = screen(&mut app, 100, 30);
    assert!(!folded.contains("650 Nov"), "{folded}");
    assert!(status(&mut app).contains("detail: compact"));
    press(&mut app, &["/"]);
    typed(&mut app, "opencode.json");
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("650 Nov 22"), "{s}");
    insta::assert_snapshot!("search_unfolds_card", s);
}

#[test]
fn the_list_filter_counts_hits_in_every_session_and_enter_opens_at_the_first() {
    let mut app = app(&demo());
    app.focus = Focus::Sessions;
    press(&mut app, &["/"]);
    typed(&mut app, "util");
    let s = screen(&mut app, 110, 32);
    insta::assert_snapshot!("search_across_sessions", s);
    // A session whose title does not say "util" is listed for its content.
    assert!(
        s.lines()
            .any(|l| l.contains("Refactoring plan") && l.contains("1 hit")),
        "{s}"
    );
    assert!(!s.contains("List project files"), "{s}");
    press(&mut app, &["enter"]);
    assert_eq!(app.focus, Focus::Turns);
    let st = status(&mut app);
    assert!(st.contains("/util") && st.contains("1/"), "{st}");
    let current = cells_with_bg(&mut app, Role::MatchCurrent, 110, 32);
    assert_eq!(current, vec!["util".to_string()]);
}
