//! Where the money went (#41, point 3), on both engines, from a real
//! opencode 1.18.33 session on a priced model: its provider first refuses
//! (its stream fails midway: opencode says `retry` and waits), then answers reading some
//! of the prompt from its cache, with a tool call that fails, then ends.
//! `ocview record` keeps the stream; imported, the archive's cost, tokens,
//! cache-read share, failed steps and retries equal direct SQL over the
//! same archive (and each other), rows from before the figures were kept
//! are read from their JSON, and `ocview insights cost` says them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::fake_model::{FakeModel, Step};
use crate::support::opencode::Server;
use crate::support::postgres as postgres_support;

use ocview::archive::Setting;
use ocview::archive::import::import_file;
use ocview::archive::tool_calls::CallFilter;
use ocview::insights::cost::figures;

/// A usage chunk with `cached` of its 1,000 prompt tokens read from cache.
fn usage(cached: u64) -> serde_json::Value {
    json!({"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
           "prompt_tokens_details": {"cached_tokens": cached}})
}

/// The session's stream, recorded: a failed stream retried, a failed
/// read, an end.
async fn recorded_session(dir: &std::path::Path) -> std::path::PathBuf {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let model = FakeModel::start(Arc::new(move |_, n| {
        if n == 0 && seen.fetch_add(1, Ordering::SeqCst) == 0 {
            return Step::text("Let me").fail_midway();
        }
        match n {
            0 => Step::text("Reading it.")
                .then_tool("read", json!({"filePath": "missing.txt"}))
                .usage(usage(600)),
            _ => Step::text("It is not there.").usage(usage(800)),
        }
    }))
    .await;
    let mut server = Server::prepare(&model.url(), None);
    // A priced model: opencode works out each step's cost.
    let config_path = server.project.join("opencode.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["provider"]["mock"]["models"]["mock-1"]["cost"] =
        json!({"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75});
    std::fs::write(&config_path, config.to_string()).unwrap();
    server.launch().await;
    let file = dir.join("priced.jsonl");
    let mut recorder = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["record", &server.url()])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .spawn()
        .unwrap();
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let until = |what: &str, f: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        while !f(&read()) {
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "timed out waiting for {what} ({} model calls):\n{}",
                model.requests().len(),
                read()
                    .lines()
                    .filter(|l| !l.contains("plugin.added") && !l.contains("part.delta"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    until("the connection", &|t| t.contains("server.connected"));
    let s = server.create_session().await;
    server.prompt(&s, "read missing.txt").await;
    until("the turn's end in the recording", &|t| {
        t.contains("It is not there.") && t.contains(r#""type":"idle""#)
    });
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    assert!(
        read().contains(r#""type":"retry""#),
        "opencode said it retries"
    );
    file
}

/// Direct SQL over the archive: assistant messages, their cost, input and
/// cache reads; retries and the ms they waited; steps with a failed call.
type Direct = Box<dyn Fn() -> (i64, f64, i64, i64, i64, i64, i64)>;

/// Forgets every message's figures and every retry, as an archive written
/// before schema 18 has them.
type Forget = Box<dyn Fn()>;

fn suite(
    setting: &Setting,
    file: &std::path::Path,
    direct: Direct,
    forget: Forget,
) -> ocview::insights::cost::Cost {
    let mut archive = setting.open().unwrap().unwrap();
    import_file(&mut *archive, file).unwrap();
    let spending = archive.spending(&CallFilter::default(), 0).unwrap();
    let c = figures(&spending, None);
    let (messages, cost, input, cache_read, retries, waited, failed) = direct();
    assert_eq!(c.messages as i64, messages, "{c:#?}");
    assert!(messages >= 2, "two steps at least: {c:#?}");
    assert!(
        (c.total.cost - cost).abs() < 1e-9,
        "{} vs {cost}",
        c.total.cost
    );
    assert!(cost > 0.0, "a priced model's steps cost something");
    assert_eq!(
        (c.total.input as i64, c.total.cache_read as i64),
        (input, cache_read)
    );
    assert!(cache_read > 0, "the provider's cache reads are kept");
    assert_eq!(
        c.cache_share,
        Some(cache_read as f64 / (input + cache_read) as f64)
    );
    assert_eq!(
        (c.retry_count() as i64, c.retry_wait_ms()),
        (retries, waited)
    );
    assert_eq!(retries, 1, "one failed stream, one retry");
    assert!(
        waited > 0 && waited < 60_000,
        "a retry waits for its next attempt, on one clock: {waited}"
    );
    assert_eq!(c.retries[0].provider, "mock");
    assert_eq!(c.failed_steps as i64, failed);
    assert_eq!(failed, 1, "the step that read a missing file");
    assert!(c.failed_cost > 0.0 && c.failed_cost < cost);
    assert_eq!(c.by_model.len(), 1);
    assert_eq!(c.by_model[0].model, "mock/mock-1");
    assert_eq!(c.costliest.len(), 1);
    assert!((c.costliest[0].figures.cost - cost).abs() < 1e-9);
    // The server's prices came with the stream: cache reads at $3 less
    // $0.30 a million.
    let saved = c.saved.expect("the model's prices are known");
    assert!(
        (saved - cache_read as f64 * 2.7 / 1e6).abs() < 1e-12,
        "{saved}"
    );
    // Imported again: nothing counted twice.
    import_file(&mut *archive, file).unwrap();
    let again = figures(&archive.spending(&CallFilter::default(), 0).unwrap(), None);
    assert_eq!(again, c);
    // Rows from before the figures were kept are read from their JSON,
    // their retries from the log: counted again, their waits their own
    // or unknown (a log dates its blocks, not each event), never guessed.
    forget();
    let mut read = figures(&archive.spending(&CallFilter::default(), 0).unwrap(), None);
    let waits = |c: &ocview::insights::cost::Cost| -> Vec<(String, u64, u64)> {
        let r = c.retries.iter();
        r.map(|r| (r.provider.clone(), r.retries, r.sessions))
            .collect()
    };
    assert_eq!(
        waits(&read),
        waits(&c),
        "the retries read again from the log"
    );
    assert!(
        read.retry_wait_ms() == c.retry_wait_ms() || read.retry_wait_ms() == 0,
        "{read:#?}"
    );
    read.retries = c.retries.clone();
    assert_eq!(read, c, "the figures read again from the messages' JSON");
    drop(archive);

    let run = |args: &[&str]| crate::support::insights::run("cost", setting, args);
    let words = run(&[]);
    assert!(
        words.contains(&format!("in {messages} assistant messages"))
            && words.contains("the cache saved ")
            && words.contains("steps that made a failed tool call: 1")
            && words.contains("retries: 1 waiting")
            && words.contains("mock/mock-1"),
        "{words}"
    );
    let parsed: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    assert_eq!(parsed["messages"], messages);
    assert_eq!(parsed["retries"][0]["provider"], "mock");
    let csv = run(&["--csv"]);
    assert!(csv.starts_with("day,model,messages,cost,"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "one model on one day: {csv}");
    // Pruned, a session's retries go with it.
    let mut archive = setting.open().unwrap().unwrap();
    let ids: Vec<String> = c.costliest.iter().map(|s| s.session_id.clone()).collect();
    archive.delete_sessions(&ids).unwrap();
    assert_eq!(direct().4, 0, "no retry left of a pruned session");
    c
}

const FORGET: &str = "UPDATE messages SET cost = NULL, tokens_input = NULL, tokens_output = NULL,
    tokens_reasoning = NULL, tokens_cache_read = NULL, tokens_cache_write = NULL;
    DELETE FROM retries";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_cache_retries_and_failed_steps_of_a_real_session_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_session(dir.path()).await;

    let db = dir.path().join("archive.db");
    let path = db.clone();
    let sqlite: Direct = Box::new(move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        let (messages, cost, input, cache_read) = c
            .query_row(
                "SELECT count(*), coalesce(sum(json_extract(raw, '$.cost')), 0.0),
                        coalesce(sum(json_extract(raw, '$.tokens.input')), 0),
                        coalesce(sum(json_extract(raw, '$.tokens.cache.read')), 0)
                 FROM messages WHERE role = 'assistant'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        let (retries, waited) = c
            .query_row(
                "SELECT count(*), coalesce(sum(next - at), 0) FROM retries
                 WHERE next - at BETWEEN 0 AND 86400000",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let failed = c
            .query_row(
                "SELECT count(*) FROM messages m WHERE role = 'assistant' AND EXISTS
                   (SELECT 1 FROM parts p WHERE p.message_id = m.id AND p.kind = 'tool'
                      AND p.state = 'error')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (messages, cost, input, cache_read, retries, waited, failed)
    });
    let path = db.clone();
    let forget: Forget = Box::new(move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(FORGET).unwrap();
    });
    let in_sqlite = suite(&Setting::Sqlite(db), &file, sqlite, forget);
    // The PostgreSQL engine runs a runtime of its own: off this one.
    std::thread::spawn(move || in_postgres(&file, &in_sqlite))
        .join()
        .unwrap();
}

/// PostgreSQL keeps most messages in its event log alone (an empty row):
/// their figures are in their rows all the same, equal to SQLite's.
fn in_postgres(file: &std::path::Path, in_sqlite: &ocview::insights::cost::Cost) {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("cost");
    let u = url.clone();
    let postgres: Direct = Box::new(move || {
        let one = |sql: &str| postgres_support::rows(&u, sql).remove(0);
        let m = one(
            "SELECT count(*), coalesce(sum(cost), 0), coalesce(sum(tokens_input), 0),
                    coalesce(sum(tokens_cache_read), 0),
                    count(*) FILTER (WHERE raw = '')
             FROM messages WHERE role = 'assistant'",
        );
        assert!(
            m[0] == "0" || m[4] != "0",
            "messages the log holds keep an empty row"
        );
        let r = one("SELECT count(*), coalesce(sum(next - at), 0) FROM retries
             WHERE next - at BETWEEN 0 AND 86400000");
        let f = one(
            "SELECT count(*) FROM messages m WHERE role = 'assistant' AND EXISTS
               (SELECT 1 FROM parts p WHERE p.message_id = m.id AND p.kind = 'tool'
                  AND p.state = 'error')",
        );
        let n = |s: &str| s.parse::<i64>().unwrap();
        (
            n(&m[0]),
            m[1].parse().unwrap(),
            n(&m[2]),
            n(&m[3]),
            n(&r[0]),
            n(&r[1]),
            n(&f[0]),
        )
    });
    let u = url.clone();
    let forget: Forget = Box::new(move || {
        postgres_support::rows(&u, FORGET);
    });
    let c = suite(&Setting::Postgres(url), file, postgres, forget);
    assert_eq!(&c, in_sqlite, "both engines say the same");
}

/// Two sessions on two models over two days, at known prices: one step
/// with a failed call, one retry of 4 s.
fn priced_file(dir: &std::path::Path) -> std::path::PathBuf {
    const DAY: i64 = 86_400_000;
    let noon = 1_790_000_000_000 / DAY * DAY + DAY / 2;
    let session = |id: &str, title: &str, at: i64| {
        json!({"t": at, "event": {"type": "session.updated", "properties": {"info":
            {"id": id, "title": title, "directory": "/work/shop", "time": {"created": at, "updated": at}}}}})
    };
    let message =
        |id: &str, session: &str, model: &str, at: i64, cost: f64, input: u64, read: u64| {
            let (provider, model) = model.split_once('/').unwrap();
            json!({"t": at, "event": {"type": "message.updated", "properties": {"info":
            {"id": id, "sessionID": session, "role": "assistant", "providerID": provider,
             "modelID": model, "cost": cost, "time": {"created": at, "completed": at + 1000},
             "tokens": {"input": input, "output": 100, "reasoning": 0,
                        "cache": {"read": read, "write": 0}}}}}})
        };
    let lines = [
        session("ses_a", "Refactor the billing module", noon),
        message(
            "msg_a1",
            "ses_a",
            "anthropic/claude-sonnet",
            noon + 1_000,
            1.25,
            2_000,
            6_000,
        ),
        json!({"t": noon + 2_000, "event": {"type": "message.part.updated", "properties": {"part":
            {"id": "prt_a1", "messageID": "msg_a1", "sessionID": "ses_a", "type": "tool",
             "tool": "bash", "callID": "c1", "state": {"status": "error", "input": {"command": "make"},
             "error": "make: *** No rule to make target", "time": {"start": noon + 2_000, "end": noon + 2_500}}}}}}),
        json!({"t": noon + 3_000, "event": {"type": "session.status", "properties": {"sessionID": "ses_a",
            "status": {"type": "retry", "attempt": 1, "message": "Overloaded", "next": noon + 7_000}}}}),
        message(
            "msg_a2",
            "ses_a",
            "anthropic/claude-sonnet",
            noon + 8_000,
            0.75,
            1_000,
            9_000,
        ),
        session("ses_b", "Write the release notes", noon + DAY),
        message(
            "msg_b1",
            "ses_b",
            "openai/gpt-5",
            noon + DAY + 1_000,
            0.5,
            4_000,
            0,
        ),
    ];
    let path = dir.join("priced.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

#[test]
fn the_cost_view_shows_where_the_money_went_and_opens_the_costliest() {
    use crate::common::{press, screen, settle};
    let dir = tempfile::tempdir().unwrap();
    let setting = Setting::Sqlite(dir.path().join("archive.db"));
    let mut archive = setting.open().unwrap().unwrap();
    import_file(&mut *archive, &priced_file(dir.path())).unwrap();
    drop(archive);
    let mut app =
        ocview::app::App::new(ocview::app::config::Config::default(), "replay test", true).unwrap();
    app.now_ms = 1_790_200_000_000;
    app.archive.setting = Some(setting);
    let mut done = app.verbs.take_done();
    press(&mut app, &["I", "5"]);
    settle(&mut app, &mut done, &|a| !a.overlays.insights.loading);
    press(&mut app, &["tab", "tab"]);
    settle(&mut app, &mut done, &|a| {
        a.overlays.insights.cost.is_some() && !a.overlays.insights.loading
    });
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("Cost · all time")
            && s.contains("$2.50 in 3 assistant messages")
            && s.contains("cache-read share 68%")
            && s.contains("steps with a failed tool call: 1 costing $1.25")
            && s.contains("retries: 1 waiting 4.0 s (anthropic 1)")
            && s.contains("Refactor the billing module"),
        "{s}"
    );
    insta::assert_snapshot!("insights_cost_80x24", s);
    insta::assert_snapshot!("insights_cost_200x50", screen(&mut app, 200, 50));
    press(&mut app, &["down", "enter"]);
    assert_eq!(app.overlay, None);
    settle(&mut app, &mut done, &|a| a.selected_session().is_some());
    assert_eq!(
        app.selected_session()
            .map(|s| ocview::model::store::fleet::bare(&s.info.id).to_string()),
        Some("ses_b".to_string()),
        "the second costliest, opened"
    );
    // Tab once more: back to the failures.
    press(&mut app, &["I", "tab"]);
    assert_eq!(
        app.overlays.insights.kind,
        ocview::app::overlays::insights::Kind::Failures
    );
}
