//! Time waiting on people (#41, point 2), on both engines: real opencode
//! 1.18.33 sessions (a permission allowed, three asked and two rejected,
//! a question answered and one dismissed) and one prompt never answered
//! are kept as asked and settled, timed as they came; the figures equal
//! direct SQL over the same archive; who answered comes from the answers'
//! record (this machine, another machine's ocview, another client); the
//! command says them in words, JSON and CSV.

use crate::support::postgres as postgres_support;

use ocview::archive::Setting;
use ocview::archive::import::import_file;
use ocview::archive::rows::{AnswerRow, Batch};
use ocview::archive::tool_calls::CallFilter;
use ocview::insights::waits::{Where, figures};

/// A permission asked and never answered.
fn unanswered(dir: &std::path::Path) -> std::path::PathBuf {
    let lines = [
        r#"{"t": 100, "event": {"type": "session.updated", "properties": {"info": {"id": "ses_wait", "title": "Left waiting", "directory": "/w", "time": {"created": 1, "updated": 1}}}}}"#,
        r#"{"t": 200, "event": {"type": "permission.asked", "properties": {"id": "per_never", "sessionID": "ses_wait", "permission": "edit", "patterns": ["a.rs"], "metadata": {}, "always": []}}}"#,
    ];
    let path = dir.join("unanswered.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn answer(request: &str, session: &str, by: &str, machine: &str) -> AnswerRow {
    AnswerRow {
        request_id: request.into(),
        session_id: session.into(),
        kind: "permission".into(),
        prompt: "permission · bash".into(),
        shown: "ls".into(),
        answer: "once".into(),
        patterns: Vec::new(),
        message: None,
        by: by.into(),
        machine: machine.into(),
        user: "ana".into(),
        server: None,
        time: 0,
        outcome: "sent".into(),
    }
}

/// Direct SQL: prompts, settled, rejected, and every wait (ms), sorted.
type Direct = Box<dyn Fn() -> (i64, i64, i64, Vec<i64>)>;

fn suite(setting: Setting, direct: Direct) {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = setting.open().unwrap().unwrap();
    let fixtures = crate::common::fixtures_dir();
    let mut sessions = Vec::new();
    for name in [
        "a_bash_permission_once",
        "h_permission_reject",
        "d_question",
    ] {
        let path = fixtures.join(name).join("event.jsonl");
        import_file(&mut *archive, &path).unwrap();
        sessions.push(path);
    }
    import_file(&mut *archive, &unanswered(dir.path())).unwrap();
    let waits = archive.prompt_waits(&CallFilter::default()).unwrap();
    let (asked, settled, rejected, mut waited) = direct();
    assert_eq!(waits.len() as i64, asked, "{waits:#?}");
    assert_eq!(asked, 7, "every prompt of the three sessions, and one more");
    // Who answered: on record for two of them.
    let allowed = waits
        .iter()
        .find(|w| w.reply.as_deref() == Some("once"))
        .unwrap()
        .clone();
    let rejected_one = waits
        .iter()
        .find(|w| w.reply.as_deref() == Some("reject"))
        .unwrap()
        .clone();
    archive
        .write(&Batch {
            answers: vec![
                answer(&allowed.request_id, &allowed.session_id, "ocview", "here"),
                answer(
                    &rejected_one.request_id,
                    &rejected_one.session_id,
                    "ocview",
                    "there",
                ),
            ],
            ..Batch::default()
        })
        .unwrap();
    let waits = archive.prompt_waits(&CallFilter::default()).unwrap();
    let w = figures(&waits, "here");
    let t = &w.total;
    assert_eq!(
        (t.asked as i64, t.answered as i64, t.rejected as i64),
        (asked, settled, rejected)
    );
    assert_eq!(t.never_answered, 1);
    assert_eq!(
        rejected, 3,
        "two permissions rejected, a question dismissed"
    );
    waited.sort_unstable();
    assert_eq!(t.longest_ms, waited.last().copied());
    assert_eq!(
        t.median_ms,
        Some(waited[((waited.len() - 1) as f64 * 0.5).round() as usize])
    );
    assert!(waited.iter().all(|ms| *ms >= 0));
    assert_eq!(w.answered_where.get(&Where::ThisMachine), Some(&1));
    assert_eq!(w.answered_where.get(&Where::AnotherMachine), Some(&1));
    assert_eq!(w.longest[0].waited(), t.longest_ms);
    // The project filter keeps the waiting one's alone.
    let only = archive
        .prompt_waits(&CallFilter {
            project: Some("/w".into()),
            ..CallFilter::default()
        })
        .unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].request_id, "per_never");
    // Importing the same files again adds nothing.
    for path in &sessions {
        import_file(&mut *archive, path).unwrap();
    }
    assert_eq!(direct().0, asked);
    drop(archive);

    let run = |args: &[&str]| crate::support::insights::run("waits", &setting, args);
    let words = run(&[]);
    assert!(
        words.starts_with("7 prompts asked, 6 answered (3 rejected, 50.0%), 1 never answered"),
        "{words}"
    );
    assert!(
        words.contains("this machine 1") && words.contains("longest waits:"),
        "{words}"
    );
    let json: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    assert_eq!(json["total"]["asked"].as_i64(), Some(7), "{json}");
    let csv = run(&["--csv"]);
    assert_eq!(csv.lines().count(), 8, "{csv}");
    assert!(
        csv.lines()
            .any(|l| l.starts_with("per_never,ses_wait,/w,permission,edit,"))
    );
}

#[test]
fn waits_on_people_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let p = path.clone();
    let direct: Direct = Box::new(move || {
        let c = rusqlite::Connection::open(&p).unwrap();
        let (asked, settled, rejected) = c
            .query_row(
                "SELECT count(*), count(settled), count(*) FILTER (WHERE reply IN ('reject', 'dismissed'))
                 FROM prompts",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        let mut st = c
            .prepare("SELECT settled - asked FROM prompts WHERE settled IS NOT NULL")
            .unwrap();
        let waited = st
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (asked, settled, rejected, waited)
    });
    suite(Setting::Sqlite(path), direct);
}

#[test]
fn waits_on_people_in_postgres() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("waits");
    let u = url.clone();
    let direct: Direct = Box::new(move || {
        let one = postgres_support::rows(
            &u,
            "SELECT count(*), count(settled), count(*) FILTER (WHERE reply IN ('reject', 'dismissed'))
             FROM prompts",
        );
        let n = |i: usize| one[0][i].parse::<i64>().unwrap();
        let waited = postgres_support::rows(
            &u,
            "SELECT settled - asked FROM prompts WHERE settled IS NOT NULL",
        )
        .into_iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
        (n(0), n(1), n(2), waited)
    });
    suite(Setting::Postgres(url), direct);
}

/// The view: `I`, then tab, shows the waits (80×24, 200×50); enter on the
/// longest opens its session.
#[test]
fn the_view_shows_the_waits_and_opens_the_longest() {
    use crate::common::{press, screen, settle};
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("archive.db"));
    let mut archive = setting.open().unwrap().unwrap();
    let fixtures = crate::common::fixtures_dir();
    for name in ["h_permission_reject", "d_question"] {
        import_file(&mut *archive, &fixtures.join(name).join("event.jsonl")).unwrap();
    }
    import_file(&mut *archive, &unanswered(dir.path())).unwrap();
    drop(archive);
    let mut app =
        ocview::app::App::new(ocview::app::config::Config::default(), "replay test", true).unwrap();
    app.now_ms = 1_000_000;
    app.archive.setting = Some(setting);
    let mut done = app.verbs.take_done();
    press(&mut app, &["I", "5"]);
    settle(&mut app, &mut done, &|a| !a.overlays.insights.loading);
    press(&mut app, &["tab"]);
    settle(&mut app, &mut done, &|a| {
        a.overlays.insights.waits.is_some() && !a.overlays.insights.loading
    });
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("Waits on people · all time")
            && s.contains("6 prompts asked, 5 answered, 3 rejected (60.0%), 1 never answered"),
        "{s}"
    );
    insta::assert_snapshot!("insights_waits_80x24", s);
    insta::assert_snapshot!("insights_waits_200x50", screen(&mut app, 200, 50));
    let longest = app.overlays.insights.waits.as_ref().unwrap().longest[0].clone();
    press(&mut app, &["enter"]);
    assert_eq!(app.overlay, None);
    settle(&mut app, &mut done, &|a| a.selected_session().is_some());
    assert_eq!(
        app.selected_session()
            .map(|s| ocview::model::store::fleet::bare(&s.info.id).to_string()),
        Some(longest.session_id)
    );
    // Tab again: the cost; once more, back to the failures.
    press(&mut app, &["I", "tab"]);
    assert_eq!(
        app.overlays.insights.kind,
        ocview::app::overlays::insights::Kind::Cost
    );
    press(&mut app, &["tab"]);
    assert_eq!(
        app.overlays.insights.kind,
        ocview::app::overlays::insights::Kind::Failures
    );
}
