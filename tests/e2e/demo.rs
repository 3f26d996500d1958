//! The demo as a newcomer meets it: it stays on the session it opened
//! with (nothing moves the view but the person), and when it has played it
//! stops and says what to try next.

use crate::support;

use std::time::{Duration, Instant};

use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

/// The title on the selected row of the session list (marked `›`).
fn selected_title(screen: &str) -> Option<String> {
    let line = screen.lines().find(|l| l.trim_start().starts_with('›'))?;
    let row = line.split('│').next()?;
    // "› · Title   12s": drop the marker, the status glyph and the age.
    let words: Vec<&str> = row.split_whitespace().skip(2).collect();
    let title = match words.last() {
        Some(age) if age.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
            &words[..words.len() - 1]
        }
        _ => &words[..],
    };
    Some(title.join(" "))
}

fn sessions_listed(screen: &str) -> usize {
    screen
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Sessions "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_demo_stays_on_its_first_session_while_others_arrive() {
    let t = Tmux::start_sized("demo-stay", 120, 40);
    t.line(&format!("{} demo", bin()));
    t.wait_for("the demo", |s| selected_title(s).is_some());
    let start = Instant::now();
    let mut shown: Vec<String> = Vec::new();
    let mut most_sessions = 0;
    while start.elapsed() < Duration::from_secs(20) {
        let screen = t.capture();
        most_sessions = most_sessions.max(sessions_listed(&screen));
        if let Some(title) = selected_title(&screen)
            && shown.last() != Some(&title)
        {
            shown.push(title);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    // A session is renamed once, from its creation time to a summary; any
    // other change of the selected title is the view moving by itself.
    let provisional = shown
        .iter()
        .filter(|t| t.starts_with("New session"))
        .count();
    let named = shown.len() - provisional;
    assert!(provisional <= 1 && named <= 1, "the view moved: {shown:?}");
    assert!(
        most_sessions >= 2,
        "other sessions arrived meanwhile ({most_sessions} listed)"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn the_demo_ends_paused_and_says_what_to_try_next() {
    let t = Tmux::start_sized("demo-end", 120, 40);
    // No opencode database: `u` says so, what it reads and how to leave.
    t.line(&format!(
        "XDG_DATA_HOME='{}' {} demo --speed 64",
        t.home().display(),
        bin()
    ));
    let screen = t.wait_for_secs("the end of the demo", 30, |s| s.contains("demo over"));
    let status = screen.lines().last().unwrap_or("");
    assert!(status.contains('■'), "ended and paused: {status}");
    assert!(
        status.contains("demo over · j/k enter: another session · 0 P: again · ?: all keys"),
        "{status}"
    );
    // The hint's keys work: the next session opens.
    let before = selected_title(&screen);
    t.keys(&["j"]);
    t.wait_for("another session selected", |s| selected_title(s) != before);
    // The demo keeps no archive, and says so (no flag was passed).
    t.keys(&["F"]);
    t.wait_for("F's answer", |s| s.contains("the demo keeps no archive"));
    t.keys(&["u"]);
    let usage = t.wait_for("the usage view", |s| s.contains("closes it"));
    assert!(usage.contains("no opencode database"), "{usage}");
    t.keys(&["Escape"]);
    t.wait_for("the usage view closed", |s| !s.contains("closes it"));
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
