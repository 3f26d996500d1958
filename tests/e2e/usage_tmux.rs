//! The usage view on the real binary in a real terminal (tmux), at 80×24
//! and 200×50: `u` opens it over a generated opencode database, every week
//! of this month's calendar shows, a digit picks another range and the
//! figures are read again, enter hands a costly session to the app, and
//! the terminal is whole afterwards.

use crate::support;

use support::tmux::Tmux;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The session count in the view's first line ("… · 12 sessions · …").
fn sessions_shown(screen: &str) -> Option<u64> {
    let line = screen.lines().find(|l| l.contains(" sessions · "))?;
    let before = line.split(" sessions").next()?;
    before.rsplit(' ').next()?.parse().ok()
}

fn usage_view_at(width: u16, height: u16) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    // 40 sessions over 200 days: 30 days and 365 days hold different counts.
    support::usage_db::generate(&db, 40, 3, 3, 200, now_ms(), |i| format!("ses_usage{i:04}"));
    let t = Tmux::start_sized(&format!("usage{width}"), width, height);
    t.line(&format!(
        "OPENCODE_DB={} {} demo",
        db.display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for("the demo", |s| s.contains("Sessions"));
    t.keys(&["u"]);
    let month = t.wait_for("the usage view, 30 days", |s| {
        s.contains("cost per day")
            && s.contains("costliest sessions")
            && sessions_shown(s).is_some()
    });
    // Today's date is drawn: the calendar's last week is not cut off.
    let today = time::OffsetDateTime::now_utc().day().to_string();
    assert!(
        month
            .lines()
            .any(|l| l.split_whitespace().any(|w| w == today)),
        "today ({today}) is not on the calendar:\n{month}"
    );
    let in_month = sessions_shown(&month).unwrap();
    t.keys(&["4"]);
    let year = t.wait_for("the usage view, 365 days", |s| {
        sessions_shown(s).is_some_and(|n| n > in_month)
    });
    assert!(
        year.contains("by model") && year.contains("activity"),
        "{year}"
    );
    // Enter: the view closes and the app is asked for the session.
    t.keys(&["Enter"]);
    t.wait_for("the view closed, the session asked for", |s| {
        !s.contains("cost per day") && s.contains("ses_usage")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn the_usage_view_at_80x24() {
    usage_view_at(80, 24);
}

#[test]
fn the_usage_view_at_200x50() {
    usage_view_at(200, 50);
}
