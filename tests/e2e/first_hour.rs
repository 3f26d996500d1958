//! The first hour, as a newcomer types: the way to help and the way out
//! are always on the status line, F1 opens help like `?`, help at 80
//! columns wraps what a key does instead of cutting it, and a key that does
//! nothing says so in passing and then the status line goes quiet again.

use crate::support;

use std::time::{Duration, Instant};

use support::tmux::{Tmux, player_position};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

fn status(screen: &str) -> &str {
    screen.lines().last().unwrap_or("")
}

#[test]
fn help_and_quit_stay_on_the_status_line_at_80_and_120_columns() {
    for (w, h) in [(80, 24), (120, 40)] {
        let t = Tmux::start_sized(&format!("hints{w}"), w, h);
        t.line(&format!("{} demo", bin()));
        t.wait_for("the demo", |s| s.contains("Sessions"));
        for focus in ["the list", "the turns"] {
            let screen = t.wait_for(&format!("hints with {focus} focused"), |s| {
                status(s).contains("? help") && status(s).contains("q quit")
            });
            assert!(status(&screen).ends_with("? help q quit"), "{w}: {screen}");
            t.keys(&["Tab"]);
        }
        t.keys(&["q"]);
        t.assert_terminal_restored();
    }
}

#[test]
fn f1_opens_help_and_help_at_80_columns_wraps_instead_of_cutting() {
    let t = Tmux::start_sized("f1", 80, 24);
    t.line(&format!("{} demo", bin()));
    t.wait_for("the demo", |s| s.contains("Sessions"));
    t.keys(&["F1"]);
    let help = t.wait_for("help", |s| s.contains(" Keys ("));
    // The longest description of the first group, whole over two lines.
    assert!(
        help.contains("show or hide the session list (a ")
            && help.contains("one-line bar when hidden or narrow)"),
        "{help}"
    );
    let inside: Vec<&str> = help.lines().filter(|l| l.contains('│')).collect();
    assert!(
        inside.iter().all(|l| !l.contains('…')),
        "a description was cut:\n{help}"
    );
    t.keys(&["F1"]);
    t.wait_for("help closed", |s| !s.contains(" Keys ("));
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn an_unbound_key_says_so_once_and_the_notice_leaves_by_itself() {
    let t = Tmux::start_sized("unbound", 100, 30);
    t.line(&format!(
        "{} replay --start end {}/assets/demo.jsonl",
        bin(),
        env!("CARGO_MANIFEST_DIR")
    ));
    // The player's own status line, not the one shown while the file is
    // still read: a key pressed before it would be answered on a line
    // that the player's then replaces (seen in CI under load).
    t.wait_for("the recording at its end", |s| {
        s.contains("Sessions") && player_position(s).is_some_and(|(n, all)| n == all && n > 0)
    });
    t.keys(&["Z"]);
    t.wait_for("the notice", |s| {
        status(s).contains("Z does nothing here (? for help)")
    });
    let said = Instant::now();
    t.wait_for_secs("the notice gone", 15, |s| {
        !status(s).contains("does nothing")
    });
    let lasted = said.elapsed();
    assert!(
        lasted >= Duration::from_secs(4),
        "gone after only {lasted:?}"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
