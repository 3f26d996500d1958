//! The usage view on a generated database (the schema opencode 1.18.33
//! created): loading… until the reader answers, the drawing at 80×24 and
//! 200×50, a range switch that reads again, and enter on a costly session
//! asking the app to open it.

mod common;
mod support;

use std::time::{Duration, Instant};

use common::{press, screen};
use ocview::app::Overlay;
use ocview::app::overlays::usage::Answer;

const NOW: i64 = 1_780_000_000_000;

fn app_on_db(path: &std::path::Path) -> ocview::app::App {
    let mut app = common::app_with(b"");
    app.now_ms = NOW;
    app.usage.db = Some(path.to_path_buf());
    app
}

fn wait_ready(app: &mut ocview::app::App, w: u16, h: u16) -> String {
    let start = Instant::now();
    loop {
        let text = screen(app, w, h);
        if app.usage.view.as_ref().is_some_and(|v| !v.loading()) {
            return screen(app, w, h);
        }
        assert!(text.contains("loading…"), "{text}");
        assert!(start.elapsed() < Duration::from_secs(20), "no answer");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_usage_view_draws_a_generated_database_and_opens_a_costly_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    support::usage_db::generate(&path, 40, 3, 3, 60, NOW, |i| format!("ses_{i:04}"));
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let mut app = app_on_db(&path);
        press(&mut app, &["u"]);
        assert_eq!(app.overlay, Some(Overlay::Usage));
        let text = wait_ready(&mut app, w, h);
        assert!(!text.contains('\u{1b}'));
        insta::assert_snapshot!(format!("usage_view_{w}x{h}"), text);
    }
    // 1: seven days, read again.
    let mut app = app_on_db(&path);
    press(&mut app, &["u"]);
    wait_ready(&mut app, 80, 24);
    let month = match &app.usage.view.as_ref().unwrap().answer {
        Answer::Ready(u) => u.sessions,
        _ => unreachable!(),
    };
    press(&mut app, &["1"]);
    let text = wait_ready(&mut app, 80, 24);
    let week = match &app.usage.view.as_ref().unwrap().answer {
        Answer::Ready(u) => u.sessions,
        _ => unreachable!(),
    };
    assert!(week < month && week > 0, "{week} of {month}\n{text}");
    // Enter: the app is asked to open the costliest session.
    press(&mut app, &["j"]);
    press(&mut app, &["enter"]);
    assert_eq!(app.overlay, None);
    assert!(
        app.wanted_session
            .as_deref()
            .is_some_and(|s| s.starts_with("ses_"))
    );
}

#[test]
fn no_database_is_one_clear_line() {
    let mut app = app_on_db(std::path::Path::new("/nonexistent/opencode.db"));
    press(&mut app, &["u"]);
    let text = wait_ready(&mut app, 80, 24);
    assert!(
        text.contains("no opencode database at /nonexistent/opencode.db"),
        "{text}"
    );
}
