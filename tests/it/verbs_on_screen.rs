//! Verbs act on what is on screen (issue 24, points 7 and 8), drawn on the
//! TestBackend: the list search says "searching…" until it is done and
//! opens the session that holds a hit; `y`, `}` and `{` start from the
//! screen; `space` folds a card a search hit opened; the jump list filters.

use crate::common;

use common::built::{a_word_in_one_session, cards_far_apart};
use common::{app_with, press, screen};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ocview::app::{App, Focus};
use ocview::render::theme::Role;

fn app(bytes: &[u8]) -> App {
    let mut app = app_with(bytes);
    app.now_ms = 1_795_339_400_000;
    app
}

fn session_id(app: &App, title: &str) -> String {
    app.store
        .sessions()
        .iter()
        .find(|s| s.title().contains(title))
        .unwrap_or_else(|| panic!("no session {title:?}"))
        .info
        .id
        .clone()
}

fn open(app: &mut App, title: &str) {
    app.selected = Some(session_id(app, title));
    app.focus = Focus::Turns;
}

fn typed(app: &mut App, text: &str) {
    let keys: Vec<String> = text.chars().map(|c| c.to_string()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    press(app, &keys);
}

/// Keys as typed before the search worker has answered.
fn typed_before_the_answer(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
}

/// What `y` (or `o`, `e`) would act on, as text.
fn target(app: &App) -> String {
    app.verb_target().map(|(c, _)| c.text).unwrap_or_default()
}

#[test]
fn the_list_search_says_searching_until_done_and_never_no_match_before() {
    let mut app = app(&a_word_in_one_session());
    app.focus = Focus::Sessions;
    screen(&mut app, 100, 12);
    press(&mut app, &["/"]);
    typed_before_the_answer(&mut app, "zanzibar");
    let searching = screen(&mut app, 100, 12);
    insta::assert_snapshot!("list_search_searching", searching);
    assert!(searching.contains("searching… 0/2"), "{searching}");
    assert!(
        searching.contains("searching… 0 of 2 sessions"),
        "{searching}"
    );
    assert!(!searching.contains("no session matches"), "{searching}");
    app.on_search_results();
    let done = screen(&mut app, 100, 12);
    assert!(!done.contains("searching"), "{done}");
    assert!(
        done.lines()
            .any(|l| l.contains("Beta plans") && l.contains("1 hit")),
        "{done}"
    );

    // A word nowhere: "searching…" first, "no session matches" once done.
    press(&mut app, &["esc", "/"]);
    typed_before_the_answer(&mut app, "qqqxx");
    let s = screen(&mut app, 100, 12);
    assert!(
        s.contains("searching…") && !s.contains("no session matches"),
        "{s}"
    );
    app.on_search_results();
    let s = screen(&mut app, 100, 12);
    assert!(
        s.contains("no session matches") && !s.contains("searching"),
        "{s}"
    );
}

#[test]
fn enter_on_a_content_only_hit_opens_its_session_at_the_hit() {
    let mut app = app(&a_word_in_one_session());
    app.focus = Focus::Sessions;
    screen(&mut app, 110, 20);
    let beta = session_id(&app, "Beta plans");
    // The selection is on the other session when the filter is typed.
    app.selected = Some(session_id(&app, "Alpha notes"));
    press(&mut app, &["/"]);
    typed(&mut app, "zanzibar");
    press(&mut app, &["enter"]);
    assert_eq!(app.selected.as_deref(), Some(beta.as_str()));
    assert_eq!(app.focus, Focus::Turns);
    let s = screen(&mut app, 110, 20);
    assert!(s.contains("The ship sails to zanzibar at dawn."), "{s}");
    assert!(s.contains("/zanzibar") && s.contains("1/1"), "{s}");
    // The hit is marked as the current one, 30 exchanges up from the end.
    let current = common_cells_with_bg(&mut app, Role::MatchCurrent, 110, 20);
    assert_eq!(current, vec!["zanzibar".to_string()]);
    assert!(!s.contains("filler answer 29"), "{s}");
}

#[test]
fn enter_before_the_search_found_anything_opens_the_first_hit_found() {
    let mut app = app(&a_word_in_one_session());
    app.focus = Focus::Sessions;
    screen(&mut app, 110, 20);
    let beta = session_id(&app, "Beta plans");
    app.selected = Some(session_id(&app, "Alpha notes"));
    press(&mut app, &["/"]);
    typed_before_the_answer(&mut app, "zanzibar");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    // Not the session that was selected: nothing opens before a hit.
    assert_eq!(app.focus, Focus::Sessions);
    assert_eq!(
        app.notice.as_deref(),
        Some("searching… the first session found opens")
    );
    app.on_search_results();
    assert_eq!(app.selected.as_deref(), Some(beta.as_str()));
    assert_eq!(app.focus, Focus::Turns);
    let s = screen(&mut app, 110, 20);
    assert!(s.contains("The ship sails to zanzibar at dawn."), "{s}");
    assert_eq!(app.notice, None);
}

/// Cells drawn with a role's background, as text per row.
fn common_cells_with_bg(app: &mut App, role: Role, width: u16, height: u16) -> Vec<String> {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(ratatui::layout::Rect::new(0, 0, width, height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    let bg = app.theme.style(role).bg.expect("the role has a background");
    let buf = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .filter(|&x| buf[(x, y)].bg == bg)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .filter(|row| !row.is_empty())
        .collect()
}

#[test]
fn y_acts_on_the_card_on_screen_not_one_scrolled_away() {
    let mut app = app(&cards_far_apart());
    open(&mut app, "Cards far apart");
    screen(&mut app, 100, 24);
    press(&mut app, &["g"]);
    screen(&mut app, 100, 24);
    press(&mut app, &["J"]);
    screen(&mut app, 100, 24);
    assert!(target(&app).contains("OLD-CARD"), "{}", target(&app));
    // At the end, the old card is far above: the card on screen is copied.
    press(&mut app, &["G"]);
    let s = screen(&mut app, 100, 24);
    assert!(!s.contains("OLD-CARD") && s.contains("NEW-CARD"), "{s}");
    let t = target(&app);
    assert!(t.contains("NEW-CARD") && !t.contains("OLD-CARD"), "{t}");
}

#[test]
fn next_card_moves_from_the_screen_when_the_selection_is_off_it() {
    let mut app = app(&cards_far_apart());
    open(&mut app, "Cards far apart");
    screen(&mut app, 100, 24);
    press(&mut app, &["g"]);
    screen(&mut app, 100, 24);
    press(&mut app, &["J"]);
    screen(&mut app, 100, 24);
    press(&mut app, &["G"]);
    screen(&mut app, 100, 24);
    // Not the card after the old one (the middle one, far above): the
    // first card below the top of what is visible.
    press(&mut app, &["}"]);
    let s = screen(&mut app, 100, 24);
    assert!(target(&app).contains("NEW-CARD"), "{}", target(&app));
    assert!(s.contains("NEW-CARD"), "{s}");
    // Up from the screen: the middle card, the first one above.
    press(&mut app, &["G", "k", "k", "k"]);
    screen(&mut app, 100, 24);
    press(&mut app, &["{"]);
    screen(&mut app, 100, 24);
    assert!(target(&app).contains("MID-CARD"), "{}", target(&app));
}

#[test]
fn space_folds_a_card_that_a_search_hit_opened() {
    let mut app = app(&cards_far_apart());
    open(&mut app, "Cards far apart");
    // Compact: every card folded to its header.
    press(&mut app, &["d", "d"]);
    // In the turn view (not the status line's search).
    let count = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[..lines.len() - 1]
            .iter()
            .map(|l| l.matches("MID-CARD").count())
            .sum::<usize>()
    };
    press(&mut app, &["/"]);
    typed(&mut app, "MID-CARD");
    press(&mut app, &["enter"]);
    let opened = screen(&mut app, 100, 24);
    press(&mut app, &["esc"]);
    let opened_plain = screen(&mut app, 100, 24);
    assert_eq!(count(&opened), count(&opened_plain), "{opened_plain}");
    press(&mut app, &["space"]);
    let folded = screen(&mut app, 100, 24);
    assert!(
        count(&folded) < count(&opened_plain),
        "space folds it:\n{opened_plain}\n{folded}"
    );
    insta::assert_snapshot!("hit_opened_card_folded", folded);
    press(&mut app, &["space"]);
    let again = screen(&mut app, 100, 24);
    assert!(
        count(&again) > count(&folded),
        "space opens it again:\n{again}"
    );
}

#[test]
fn the_jump_list_filters_as_you_type() {
    let mut app = app(&a_word_in_one_session());
    open(&mut app, "Beta plans");
    screen(&mut app, 100, 30);
    press(&mut app, &["i"]);
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("/31 · / filter"), "{s}");
    press(&mut app, &["/"]);
    typed(&mut app, "question 2");
    let s = screen(&mut app, 100, 30);
    insta::assert_snapshot!("jump_list_filtered", s);
    // "filler question 2" and 20 to 29.
    assert!(s.contains("/11 · /question 2▏"), "{s}");
    assert!(!s.contains("filler question 3 "), "{s}");
    assert!(!s.contains("where does the ship go?"), "{s}");
    press(&mut app, &["up", "up", "up", "up", "up", "up", "enter"]);
    assert!(app.overlay.is_none());
    let s = screen(&mut app, 100, 30);
    assert!(
        s.lines().nth(2).unwrap().contains("▌ You"),
        "the chosen prompt at the top:\n{s}"
    );
    assert!(
        s.lines().nth(3).unwrap().contains("filler question 2"),
        "{s}"
    );
}
