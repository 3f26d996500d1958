//! Where the money went (#41, point 3), on both engines, from a real
//! opencode 1.18.33 session on a priced model: its provider first refuses
//! (its stream fails midway: opencode says `retry` and waits), then answers reading some
//! of the prompt from its cache, with a tool call that fails, then ends.
//! `ocview record` keeps the stream; imported, the archive's cost, tokens,
//! cache-read share, failed steps and retries equal direct SQL over the
//! same archive, and `ocview insights cost` says them. On PostgreSQL the
//! retries are kept, and the command says it cannot sum its logged
//! messages yet.

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

fn suite(setting: &Setting, file: &std::path::Path, direct: Direct) {
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
    // Imported again: nothing counted twice.
    import_file(&mut *archive, file).unwrap();
    let again = figures(&archive.spending(&CallFilter::default(), 0).unwrap(), None);
    assert_eq!(again, c);
    drop(archive);

    let place = match setting {
        Setting::Sqlite(p) => p.display().to_string(),
        Setting::Postgres(url) => url.clone(),
        Setting::Off => unreachable!(),
    };
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["insights", "cost", "--archive", &place])
            .args(args)
            .env_remove("OCVIEW_ARCHIVE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let words = run(&[]);
    assert!(
        words.contains(&format!("in {messages} assistant messages"))
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_cache_retries_and_failed_steps_of_a_real_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_session(dir.path()).await;

    let db = dir.path().join("archive.db");
    let path = db.clone();
    let sqlite: Direct = Box::new(move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        let (messages, cost, input, cache_read) = c
            .query_row(
                "SELECT count(*), sum(json_extract(raw, '$.cost')),
                        sum(json_extract(raw, '$.tokens.input')),
                        sum(json_extract(raw, '$.tokens.cache.read'))
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
    suite(&Setting::Sqlite(db), &file, sqlite);
    // The PostgreSQL engine runs a runtime of its own: off this one.
    std::thread::spawn(move || in_postgres(&file))
        .join()
        .unwrap();
}

/// PostgreSQL keeps a message the log holds as it is in the log alone:
/// its cost is not summed from rows there yet, and the command says so
/// rather than print figures short of those messages.
fn in_postgres(file: &std::path::Path) {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("cost");
    let setting = Setting::Postgres(url.clone());
    let mut archive = setting.open().unwrap().unwrap();
    import_file(&mut *archive, file).unwrap();
    let err = archive
        .spending(&CallFilter::default(), 0)
        .expect_err("figures short of the logged messages");
    assert!(
        err.to_string().contains("kept only in its event log"),
        "{err}"
    );
    let retries = postgres_support::rows(&url, "SELECT count(*), min(next - at) FROM retries");
    assert_eq!(retries[0][0], "1", "the retry is kept: {retries:?}");
    drop(archive);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["insights", "cost", "--archive", &url])
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not read from a PostgreSQL archive yet"),
        "{out:?}"
    );
}
