//! Failures by model and tool (#41, point 1), on both engines: real
//! opencode 1.18.33 sessions (a permission allowed, two rejected, a
//! question dismissed) and a session of every other outcome (errors of one
//! kind, an invalid call, an aborted one, one still running) are counted
//! by model, tool and outcome; the totals equal direct SQL counts over the
//! same archive; calls written before schema 16 (no error in their row)
//! are read from their JSON once and counted the same; a cell's failed
//! calls group by their error; `ocview insights failures` says it in
//! words, JSON and CSV, inert.

use crate::support::fresh_archive::{Files, Fresh};
use crate::support::postgres as postgres_support;

use ocview::archive::import::import_file;
use ocview::archive::tool_calls::{CallFilter, Outcome};
use ocview::archive::{Engine, Setting};
use ocview::insights::failures::{self, SortBy};

const T: i64 = 1_795_000_000_000;

fn tool(id: &str, msg: &str, name: &str, state: serde_json::Value) -> String {
    serde_json::json!({"type": "message.part.updated", "properties": {"part": {
        "id": id, "messageID": msg, "sessionID": "ses_ins", "type": "tool", "tool": name,
        "callID": format!("call_{id}"), "state": state}}})
    .to_string()
}

fn ended(status: &str, field: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"status": status, "input": {"filePath": "/w/a.rs"}, field: text,
        "time": {"start": T, "end": T + 5}})
}

/// A session whose calls end every way, by two models.
fn crafted(dir: &std::path::Path) -> std::path::PathBuf {
    let message = |id: &str, model: &str| {
        serde_json::json!({"type": "message.updated", "properties": {"info": {
            "id": id, "sessionID": "ses_ins", "role": "assistant", "providerID": "prov",
            "modelID": model, "time": {"created": T}}}})
        .to_string()
    };
    let lines = [
        serde_json::json!({"type": "session.updated", "properties": {"info": {
            "id": "ses_ins", "title": "Calls that end every way", "directory": "/w",
            "time": {"created": T, "updated": T}}}})
        .to_string(),
        message("msg_ins_a", "m-a"),
        tool(
            "prt_ins_01",
            "msg_ins_a",
            "read",
            ended("completed", "output", "fn main() {}"),
        ),
        tool(
            "prt_ins_02",
            "msg_ins_a",
            "read",
            ended("completed", "output", "ok"),
        ),
        tool(
            "prt_ins_03",
            "msg_ins_a",
            "read",
            ended("error", "error", "File not found: /w/src/a.rs"),
        ),
        tool(
            "prt_ins_04",
            "msg_ins_a",
            "read",
            ended("error", "error", "File not found: /w/lib/b.rs"),
        ),
        tool(
            "prt_ins_05",
            "msg_ins_a",
            "bash",
            ended("error", "error", "Tool execution aborted"),
        ),
        tool(
            "prt_ins_06",
            "msg_ins_a",
            "invalid",
            ended(
                "completed",
                "output",
                "The arguments provided to the tool are invalid: missing \"filePath\"",
            ),
        ),
        tool(
            "prt_ins_07",
            "msg_ins_a",
            "bash",
            serde_json::json!({"status": "running", "input": {"command": "sleep 9"}, "time": {"start": T}}),
        ),
        tool(
            "prt_ins_08",
            "msg_ins_a",
            "bash",
            ended(
                "error",
                "error",
                "The user rejected permission to use this specific tool call.",
            ),
        ),
        message("msg_ins_b", "m-b"),
        tool(
            "prt_ins_09",
            "msg_ins_b",
            "edit",
            ended(
                "error",
                "error",
                "oldString not found in content \u{1b}]0;pwned\u{7}",
            ),
        ),
    ];
    let path = dir.join("crafted.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn count(cells: &[failures::Cell], model: &str, tool: &str, outcome: Outcome) -> u64 {
    cells
        .iter()
        .find(|c| c.model == model && c.tool == tool)
        .map_or(0, |c| c.outcomes[&outcome])
}

/// Every tool part's row count by tool, straight from the table.
type Direct = Box<dyn Fn(&str) -> Vec<(String, i64)>>;

fn suite(setting: Setting, direct: Direct, forget_errors: &dyn Fn()) {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = setting.open().unwrap().unwrap();
    let fixtures = crate::common::fixtures_dir();
    for name in [
        "a_bash_permission_once",
        "h_permission_reject",
        "d_question",
    ] {
        import_file(&mut *archive, &fixtures.join(name).join("event.jsonl")).unwrap();
    }
    import_file(&mut *archive, &crafted(dir.path())).unwrap();

    let check = |archive: &mut dyn Engine| {
        let counts = archive.tool_calls(&CallFilter::default()).unwrap();
        let cells = failures::cells(&counts, SortBy::Failed);
        let (a, b, mock) = ("prov/m-a", "prov/m-b", "mock/mock-1");
        assert_eq!(
            count(&cells, a, "read", Outcome::Completed),
            2,
            "{cells:#?}"
        );
        assert_eq!(count(&cells, a, "read", Outcome::Error), 2);
        assert_eq!(count(&cells, a, "bash", Outcome::Aborted), 1);
        assert_eq!(count(&cells, a, "bash", Outcome::Rejected), 1);
        assert_eq!(count(&cells, a, "bash", Outcome::Unfinished), 1);
        assert_eq!(count(&cells, a, "invalid", Outcome::Invalid), 1);
        assert_eq!(count(&cells, b, "edit", Outcome::Error), 1);
        // The real server's: two bash calls rejected (one with a message),
        // one allowed; a question dismissed.
        assert_eq!(count(&cells, mock, "bash", Outcome::Rejected), 2);
        assert!(count(&cells, mock, "bash", Outcome::Completed) >= 1);
        assert_eq!(count(&cells, mock, "question", Outcome::Rejected), 1);
        // Totals equal the table's own counts, tool by tool.
        let mut by_tool: std::collections::BTreeMap<String, i64> = Default::default();
        for c in &cells {
            *by_tool.entry(c.tool.clone()).or_default() += c.calls as i64;
        }
        assert_eq!(by_tool.into_iter().collect::<Vec<_>>(), direct("tool"));
        // Filters: a model's, a project's, a time range's.
        let only_b = archive
            .tool_calls(&CallFilter {
                model: Some(b.into()),
                ..CallFilter::default()
            })
            .unwrap();
        assert_eq!(only_b.iter().map(|c| c.calls).sum::<u64>(), 1);
        let in_w = archive
            .tool_calls(&CallFilter {
                project: Some("/w".into()),
                ..CallFilter::default()
            })
            .unwrap();
        assert_eq!(in_w.iter().map(|c| c.calls).sum::<u64>(), 9);
        let later = archive
            .tool_calls(&CallFilter {
                since: Some(T + 1),
                ..CallFilter::default()
            })
            .unwrap();
        assert!(later.iter().all(|c| c.model == mock), "{later:?}");
        // A cell's failed calls, by their error.
        let failed = archive
            .failed_calls(&CallFilter::default(), a, "read", 100)
            .unwrap();
        let groups = failures::groups(failed);
        assert_eq!(groups.len(), 1, "{groups:#?}");
        assert_eq!(groups[0].fingerprint, "File not found: <path>");
        assert_eq!(groups[0].calls.len(), 2);
        let invalid = archive
            .failed_calls(&CallFilter::default(), a, "invalid", 100)
            .unwrap();
        assert!(
            invalid[0].error.starts_with("The arguments provided"),
            "{invalid:?}"
        );
    };
    check(&mut *archive);

    // As an archive written before the errors were kept in their rows:
    // read from the parts' JSON (the row's or the log's) once, the same.
    drop(archive);
    forget_errors();
    let mut archive = setting.open().unwrap().unwrap();
    check(&mut *archive);
    assert_eq!(direct("unread"), [("unread".to_string(), 0)]);

    // The command, in words, JSON and CSV; the error's escape inert.
    let run = |args: &[&str]| crate::support::insights::run("failures", &setting, args);
    let words = run(&[]);
    assert!(
        words.lines().next().unwrap().contains("tool calls")
            && words.contains("prov/m-a")
            && words.contains("REJECTED"),
        "{words}"
    );
    let json: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    let total: i64 = direct("tool").iter().map(|(_, n)| n).sum();
    assert_eq!(json["calls"].as_i64(), Some(total), "{json}");
    let csv = run(&["--csv", "--sort", "model"]);
    assert!(csv.starts_with("model,tool,calls,failed,rate,"), "{csv}");
    assert_eq!(
        csv.lines().count(),
        1 + json["cells"].as_array().unwrap().len()
    );
    let edit = run(&["--model", "prov/m-b", "--tool", "edit"]);
    assert!(
        edit.contains("1 failed call of edit by prov/m-b") && edit.contains("oldString not found"),
        "{edit}"
    );
}

#[test]
fn failures_by_model_and_tool_in_sqlite() {
    let mut files = Files(tempfile::tempdir().unwrap(), 0);
    let setting = files.fresh();
    let Setting::Sqlite(path) = setting.clone() else {
        unreachable!()
    };
    let p = path.clone();
    let direct: Direct = Box::new(move |what| {
        let c = rusqlite::Connection::open(&p).unwrap();
        let sql = match what {
            "tool" => {
                "SELECT tool, count(*) FROM parts WHERE kind = 'tool' GROUP BY tool ORDER BY tool"
            }
            _ => {
                "SELECT 'unread', count(*) FROM parts WHERE kind = 'tool' AND error IS NULL
                  AND (state = 'error' OR tool = 'invalid')"
            }
        };
        let mut st = c.prepare(sql).unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    let forget = move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute("UPDATE parts SET error = NULL", []).unwrap();
    };
    suite(setting, direct, &forget);
}

#[test]
fn failures_by_model_and_tool_in_postgres() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("insights");
    let setting = Setting::Postgres(url.clone());
    let direct: Direct = Box::new(move |what| {
        let sql = match what {
            "tool" => {
                "SELECT tool, count(*) FROM parts WHERE kind = 'tool' GROUP BY tool ORDER BY tool"
            }
            _ => {
                "SELECT 'unread', count(*) FROM parts WHERE kind = 'tool' AND error IS NULL
                  AND (state = 'error' OR tool = 'invalid')"
            }
        };
        postgres_support::rows(&url, sql)
            .into_iter()
            .map(|r| (r[0].clone(), r[1].parse().unwrap()))
            .collect()
    });
    let forget = || pg.sql("insights", "UPDATE parts SET error = NULL");
    suite(setting, direct, &forget);
}

/// The view (`I`): the rows at 80×24 and 200×50, an order, a range, a row
/// drilled into, and a failed call opened at its place in its session.
#[test]
fn the_view_drills_into_a_row_and_opens_a_failed_call() {
    use crate::common::{press, screen, settle};
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("archive.db"));
    let mut archive = setting.open().unwrap().unwrap();
    let fixtures = crate::common::fixtures_dir();
    import_file(
        &mut *archive,
        &fixtures.join("h_permission_reject").join("event.jsonl"),
    )
    .unwrap();
    import_file(&mut *archive, &crafted(dir.path())).unwrap();
    drop(archive);
    let mut app =
        ocview::app::App::new(ocview::app::config::Config::default(), "replay test", true).unwrap();
    // The sessions' clock: times and ranges are the same every run.
    app.now_ms = T + 3_600_000;
    app.archive.setting = Some(setting);
    let mut done = app.verbs.take_done();
    press(&mut app, &["I"]);
    assert!(screen(&mut app, 80, 24).contains("reading the archive"));
    settle(&mut app, &mut done, &|a| !a.overlays.insights.loading);
    // All time: the fixture's calls are months older than its clock.
    press(&mut app, &["5"]);
    settle(&mut app, &mut done, &|a| !a.overlays.insights.loading);
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("Failures by model and tool · all time"), "{s}");
    assert!(
        s.lines().any(|l| l.contains('›') && l.contains("bash")),
        "{s}"
    );
    insta::assert_snapshot!("insights_view_80x24", s);
    insta::assert_snapshot!("insights_view_200x50", screen(&mut app, 200, 50));
    press(&mut app, &["s", "s"]);
    assert!(screen(&mut app, 80, 24).contains("· by calls"));
    press(&mut app, &["s", "s", "s", "s"]);
    assert_eq!(
        app.overlays.insights.sort,
        SortBy::Calls.next().next().next().next()
    );

    // Drill into prov/m-a's read: two errors of one kind.
    let at = app
        .overlays
        .insights
        .cells
        .iter()
        .position(|c| c.model == "prov/m-a" && c.tool == "read")
        .unwrap();
    app.overlays.insights.selected = at;
    press(&mut app, &["enter"]);
    settle(&mut app, &mut done, &|a| {
        a.overlays
            .insights
            .drill
            .as_ref()
            .is_some_and(|d| !d.loading)
    });
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("2 failed calls, 1 kind of error") && s.contains("File not found: <path>"),
        "{s}"
    );
    insta::assert_snapshot!("insights_drill_80x24", s);
    // Esc goes back to the rows; enter again, then enter opens the call.
    press(&mut app, &["esc"]);
    assert!(app.overlays.insights.drill.is_none());
    press(&mut app, &["enter"]);
    settle(&mut app, &mut done, &|a| {
        a.overlays
            .insights
            .drill
            .as_ref()
            .is_some_and(|d| !d.loading)
    });
    let chosen = app
        .overlays
        .insights
        .drill
        .as_ref()
        .and_then(|d| d.chosen())
        .map(|c| c.part_id.clone())
        .unwrap();
    assert_eq!(chosen, "prt_ins_04", "the newest call first");
    press(&mut app, &["enter"]);
    assert_eq!(app.overlay, None);
    settle(&mut app, &mut done, &|a| a.selected_session().is_some());
    let s = screen(&mut app, 120, 30);
    assert!(
        s.contains("Calls that end every way") && s.contains("File not found"),
        "{s}"
    );
}

/// A command that only reads the archive, given a path where there is
/// none (a typo), says so and makes nothing there.
#[test]
fn a_reading_command_makes_no_archive_where_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo/archive.db");
    let place = missing.display().to_string();
    for args in [
        vec!["insights", "failures"],
        vec!["insights", "waits"],
        vec!["search", "billing"],
        vec!["audit"],
        vec!["archive", "stats"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(&args)
            .args(["--archive", &place])
            .env_remove("OCVIEW_ARCHIVE")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert!(
            said.contains("no archive at") && said.contains(&place),
            "{args:?}: {said}"
        );
        assert!(
            !missing.exists() && !dir.path().join("typo").exists(),
            "{args:?}"
        );
    }
}

/// The real server's own words for each outcome: a call of a tool that
/// does not exist, a permission rejected, a running command aborted (which
/// it ends `completed`, its output saying the user aborted it).
/// Recorded from opencode 1.18.33 and imported, each is counted as the
/// outcome it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_servers_invalid_rejected_and_aborted_calls_are_kept_apart() {
    use crate::support::fake_model::{FakeModel, Step, last_turn};
    use crate::support::opencode::Server;
    use serde_json::json;
    use std::time::{Duration, Instant};

    let model = FakeModel::start(std::sync::Arc::new(|req: &serde_json::Value, _| {
        let (text, step) = last_turn(req);
        if step > 0 {
            return Step::text("Done.");
        }
        if text.contains("missing tool") {
            Step::text("Calling it.").then_tool("no_such_tool", json!({"x": 1}))
        } else if text.contains("list files") {
            Step::text("Listing.")
                .then_tool("bash", json!({"command": "ls", "description": "List"}))
        } else {
            Step::text("Sleeping.").then_tool(
                "bash",
                json!({"command": "sleep 60", "description": "Wait a minute"}),
            )
        }
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("outcomes.jsonl");
    let mut recorder = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["record", &server.url()])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .spawn()
        .unwrap();
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let asked = || async {
        server
            .get("/permission")
            .await
            .as_array()
            .is_some_and(|a| !a.is_empty())
    };
    let s = server.create_session().await;
    server.prompt(&s, "use the missing tool").await;
    server.wait_idle(&s, 60).await;
    server.prompt(&s, "list files").await;
    server.until("the permission", 60, asked).await;
    assert_eq!(server.answer_permissions("reject").await, 1);
    server.wait_idle(&s, 60).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.prompt(&s, "sleep a while").await;
    server.until("the permission", 60, asked).await;
    assert_eq!(server.answer_permissions("once").await, 1);
    let start = Instant::now();
    while !read().contains(r#""command":"sleep 60""#) || !read().contains(r#""status":"running""#) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the command runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.post(&format!("/session/{s}/abort"), json!({})).await;
    server.wait_idle(&s, 60).await;
    let start = Instant::now();
    // OpenCode ends the stopped command `completed`, saying so in its
    // shell metadata (not "Tool execution aborted", which it says of a
    // call still pending).
    while !read().contains("User aborted the command") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the abort recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    recorder.kill().unwrap();
    recorder.wait().unwrap();

    let in_sqlite = real_outcomes(&Setting::Sqlite(dir.path().join("archive.db")), &file);
    // The PostgreSQL engine runs a runtime of its own: off this one.
    let in_postgres = std::thread::spawn(move || {
        let pg = postgres_support::Postgres::start_or_skip()?;
        let url = pg.database("outcomes");
        Some(real_outcomes(&Setting::Postgres(url), &file))
    })
    .join()
    .unwrap();
    if let Some(in_postgres) = in_postgres {
        assert_eq!(in_postgres, in_sqlite, "both engines count the same");
    }
}

/// The recording imported into one engine: one invalid, one rejected and
/// one aborted call, nothing else failed; its counts, sorted.
fn real_outcomes(setting: &Setting, file: &std::path::Path) -> Vec<(String, String, String, u64)> {
    let mut archive = setting.open().unwrap().unwrap();
    import_file(&mut *archive, file).unwrap();
    let counts = archive.tool_calls(&CallFilter::default()).unwrap();
    let of = |o: Outcome| -> u64 {
        counts
            .iter()
            .filter(|c| c.outcome == o)
            .map(|c| c.calls)
            .sum()
    };
    assert_eq!(
        (
            of(Outcome::Invalid),
            of(Outcome::Rejected),
            of(Outcome::Aborted)
        ),
        (1, 1, 1),
        "{counts:#?}"
    );
    assert_eq!(
        of(Outcome::Error) + of(Outcome::Unfinished),
        0,
        "{counts:#?}"
    );
    let invalid = counts
        .iter()
        .find(|c| c.outcome == Outcome::Invalid)
        .unwrap();
    assert_eq!(
        (invalid.tool.as_str(), invalid.model.as_str()),
        ("invalid", "mock/mock-1")
    );
    let mut kept: Vec<_> = counts
        .iter()
        .map(|c| {
            (
                c.model.clone(),
                c.tool.clone(),
                c.outcome.name().to_string(),
                c.calls,
            )
        })
        .collect();
    kept.sort();
    kept
}
