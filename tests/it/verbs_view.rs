//! The session list folded and hidden, the prompt jump list, wall-clock
//! times and the context gauge, drawn on the TestBackend.

use crate::common;

use common::{app_with, press, screen};
use ocview::app::App;

fn demo() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap()
}

fn app() -> App {
    let mut app = app_with(&demo());
    app.now_ms = 1_795_339_400_000;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app
}

#[test]
fn the_list_folds_to_a_bar_below_100_columns_and_s_toggles_it() {
    let mut app = app();
    let narrow = screen(&mut app, 90, 24);
    insta::assert_snapshot!("list_bar_90x24", narrow);
    assert!(narrow.lines().next().unwrap().contains("Sessions 1/7 ▸"));
    let wide = screen(&mut app, 120, 24);
    assert!(wide.lines().next().unwrap().starts_with("Sessions 7"));
    press(&mut app, &["s"]);
    let hidden = screen(&mut app, 120, 24);
    assert!(hidden.lines().next().unwrap().contains("▸"), "{hidden}");
    assert!(hidden.contains("session list hidden (s shows it)"));
    press(&mut app, &["s"]);
    assert!(screen(&mut app, 90, 24).starts_with("Sessions 7"));
}

#[test]
fn the_jump_list_lists_prompts_with_times_and_enter_goes_there() {
    let mut app = app();
    // The list opens on the prompt of the turn at the top of the view.
    screen(&mut app, 100, 24);
    press(&mut app, &["tab", "i"]);
    let s = screen(&mut app, 100, 24);
    insta::assert_snapshot!("jump_list_100x24", s);
    let time = ocview::render::clock::wall_clock(1_795_339_374_700, app.clock_ms());
    assert!(s.contains("Prompts 1/2"), "{s}");
    assert!(s.contains(&time[..5]), "{time} in {s}");
    press(&mut app, &["j"]);
    assert!(screen(&mut app, 100, 24).contains("Prompts 2/2"));
    press(&mut app, &["k", "enter"]);
    let s = screen(&mut app, 100, 24);
    assert!(!s.contains("Prompts"));
    assert!(s.contains("msg 1/4"), "{s}");
    assert!(
        s.lines().nth(2).unwrap().contains("▌ You"),
        "the first prompt at the top:\n{s}"
    );
    assert!(
        s.lines().nth(3).unwrap().contains("Explain how you would"),
        "{s}"
    );
}

#[test]
fn times_and_the_context_gauge() {
    let mut app = app();
    let before = screen(&mut app, 200, 40);
    assert!(before.contains("ctx 2.3k/200k 1% · $0.00"), "{before}");
    // At 1% the side panel shows only when asked for.
    assert!(!before.contains("Context 1%"), "{before}");
    press(&mut app, &["t"]);
    let before = screen(&mut app, 200, 40);
    assert!(before.contains("Context 1%") && before.contains("2.3k of 200k tokens"));
    press(&mut app, &["w"]);
    let after = screen(&mut app, 200, 40);
    let created = app
        .selected_session()
        .unwrap()
        .messages
        .last()
        .unwrap()
        .info
        .created
        .unwrap();
    let stamp = ocview::render::clock::wall_clock(created, app.clock_ms());
    assert!(!before.contains(&stamp));
    assert!(after.contains(&stamp), "{stamp}:\n{after}");
}
