//! The session list of a fleet, drawn on ratatui's TestBackend: a heading
//! per server (with its state) and per project, live counts, folds, a
//! selected heading, a dismissed server, narrow widths.

use crate::common;

use common::{app_with, press, screen};
use ocview::app::App;

/// A fixed wall clock, so spinners are stable.
const NOW: i64 = 1_795_339_400_000;
/// The sessions' clock (a recording's clock drives their ages).
const T: i64 = 1_795_339_000_000;

fn server(key: &str, props: &str) -> String {
    format!(
        r#"{{"server":"{key}","type":"ocview.server","properties":{{"url":"http://{key}",{props}}}}}"#
    )
}

fn session(
    key: &str,
    id: &str,
    title: &str,
    dir: &str,
    parent: Option<&str>,
    ago_s: i64,
) -> String {
    let parent = parent
        .map(|p| format!(r#","parentID":"{p}""#))
        .unwrap_or_default();
    let t = T - ago_s * 1000;
    format!(
        r#"{{"server":"{key}","type":"session.created","properties":{{"info":{{"id":"{id}","title":"{title}","directory":"{dir}"{parent},"time":{{"created":{t},"updated":{t}}}}}}}}}"#
    )
}

const A: &str = "127.0.0.1:4096";
const B: &str = "127.0.0.1:4097";
const C: &str = "10.0.0.5:4096";

/// Three servers: A live with two projects, a busy session and a failed
/// one, a child session asking for a permission; B reconnecting; C gone.
fn fleet() -> Vec<u8> {
    let lines = [
        server(A, r#""state":"live","directory":"/home/me/src/ocview""#),
        server(
            B,
            r#""state":"reconnecting","attempt":3,"reason":"connection refused","directory":"/home/me/src/api""#,
        ),
        server(C, r#""state":"live","directory":"/srv/old""#),
        session(
            A,
            "ses_a1",
            "Fix the fleet list",
            "/home/me/src/ocview",
            None,
            30,
        ),
        session(
            A,
            "ses_a2",
            "Publish the website",
            "/home/me/src/website",
            None,
            600,
        ),
        session(
            A,
            "ses_a3",
            "Inspect util module",
            "/home/me/src/ocview",
            Some("ses_a1"),
            20,
        ),
        session(
            A,
            "ses_a4",
            "Old refactor",
            "/home/me/src/ocview",
            None,
            7200,
        ),
        session(
            B,
            "ses_b1",
            "Add pagination to the API",
            "/home/me/src/api",
            None,
            90,
        ),
        session(C, "ses_c1", "An old experiment", "/srv/old", None, 86400),
        format!(
            r#"{{"server":"{A}","type":"session.status","properties":{{"sessionID":"ses_a1","status":{{"type":"busy"}}}}}}"#
        ),
        format!(
            r#"{{"server":"{A}","type":"session.error","properties":{{"sessionID":"ses_a2","error":{{"name":"APIError","data":{{"message":"invalid key"}}}}}}}}"#
        ),
        format!(
            r#"{{"server":"{A}","type":"permission.asked","properties":{{"id":"per_1","sessionID":"ses_a3","permission":"bash","patterns":["rm -rf build"],"metadata":{{"command":"rm -rf build"}},"always":["rm *"]}}}}"#
        ),
        server(C, r#""state":"gone""#),
    ];
    lines.join("\n").into_bytes()
}

fn app() -> App {
    let mut app = app_with(&fleet());
    app.now_ms = NOW;
    app
}

/// The session list's rows (the left pane, up to its border).
fn list(screen: &str) -> Vec<String> {
    screen
        .lines()
        .take_while(|l| l.contains('│'))
        .map(|l| l.split('│').next().unwrap_or("").trim_end().to_string())
        .collect()
}

#[test]
fn a_fleet_lists_servers_then_projects_then_sessions() {
    let mut app = app();
    let s = screen(&mut app, 120, 24);
    let rows = list(&s);
    assert!(rows[1].starts_with(" ▾ 127.0.0.1:4096 live •"), "{s}");
    assert!(rows[2].starts_with("  ▾ /home/me/src/ocview •"), "{s}");
    assert!(rows[3].starts_with("›  ▾⣾ • Fix the fleet list"), "{s}");
    assert!(rows[4].starts_with("      · ? Inspect util module"), "{s}");
    assert!(
        rows.iter()
            .any(|l| l.contains("127.0.0.1:4097 reconnecting 3")),
        "{s}"
    );
    assert!(rows.iter().any(|l| l.contains("10.0.0.5:4096 gone")), "{s}");
    insta::assert_snapshot!("fleet_list_120x24", s);
}

#[test]
fn a_heading_is_selected_folded_and_a_gone_server_dismissed() {
    let mut app = app();
    press(&mut app, &["g"]);
    let s = screen(&mut app, 120, 24);
    assert!(list(&s)[1].starts_with("›▾ 127.0.0.1:4096"), "{s}");
    assert!(app.selected_session().is_none());
    assert!(s.contains("4 sessions: 1 busy, 1 waiting for an"), "{s}");
    insta::assert_snapshot!("fleet_heading_selected", s);

    // Folded, the server keeps its counts and its badge.
    press(&mut app, &["space"]);
    let s = screen(&mut app, 120, 24);
    assert!(list(&s)[1].starts_with("›▸ 127.0.0.1:4096 live •"), "{s}");
    assert!(!list(&s).iter().any(|l| l.contains("Fix the fleet")), "{s}");
    insta::assert_snapshot!("fleet_server_folded", s);
    press(&mut app, &["enter"]);
    let s = screen(&mut app, 120, 24);
    assert!(list(&s).iter().any(|l| l.contains("Fix the fleet")), "{s}");

    // Only a gone server can be dismissed.
    press(&mut app, &["x"]);
    assert!(
        screen(&mut app, 120, 24).contains("only a gone server can be dismissed"),
        "{s}"
    );
    press(&mut app, &["G", "k", "k"]);
    let s = screen(&mut app, 120, 24);
    assert!(
        list(&s)
            .iter()
            .any(|l| l.starts_with("›▾ 10.0.0.5:4096 gone")),
        "{s}"
    );
    assert!(s.contains("x dismisses it"), "{s}");
    press(&mut app, &["x"]);
    let s = screen(&mut app, 120, 24);
    assert!(
        s.contains("dismissed 10.0.0.5:4096 and its 1 session"),
        "{s}"
    );
    let rows = list(&s);
    assert!(
        !rows
            .iter()
            .any(|l| l.contains("10.0.0.5") || l.contains("An old")),
        "{s}"
    );
    // The selection took the row above.
    assert!(
        rows.iter().any(|l| l.starts_with("›   · Add pagination")),
        "{s}"
    );
}

#[test]
fn a_narrow_fleet_list_keeps_its_counts() {
    let mut app = app();
    press(&mut app, &["g"]);
    // Narrow: the one-line bar names the selected heading.
    let s = screen(&mut app, 80, 24);
    assert!(
        s.lines()
            .next()
            .unwrap()
            .contains("server 127.0.0.1:4096 live"),
        "{s}"
    );
    insta::assert_snapshot!("fleet_bar_80x24", s);
    // The whole list at 20 columns: names give way, counts stay.
    app.panes.list_shown = Some(true);
    let s = screen(&mut app, 60, 16);
    for line in list(&s) {
        assert!(
            unicode_width::UnicodeWidthStr::width(line.as_str()) <= 19,
            "{s}"
        );
    }
    insta::assert_snapshot!("fleet_list_narrow_60x16", s);
}

#[test]
fn server_text_is_drawn_inert() {
    let evil = r"h\u001b[2J:1";
    let lines = [
        server(
            evil,
            r#""state":"auth-failed","reason":"bad\u001b]0;x\u0007""#,
        ),
        session(evil, "ses_e", "t", r"/p\u001b[31m/\u202eevil", None, 5),
    ];
    let mut app = app_with(lines.join("\n").as_bytes());
    app.now_ms = NOW;
    press(&mut app, &["g"]);
    for (w, h) in [(120, 24), (80, 24)] {
        let s = screen(&mut app, w, h);
        assert!(
            !s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{202e}'),
            "{s}"
        );
        assert!(s.contains("h␛[2J:1 auth failed"), "{s}");
    }
}

/// Events that come between a frame and a key shift the store's sessions
/// under the drawn rows: the key still lands where it points.
#[test]
fn a_key_after_sessions_came_and_went_selects_what_it_points_at() {
    let mut app = app();
    screen(&mut app, 120, 24);
    // A session that sorts first, before the next frame.
    common::feed(
        &mut app,
        session(
            A,
            "ses_a0",
            "Came after the frame",
            "/home/me/src/ocview",
            None,
            1,
        )
        .as_bytes(),
    );
    press(&mut app, &["G"]);
    let title = app.selected_session().map(|s| s.info.title.clone());
    assert_eq!(
        title.as_deref(),
        Some("An old experiment"),
        "{}",
        screen(&mut app, 120, 24)
    );

    // Sessions gone since the frame: keys move among those left, no panic.
    screen(&mut app, 120, 24);
    for id in ["ses_a0", "ses_a1", "ses_a2", "ses_a3", "ses_a4"] {
        common::feed(
            &mut app,
            format!(
                r#"{{"server":"{A}","type":"session.deleted","properties":{{"info":{{"id":"{id}","title":"x","time":{{"created":{T},"updated":{T}}}}}}}}}"#
            )
            .as_bytes(),
        );
    }
    press(&mut app, &["G", "k", "g", "j"]);
    let s = screen(&mut app, 120, 24);
    assert!(!s.contains("Fix the fleet list"), "{s}");
}

/// A session pinned in the archive carries its mark before its time, at
/// any width; the others none.
#[test]
fn a_pinned_session_is_marked() {
    let mut app = app();
    app.on_source(ocview::source::msg::SourceMsg::ArchivePins(vec![
        "ses_a2".into(),
    ]));
    let s = screen(&mut app, 120, 24);
    let rows = list(&s);
    let marked: Vec<&String> = rows.iter().filter(|r| r.contains('⚑')).collect();
    assert_eq!(marked.len(), 1, "{s}");
    assert!(marked[0].contains("Publish the website"), "{s}");
    insta::assert_snapshot!("fleet_list_pinned_120x24", s);
    app.panes.list_shown = Some(true);
    let narrow = screen(&mut app, 60, 16);
    assert!(list(&narrow).iter().any(|r| r.contains('⚑')), "{narrow}");
}
