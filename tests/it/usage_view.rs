//! The usage view on a generated database (the schema opencode 1.18.33
//! created): loading… until the reader answers, the drawing at 80×24 and
//! 200×50, a range switch that reads again, and enter on a costly session
//! asking the app to open it.

use crate::common;
use crate::support;

use std::time::{Duration, Instant};

use common::{press, screen};
use ocview::app::Overlay;
use ocview::app::overlays::usage::Answer;

const NOW: i64 = 1_780_000_000_000;

fn app_on_db(path: &std::path::Path) -> ocview::app::App {
    let mut app = common::app_with(b"");
    app.now_ms = NOW;
    app.overlays.usage.db = Some(path.to_path_buf());
    app
}

fn wait_ready(app: &mut ocview::app::App, w: u16, h: u16) -> String {
    let start = Instant::now();
    loop {
        let text = screen(app, w, h);
        if app
            .overlays
            .usage
            .view
            .as_ref()
            .is_some_and(|v| !v.loading())
        {
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
    let month = match &app.overlays.usage.view.as_ref().unwrap().answer {
        Answer::Ready(u) => u.sessions,
        _ => unreachable!(),
    };
    press(&mut app, &["1"]);
    let text = wait_ready(&mut app, 80, 24);
    let week = match &app.overlays.usage.view.as_ref().unwrap().answer {
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

/// One malformed row among thousands (a message's JSON cut short, a part's
/// too): the report is whole, counts every other row, and its last line
/// says how many were skipped (SQLite's `json_extract` failed the whole
/// report with "malformed JSON").
#[test]
fn a_malformed_row_is_skipped_and_said_and_the_rest_counted() {
    use ocview::headless::stats::{self, StatsOptions};
    use ocview::source::opencode_db::Db;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    support::usage_db::generate(&path, 40, 30, 3, 60, NOW, |i| format!("ses_{i:04}"));
    let query = all_time_with_tools();
    let whole = Db::open(&path).unwrap().usage(&query).unwrap();
    assert_eq!(whole.malformed, 0);
    let c = rusqlite::Connection::open(&path).unwrap();
    let (bad_message, cost): (String, f64) = c
        .query_row(
            "SELECT id, json_extract(data, '$.cost') FROM message \
             WHERE json_extract(data, '$.role') = 'assistant' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute(
        "UPDATE message SET data = substr(data, 1, 20) WHERE id = ?1",
        [&bad_message],
    )
    .unwrap();
    c.execute(
        "UPDATE part SET data = '{\"type\":\"tool\",\"tool\":' \
         WHERE id = (SELECT min(id) FROM part WHERE json_extract(data, '$.type') = 'tool')",
        [],
    )
    .unwrap();
    drop(c);
    let cut = Db::open(&path)
        .unwrap()
        .usage(&query)
        .expect("a whole report");
    assert_eq!(cut.malformed, 2);
    assert_eq!(cut.sessions, whole.sessions);
    assert_eq!(
        cut.messages, whole.messages,
        "every message is still counted"
    );
    let tools =
        |u: &ocview::source::opencode_db::usage::Usage| u.tools.iter().map(|t| t.1).sum::<u64>();
    assert_eq!(tools(&cut), tools(&whole) - 1);
    let by_day_cost: f64 = cut.by_day.values().map(|g| g.figures.cost).sum();
    let whole_cost: f64 = whole.by_day.values().map(|g| g.figures.cost).sum();
    assert!(
        (whole_cost - cost - by_day_cost).abs() < 1e-9,
        "{whole_cost} - {cost} != {by_day_cost}"
    );
    let options = StatsOptions {
        days: None,
        tools: None,
        models: None,
        now_ms: NOW,
    };
    let text = stats::to_text(&cut, &options);
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("! 2 rows") && last.contains("skipped"),
        "{text}"
    );
    let json = stats::to_json(&cut, &options);
    assert_eq!(json["malformed_rows"], 2);
    // The usage view says it beside its counts: the message, then the
    // part too once the tools are counted.
    let mut app = app_on_db(&path);
    press(&mut app, &["u"]);
    wait_ready(&mut app, 200, 50);
    wait_tools(&mut app);
    let screen = screen(&mut app, 200, 50);
    assert!(screen.contains("! 2 unreadable rows skipped"), "{screen}");
}

/// Names from the database holding a clipboard write (OSC 52), a screen
/// clear, a C1 control, a bidi override and a line separator: none of
/// them reaches any output of `ocview stats` (text, `--csv`, `--json`),
/// and a tool name is cut after it was made inert, not inside a sequence.
#[test]
fn hostile_names_reach_no_stats_output() {
    use ocview::headless::stats::{self, StatsOptions};
    use ocview::source::opencode_db::Db;
    const BAD: [char; 6] = [
        '\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{2028}', '\u{85}',
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    support::usage_db::generate(&path, 6, 4, 3, 5, NOW, |i| format!("ses_{i:04}"));
    let c = rusqlite::Connection::open(&path).unwrap();
    let evil = "x\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}[2J\u{9b}31m\u{202e}gpj\u{2028}\u{85}y";
    c.execute(
        "UPDATE message SET data = json_set(data, '$.modelID', ?1, '$.agent', ?1)",
        [evil],
    )
    .unwrap();
    c.execute(
        "UPDATE part SET data = json_set(data, '$.tool', ?1) WHERE json_extract(data, '$.type') = 'tool'",
        [format!("tool{evil}")],
    )
    .unwrap();
    c.execute("UPDATE session SET title = ?1, directory = ?1", [evil])
        .unwrap();
    drop(c);
    let query = all_time_with_tools();
    let usage = Db::open(&path).unwrap().usage(&query).unwrap();
    assert!(
        usage.by_model.iter().any(|g| g.name.contains('\u{1b}')),
        "the names are hostile"
    );
    let options = StatsOptions {
        days: None,
        tools: None,
        models: Some(None),
        now_ms: NOW,
    };
    let json = stats::to_json(&usage, &options);
    let outputs = [
        ("text", stats::to_text(&usage, &options)),
        ("csv", stats::to_csv(&usage)),
        ("json", serde_json::to_string_pretty(&json).unwrap()),
        // What `jq -r` would print of each string.
        ("json strings", strings(&json)),
    ];
    for (name, out) in outputs {
        for bad in BAD {
            assert!(!out.contains(bad), "{name} holds {bad:?}:\n{out}");
        }
    }
    let text = stats::to_text(&usage, &options);
    assert!(text.contains("gpj␤"), "the names still show:\n{text}");
}

fn strings(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(strings).collect(),
        serde_json::Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}{}", strings(v)))
            .collect(),
        _ => String::new(),
    }
}

/// What `ocview stats` asks: all time, tools counted.
fn all_time_with_tools() -> ocview::source::opencode_db::usage::UsageQuery {
    ocview::source::opencode_db::usage::UsageQuery {
        since_ms: None,
        project: None,
        costliest: 5,
        tools: true,
        day_offset_ms: 0,
    }
}

/// Wait until the tools are counted too (the second answer).
fn wait_tools(app: &mut ocview::app::App) {
    let start = Instant::now();
    while app
        .overlays
        .usage
        .view
        .as_ref()
        .is_some_and(|v| v.tools_pending)
    {
        screen(app, 80, 24);
        assert!(start.elapsed() < Duration::from_secs(20), "no tools");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_year_is_a_heat_map_of_fifty_three_weeks_over_dated_bars_and_tab_shows_days_projects_and_tools()
{
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    support::usage_db::generate(&path, 40, 3, 3, 60, NOW, |i| format!("ses_{i:04}"));
    let mut app = app_on_db(&path);
    press(&mut app, &["u", "4"]);
    wait_ready(&mut app, 200, 50);
    wait_tools(&mut app);
    let text = screen(&mut app, 200, 50);
    let rows: Vec<&str> = text.lines().collect();
    // The heat map's Monday row: a column for each of 53 weeks.
    let monday = rows
        .iter()
        .find(|r| r.contains("│Mo "))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: String = monday
        .split("│Mo ")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(|c| *c != '│' && *c != '─')
        .collect();
    assert!(cells.trim_end().chars().count() >= 52, "{monday:?}");
    // Dated axes: the bars' first and last days, the models' span.
    assert!(
        text.contains("May 2025") && text.contains("May 2026"),
        "{text}"
    );
    assert!(
        text.contains("by model · tokens May 2025–May 2026"),
        "{text}"
    );
    // Each model's input and output tokens, as opencode stats --models.
    assert!(text.contains("90 msg · in "), "{text}");
    // What opencode stats derives.
    assert!(
        text.contains("365 days ·") && text.contains("tok/session · median"),
        "{text}"
    );
    insta::assert_snapshot!("usage_view_year_200x50", text);
    // tab: a table per day, newest first; tab: the tools.
    press(&mut app, &["tab"]);
    let days = screen(&mut app, 80, 24);
    assert!(
        days.contains("by day · tab projects") && days.contains("DATE") && days.contains("MODELS"),
        "{days}"
    );
    assert!(
        !days.contains(" of 53 weeks") && days.contains("Jun  Jul Aug"),
        "a year's 53 weeks fit at 80 columns: {days}"
    );
    insta::assert_snapshot!("usage_view_days_80x24", days);
    // tab: the projects and agents, their names whole at 80 columns.
    press(&mut app, &["tab"]);
    let projects = screen(&mut app, 80, 24);
    assert!(
        projects.contains("by project · by agent · tab tools")
            && projects.contains("/home/dev/beta")
            && projects.contains("@plan"),
        "{projects}"
    );
    press(&mut app, &["tab"]);
    let tools = screen(&mut app, 80, 24);
    assert!(tools.contains("tools · tab sessions"), "{tools}");
    insta::assert_snapshot!("usage_view_tools_80x24", tools);
    // Enter on a tool opens nothing; back on the sessions, enter opens one.
    press(&mut app, &["enter"]);
    assert!(app.wanted_session.is_none() && app.overlay.is_some());
    press(&mut app, &["tab", "enter"]);
    assert!(app.wanted_session.is_some());
}
