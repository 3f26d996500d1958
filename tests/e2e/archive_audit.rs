//! Every answer on record (#40): two ocviews on two machines answering
//! prompts of one server into one archive, and a third client (OpenCode's
//! TUI) answering one both see: each answer listed once, newest first,
//! with its machine, user, server, what the prompt showed and what the
//! server said; `always` with its patterns. Kept across a restart, on both
//! engines, and `ocview audit` lists it.

use crate::common::{feed, press, screen};
use crate::support::postgres as postgres_support;

use ocview::app::App;
use ocview::archive::engine::AnswerFilter;
use ocview::archive::{Origin, Setting};
use ocview::source::live::reply::Reply;
use ocview::source::msg::{ReplyOutcome, SourceMsg};

const SESSIONS: &str = r#"{"type":"session.created","properties":{"info":{"id":"ses_p","title":"Parent work","directory":"/p","time":{"created":1,"updated":2}}}}"#;
const BASH: &str = r#"{"type":"permission.asked","properties":{"id":"per_audit0001","sessionID":"ses_p","permission":"bash","patterns":["rm -rf build"],"always":["rm *"],"metadata":{"command":"rm -rf build"}}}"#;
const EDIT: &str = r#"{"type":"permission.asked","properties":{"id":"per_audit0002","sessionID":"ses_p","permission":"edit","patterns":["src/main.py"],"always":["*"],"metadata":{"filepath":"/p/src/main.py","diff":"--- a\n+++ a\n-    return 1\n+    return 2\n"}}}"#;
const QUESTION: &str = r#"{"type":"question.asked","properties":{"id":"que_audit0003","sessionID":"ses_p","questions":[{"question":"Which linter?","header":"Linter","options":[{"label":"Ruff","description":"fast"}]}]}}"#;
const BASH_REPLIED: &str = r#"{"type":"permission.replied","properties":{"sessionID":"ses_p","requestID":"per_audit0001","reply":"always"}}"#;
const EDIT_REPLIED: &str = r#"{"type":"permission.replied","properties":{"sessionID":"ses_p","requestID":"per_audit0002","reply":"once"}}"#;
const QUESTION_REPLIED: &str = r#"{"type":"question.replied","properties":{"sessionID":"ses_p","requestID":"que_audit0003","answers":[["Ruff"]]}}"#;

/// A live viewer of the server, writing to `setting`, and where its
/// answers go.
fn viewer(setting: &Setting) -> (App, tokio::sync::mpsc::UnboundedReceiver<Reply>) {
    let mut app = App::new(ocview::app::config::Config::default(), "live test", false).unwrap();
    app.panes.prompts.arming = std::time::Duration::ZERO;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    app.replies = Some(tx);
    app.archive.tap = Some(ocview::archive::writer::spawn(
        setting.clone(),
        Origin {
            server: Some("http://127.0.0.1:4096".into()),
            host: ocview::archive::origin::hostname(),
            file: None,
        },
        Box::new(|_| {}),
    ));
    feed(
        &mut app,
        [SESSIONS, BASH, EDIT, QUESTION].join("\n").as_bytes(),
    );
    (app, rx)
}

fn as_machine(name: &str) {
    // SAFETY: each test runs in a process of its own (nextest), on this
    // thread only.
    unsafe { std::env::set_var("OCVIEW_MACHINE", name) };
}

fn two_machines_and_another_client(setting: Setting) {
    unsafe { std::env::set_var("USER", "alice") };
    as_machine("box-a");
    let (mut a, _done_a) = viewer(&setting);
    as_machine("box-b");
    let (mut b, _done_b) = viewer(&setting);

    // On box-a, alice allows `rm *` always (a prompt takes keys once it
    // was drawn).
    as_machine("box-a");
    screen(&mut a, 100, 30);
    press(&mut a, &["a", "y"]);
    a.on_source(SourceMsg::Replied {
        request_id: "per_audit0001".into(),
        outcome: ReplyOutcome::Sent,
    });
    feed(&mut a, BASH_REPLIED.as_bytes());
    as_machine("box-b");
    feed(&mut b, BASH_REPLIED.as_bytes());
    // On box-b, the edit once; box-a sees it answered elsewhere.
    screen(&mut b, 100, 30);
    press(&mut b, &["y"]);
    b.on_source(SourceMsg::Replied {
        request_id: "per_audit0002".into(),
        outcome: ReplyOutcome::Sent,
    });
    feed(&mut b, EDIT_REPLIED.as_bytes());
    as_machine("box-a");
    feed(&mut a, EDIT_REPLIED.as_bytes());
    // OpenCode's TUI answers the question: both see it.
    feed(&mut a, QUESTION_REPLIED.as_bytes());
    as_machine("box-b");
    feed(&mut b, QUESTION_REPLIED.as_bytes());
    // The writers write what is queued as they go.
    a.archive.tap = None;
    b.archive.tap = None;

    // Read again from the archive as a restarted ocview would.
    let mut archive = setting.open().unwrap().unwrap();
    let all = archive
        .answers(&AnswerFilter {
            limit: 50,
            ..Default::default()
        })
        .unwrap();
    let by_id = |id: &str| {
        all.iter()
            .find(|r| r.request_id == id)
            .unwrap_or_else(|| panic!("{id} not on record: {all:#?}"))
    };
    assert_eq!(all.len(), 3, "{all:#?}");
    let bash = by_id("per_audit0001");
    assert_eq!(
        (bash.by.as_str(), bash.machine.as_str(), bash.user.as_str()),
        ("ocview", "box-a", "alice")
    );
    assert_eq!(
        (bash.answer.as_str(), bash.patterns.clone()),
        ("always", vec!["rm *".to_string()])
    );
    assert_eq!(bash.shown, "rm -rf build");
    assert_eq!(bash.outcome, "sent");
    assert_eq!(bash.server.as_deref(), Some("http://127.0.0.1:4096"));
    assert_eq!(bash.session_id, "ses_p");
    let edit = by_id("per_audit0002");
    assert_eq!(
        (
            edit.by.as_str(),
            edit.machine.as_str(),
            edit.answer.as_str()
        ),
        ("ocview", "box-b", "once")
    );
    assert!(edit.shown.contains("/p/src/main.py") && edit.shown.contains("+    return 2"));
    let question = by_id("que_audit0003");
    assert_eq!(
        (
            question.by.as_str(),
            question.answer.as_str(),
            question.kind.as_str()
        ),
        ("another client", "Ruff", "question")
    );
    assert_eq!(question.outcome, "seen");
    // Filters: a machine's, a kind's.
    let on_b = archive
        .answers(&AnswerFilter {
            machine: Some("box-b".into()),
            kind: Some("permission".into()),
            limit: 50,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(on_b.len(), 1, "{on_b:#?}");
    drop(archive);

    // `ocview audit` lists them, an always standing out.
    let place = match &setting {
        Setting::Sqlite(p) => p.display().to_string(),
        Setting::Postgres(url) => url.clone(),
        Setting::Off => unreachable!(),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["audit", "--archive", &place])
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.contains("ALWAYS (rm *)") && text.contains("alice@box-a"),
        "{text}"
    );
    assert!(text.contains("another client (seen from"), "{text}");
    let json = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["audit", "--json", "--kind", "question", "--archive", &place])
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
}

#[test]
fn answers_are_on_record_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    two_machines_and_another_client(Setting::Sqlite(dir.path().join("archive.db")));
}

#[test]
fn answers_are_on_record_in_a_team_archive() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    two_machines_and_another_client(Setting::Postgres(pg.database("audit")));
}

/// An answer given while PostgreSQL is away waits in the spool and is on
/// record once it is back.
#[test]
fn an_answer_given_while_postgresql_is_away_is_kept() {
    // The spool is kept under a state folder of the test's own.
    crate::archive_team::state_home();
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("audit_away");
    let setting = Setting::Postgres(url.clone());
    drop(setting.open().unwrap());
    let (said, heard) = std::sync::mpsc::channel::<String>();
    let tap = ocview::archive::writer::spawn(
        setting.clone(),
        Origin {
            server: Some("http://box:4096".into()),
            host: "box".into(),
            file: None,
        },
        Box::new(move |line| {
            let _ = said.send(line);
        }),
    );
    pg.kill();
    tap.answer(ocview::archive::rows::AnswerRow {
        request_id: "per_away".into(),
        session_id: "ses_away".into(),
        kind: "permission".into(),
        prompt: "permission · bash".into(),
        shown: "make deploy".into(),
        answer: "once".into(),
        patterns: Vec::new(),
        message: None,
        by: "ocview".into(),
        machine: "box".into(),
        user: "alice".into(),
        server: None,
        time: 1,
        outcome: "sent".into(),
    });
    // Other lines may come first (a prune the writer could not do as it
    // started): what matters is said in its turn.
    let said = |what: &str, secs: u64| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = heard
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("nothing said of {what}"));
            if line.contains(what) {
                return;
            }
        }
    };
    said("spooling locally", 10);
    pg.start_again().unwrap();
    said("PostgreSQL is back", 30);
    drop(tap);
    let rows = postgres_support::rows(&url, "SELECT request_id, shown, server FROM answers");
    assert_eq!(rows, [["per_away", "make deploy", "http://box:4096"]]);
}

/// One answer for the view, at a fixed time.
fn row(
    id: &str,
    session: &str,
    answer: &str,
    by: &str,
    minutes_ago: i64,
) -> ocview::archive::rows::AnswerRow {
    let (kind, prompt, shown) = if id.starts_with("que") {
        ("question", "question", "Which linter?")
    } else {
        (
            "permission",
            "permission · bash",
            "rm -rf build/ && cargo build --release",
        )
    };
    ocview::archive::rows::AnswerRow {
        request_id: id.into(),
        session_id: session.into(),
        kind: kind.into(),
        prompt: prompt.into(),
        shown: shown.into(),
        answer: answer.into(),
        patterns: if answer == "always" {
            vec!["rm *".into()]
        } else {
            Vec::new()
        },
        message: None,
        by: by.into(),
        machine: "box-a".into(),
        user: "alice".into(),
        server: Some("http://127.0.0.1:4096".into()),
        time: VIEW_NOW - minutes_ago * 60_000,
        outcome: if by == "ocview" {
            "sent".into()
        } else {
            "seen".into()
        },
    }
}

const VIEW_NOW: i64 = 1_795_339_400_000;

/// `A` opens the answers on record, read from the archive off the loop:
/// newest first, an `always` standing out; `tab` keeps a kind, `S` this
/// session's, enter opens the answer's session; at 80×24 and 200×50.
#[test]
fn the_audit_view_lists_the_answers_and_filters_them() {
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("archive.db"));
    let mut archive = setting.open().unwrap().unwrap();
    let batch = ocview::archive::rows::Batch {
        answers: vec![
            row("per_v1", "ses_p", "always", "ocview", 50),
            row("que_v2", "ses_p", "Ruff", "another client", 30),
            row("per_v3", "ses_other", "reject", "ocview", 10),
        ],
        ..Default::default()
    };
    archive.write(&batch).unwrap();
    drop(archive);
    let mut app = App::new(ocview::app::config::Config::default(), "live test", false).unwrap();
    app.now_ms = VIEW_NOW;
    feed(&mut app, SESSIONS.as_bytes());
    app.archive.setting = Some(setting);
    let mut done = app.verbs.take_done();
    app.selected = Some("ses_p".into());
    press(&mut app, &["A"]);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("reading the archive"), "{s}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.overlays.audit.loading {
        while let Ok(d) = done.try_recv() {
            app.on_done(d);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the archive said nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let ids = |app: &App| -> Vec<String> {
        app.overlays
            .audit
            .rows
            .iter()
            .map(|r| r.request_id.clone())
            .collect()
    };
    assert_eq!(ids(&app), ["per_v3", "que_v2", "per_v1"], "newest first");
    insta::assert_snapshot!("audit_view_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("audit_view_200x50", screen(&mut app, 200, 50));
    press(&mut app, &["tab"]);
    assert_eq!(ids(&app), ["per_v3", "per_v1"], "permissions");
    press(&mut app, &["S"]);
    assert_eq!(ids(&app), ["per_v1"], "this session's");
    insta::assert_snapshot!("audit_view_filtered_80x24", screen(&mut app, 80, 24));
    press(&mut app, &["enter"]);
    assert_eq!(app.overlay, None);
    assert_eq!(app.selected.as_deref(), Some("ses_p"));
}

/// A rejection with a message is on record with its message, and `ocview
/// audit` says it.
#[test]
fn a_rejection_with_a_message_is_on_record_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("a.db"));
    as_machine("box-a");
    let (mut app, mut sent) = viewer(&setting);
    screen(&mut app, 100, 30);
    press(&mut app, &["m"]);
    screen(&mut app, 100, 30);
    let mut keys: Vec<&str> = Vec::new();
    for word in ["use", "cargo", "clean"] {
        if !keys.is_empty() {
            keys.push("space");
        }
        keys.extend(word.split("").filter(|c| !c.is_empty()));
    }
    keys.push("enter");
    press(&mut app, &keys);
    match sent.try_recv() {
        Ok(Reply::Permission { reply, message, .. }) => assert_eq!(
            (reply.as_str(), message.as_deref()),
            ("reject", Some("use cargo clean"))
        ),
        other => panic!("{other:?}"),
    }
    app.on_source(SourceMsg::Replied {
        request_id: "per_audit0001".into(),
        outcome: ReplyOutcome::Sent,
    });
    app.archive.tap = None;
    let mut archive = setting.open().unwrap().unwrap();
    let all = archive
        .answers(&AnswerFilter {
            limit: 50,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        (all[0].answer.as_str(), all[0].message.as_deref()),
        ("reject", Some("use cargo clean"))
    );
    assert_eq!(all[0].shown, "rm -rf build");
    drop(archive);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args([
            "audit",
            "--archive",
            &dir.path().join("a.db").display().to_string(),
        ])
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("use cargo clean"), "{text}");
}
