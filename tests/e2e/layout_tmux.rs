//! The turns get the width, on the real binary in a real terminal (tmux):
//! the turn view's width is read from where the panes' borders (│) are on
//! the screen's first row.

use crate::support;

use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

/// The columns of the pane borders on the screen's first row: the list's
/// right border, then the side panel's left one when it is there.
fn borders(screen: &str) -> Vec<usize> {
    let first = screen.lines().next().unwrap_or("");
    let mut col = 0;
    let mut out = Vec::new();
    for ch in first.chars() {
        if ch == '│' {
            out.push(col);
        }
        col += unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
    }
    out
}

/// The turn view's width: from right of the list's border to the side
/// panel's (or the screen's edge).
fn turn_width(screen: &str, screen_width: usize) -> usize {
    let b = borders(screen);
    let left = b.first().map_or(0, |c| c + 1);
    b.get(1).copied().unwrap_or(screen_width) - left
}

#[test]
fn the_demo_at_120x40_gives_the_turn_view_80_columns() {
    let t = Tmux::start_sized("width120", 120, 40);
    t.line(&format!("{} demo", bin()));
    let screen = t.wait_for("the demo with a session open", |s| {
        s.contains("Sessions") && s.lines().next().is_some_and(|l| l.contains("idle"))
    });
    let width = turn_width(&screen, 120);
    assert!(width >= 80, "the turns get {width} columns:\n{screen}");
    assert_eq!(borders(&screen).len(), 1, "a side panel:\n{screen}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// A recording: a session opens, says something, and gets its todos a few
/// seconds later.
fn todos_later() -> String {
    let lines = [
        r#"{"t": 0, "event": {"type": "server.connected", "properties": {}}}"#,
        r#"{"t": 10, "event": {"type": "session.created", "properties": {"sessionID": "ses_t", "info": {"id": "ses_t", "title": "Fix the build", "directory": "/p", "time": {"created": 1, "updated": 1}}}}}"#,
        r#"{"t": 20, "event": {"type": "message.updated", "properties": {"sessionID": "ses_t", "info": {"id": "msg_u", "sessionID": "ses_t", "role": "user", "time": {"created": 1}}}}}"#,
        r#"{"t": 30, "event": {"type": "message.part.updated", "properties": {"sessionID": "ses_t", "part": {"id": "prt_u", "messageID": "msg_u", "sessionID": "ses_t", "type": "text", "text": "make the build green"}}}}"#,
        r#"{"t": 2000, "event": {"type": "todo.updated", "properties": {"sessionID": "ses_t", "todos": [{"id": "1", "content": "find the failing test", "status": "in_progress", "priority": "high"}]}}}"#,
    ];
    lines.join("\n") + "\n"
}

#[test]
fn the_side_panel_appears_when_todos_arrive_and_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("todos.jsonl");
    std::fs::write(&file, todos_later()).unwrap();
    let t = Tmux::start_sized("sidetodos", 160, 40);
    // A quarter of real time: the todos come 8 s in.
    t.line(&format!("{} replay --speed 0.25 {}", bin(), file.display()));
    let before = t.wait_for("the session, before its todos", |s| {
        s.contains("make the build green")
    });
    assert!(
        !before.contains("find the failing test"),
        "the todos came too soon to see the screen before them:\n{before}"
    );
    assert_eq!(borders(&before).len(), 1, "a side panel already:\n{before}");
    assert_eq!(turn_width(&before, 160), 160 - 1 - borders(&before)[0]);
    let after = t.wait_for("the side panel with the todos", |s| {
        s.contains("Todos 0/1") && borders(s).len() == 2
    });
    // Docked on the right, 38 columns wide; the turns keep the rest.
    assert_eq!(borders(&after)[1], 160 - 38, "{after}");
    assert!(turn_width(&after, 160) >= 80, "{after}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
