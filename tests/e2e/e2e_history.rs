//! History from opencode's database, end to end (issue 27's acceptance):
//! the real opencode 1.18.33 runs a subagent task, todos and a permission,
//! is stopped, and ocview with no server shows the same sessions, texts,
//! tools, tree and totals; ocview reads while the server imports a large
//! session; and bad databases on screen say why and keep what is readable.

use crate::common;
use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::screen;
use ocview::app::App;
use ocview::source::msg::SourceMsg;
use ocview::source::opencode_db::Db;
use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, first_user_text, last_turn};
use support::long_session::LongSession;
use support::opencode::{Server, binary};
use tokio::sync::mpsc;

/// ocview's history source on `db`, in-process, as `ocview history DB` runs it.
pub(crate) fn history_app(
    rt: &tokio::runtime::Runtime,
    db: &Path,
) -> (App, mpsc::Receiver<SourceMsg>) {
    let mut app = App::new(ocview::app::config::Config::default(), "history", false).unwrap();
    let (tx, rx) = mpsc::channel(8192);
    let _guard = rt.enter();
    ocview::app::launch::history::open_database(&mut app, db.to_path_buf(), tx, None);
    (app, rx)
}

/// Apply what the reader sends until `until` holds, or fail with the screen.
pub(crate) fn pump(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    rx: &mut mpsc::Receiver<SourceMsg>,
    what: &str,
    until: impl Fn(&App, &str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = screen(app, 160, 40);
        if until(app, &text) {
            return text;
        }
        assert!(Instant::now() < deadline, "never came: {what}\n{text}");
        rt.block_on(async {
            if let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await
            {
                app.on_source(msg);
            }
        });
        while let Ok(msg) = rx.try_recv() {
            app.on_source(msg);
        }
    }
}

pub(crate) fn key(id: &str) -> String {
    format!("{id}@history")
}

/// What a message shows, comparable between the server's JSON and the store:
/// its id and role, and per part its id, type, text and tool (name, status).
pub(crate) fn shown_message(info: &Value, parts: &[Value]) -> Value {
    json!({
        "id": info["id"], "role": info["role"],
        "parts": parts.iter().map(|p| json!({
            "id": p["id"], "type": p["type"], "text": p["text"],
            "tool": p["tool"], "status": p["state"]["status"],
            "input": p["state"]["input"],
        })).collect::<Vec<_>>(),
    })
}

pub(crate) fn store_messages(app: &App, id: &str) -> Vec<Value> {
    let session = app.store.session(&key(id)).unwrap();
    session
        .messages
        .iter()
        .map(|m| {
            let info: Value = m
                .info
                .raw
                .as_ref()
                .map(|r| serde_json::from_str(r.get()).unwrap())
                .unwrap_or_else(|| json!({"id": m.info.id}));
            let parts: Vec<Value> = m.parts.iter().map(|p| p.to_value()).collect();
            let mut info = info;
            info["id"] = json!(m.info.id);
            shown_message(&info, &parts)
        })
        .collect()
}

/// Parent: todos, then a subagent task whose child runs a bash command
/// that asks permission; every step reports usage (for the totals).
pub(crate) fn scenario() -> support::fake_model::Script {
    std::sync::Arc::new(|req: &Value, _n: usize| {
        let asked = first_user_text(req);
        let child = asked.contains("SUBTASK");
        let (_, step) = last_turn(req);
        let s = match (child, step) {
            // The sibling session: a plain answer, no tools.
            (false, _) if asked.contains("just answer") => Step::text("Just an answer."),
            (false, 0) => Step::text("Planning first.").then_tool(
                "todowrite",
                json!({"todos": [
                    {"content": "Inspect the readme", "status": "completed", "priority": "high"},
                    {"content": "Delegate the cleanup", "status": "in_progress", "priority": "medium"}]}),
            ),
            (false, 1) => Step::text("Delegating now.").then_tool(
                "task",
                json!({"description": "Clean up", "prompt": "SUBTASK: echo a word", "subagent_type": "general"}),
            ),
            (false, _) => Step::text("All finished, the parent says."),
            (true, 0) => Step::text("Running it.").then_tool(
                "bash",
                json!({"command": "echo history-e2e", "description": "say a word"}),
            ),
            (true, _) => Step::text("The child is done."),
        };
        s.usage(
            json!({"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
            "prompt_tokens_details": {"cached_tokens": 200}}),
        )
    })
}

/// What the server shows of every session: info and messages (with parts).
pub(crate) async fn server_view(server: &Server) -> BTreeMap<String, (Value, Vec<Value>)> {
    let list = server.get("/session").await;
    let mut out = BTreeMap::new();
    for info in list.as_array().unwrap() {
        let id = info["id"].as_str().unwrap().to_string();
        let messages = server.messages(&id).await;
        out.insert(id, (info.clone(), messages));
    }
    out
}

pub(crate) fn database_of(server: &Server) -> PathBuf {
    server.home.join("data/opencode/opencode.db")
}

#[test]
pub(crate) fn with_no_server_the_database_shows_what_the_server_showed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (mut server, shown) = rt.block_on(async {
        let model = FakeModel::start(scenario()).await;
        let server = Server::start(&model.url()).await;
        let parent = server.create_session().await;
        server.prompt(&parent, "plan and delegate").await;
        // The child's bash asks (and whatever else asks on the way): answer
        // every permission as a user would, until the parent's turn is done.
        server
            .until(
                "every permission answered, the parent idle",
                120,
                || async {
                    server.answer_permissions("once").await;
                    let status = server.get("/session/status").await;
                    if status.get(&parent).is_some_and(|s| s["type"] != "idle") {
                        return false;
                    }
                    let msgs = server.messages(&parent).await;
                    msgs.last().is_some_and(|m| {
                        m["info"]["role"] == "assistant"
                            && m["info"]["time"]["completed"].is_number()
                            && m["info"]["finish"] != "tool-calls"
                    })
                },
            )
            .await;
        // A second, plain session (a sibling root).
        let other = server.create_session().await;
        server.prompt(&other, "just answer").await;
        server.wait_idle(&other, 90).await;
        // Titles are set by a model call after the turn: wait for them.
        server
            .until("titles", 60, || async {
                let list = server.get("/session").await;
                list.as_array()
                    .unwrap()
                    .iter()
                    .all(|i| !i["title"].as_str().unwrap().starts_with("New session"))
            })
            .await;
        let shown = server_view(&server).await;
        (server, shown)
    });
    assert_eq!(shown.len(), 3, "parent, child, other: {:?}", shown.keys());
    let child = shown
        .values()
        .find(|(i, _)| i["parentID"].is_string())
        .expect("a child session")
        .0
        .clone();
    server.kill();
    let db = database_of(&server);

    let (mut app, mut rx) = history_app(&rt, &db);
    let text = pump(&rt, &mut app, &mut rx, "every session listed", |a, _| {
        shown.keys().all(|id| a.store.session(&key(id)).is_some())
    });
    // Titles and tree, in the store and on screen (the child under its parent).
    for (id, (info, _)) in &shown {
        let s = app.store.session(&key(id)).unwrap();
        assert_eq!(s.info.title, info["title"].as_str().unwrap(), "{id}");
        assert_eq!(
            s.info
                .parent_id
                .as_deref()
                .map(|p| p.trim_end_matches("@history")),
            info["parentID"].as_str(),
            "{id}"
        );
    }
    let parent_id = child["parentID"].as_str().unwrap();
    let parent_title = shown[parent_id].0["title"].as_str().unwrap();
    let child_title = child["title"].as_str().unwrap();
    // Titles may be cut to the list's width: found by their first words.
    let at = |t: &str| {
        let start: String = t.chars().take(12).collect();
        text.lines().position(|l| l.contains(&start))
    };
    assert!(
        at(parent_title).is_some() && at(child_title) > at(parent_title),
        "{parent_title} / {child_title}:\n{text}"
    );

    // Each session opened: the same messages, texts and tools; the same totals.
    for (id, (info, messages)) in &shown {
        app.selected = Some(key(id));
        let want: Vec<Value> = messages
            .iter()
            .map(|m| shown_message(&m["info"], m["parts"].as_array().unwrap()))
            .collect();
        pump(&rt, &mut app, &mut rx, id, |a, _| {
            a.store
                .session(&key(id))
                .is_some_and(|s| s.messages.len() == want.len())
        });
        assert_eq!(store_messages(&app, id), want, "{id}");
        let s = app.store.session(&key(id)).unwrap();
        let totals = s.totals();
        let tokens = &info["tokens"];
        assert_eq!(
            totals.tokens.input,
            tokens["input"].as_u64().unwrap(),
            "{id}"
        );
        assert_eq!(
            totals.tokens.output,
            tokens["output"].as_u64().unwrap(),
            "{id}"
        );
        assert_eq!(
            totals.tokens.cache.read,
            tokens["cache"]["read"].as_u64().unwrap(),
            "{id}"
        );
        assert!(totals.tokens.input > 0, "{id}: usage was reported");
        assert!((totals.cost - info["cost"].as_f64().unwrap()).abs() < 1e-9);
    }
    // Tools as the server ran them: todowrite and task in the parent, bash in the child.
    let tools: Vec<String> = shown
        .values()
        .flat_map(|(_, ms)| ms.iter())
        .flat_map(|m| m["parts"].as_array().unwrap().iter())
        .filter_map(|p| p["tool"].as_str().map(str::to_string))
        .collect();
    for t in ["todowrite", "task", "bash"] {
        assert!(tools.iter().any(|x| x == t), "{t} ran: {tools:?}");
    }
    // The todos, read from their own table. They follow the opened page as
    // an event of their own, so they are waited for like the page was.
    pump(&rt, &mut app, &mut rx, "the parent's todos", |a, _| {
        let todos = &a.store.session(&key(parent_id)).unwrap().todos;
        format!("{todos:?}").contains("Delegate the cleanup")
    });
    // The opened parent on screen: its texts and tools.
    app.selected = Some(key(parent_id));
    pump(&rt, &mut app, &mut rx, "the parent on screen", |_, t| {
        t.contains("All finished, the parent says") || t.contains("Delegating now")
    });
}

pub(crate) const LONG: &str = "ses_dfd705bd5ffeHistImportLong";
pub(crate) const LONG_MESSAGES: usize = 3000;

/// While `opencode import` writes a large session into the running server's
/// database, ocview's reader and its history source read it over and over:
/// no read fails, the import completes, and every message is then shown.
#[test]
pub(crate) fn reading_while_the_server_imports_a_large_session() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(FakeModel::start(support::fake_model::steps(vec![
        Step::text("Hello."),
    ])));
    let server = rt.block_on(async {
        let server = Server::start(&model.url()).await;
        let s = server.create_session().await;
        server.prompt(&s, "say hello").await;
        server.wait_idle(&s, 60).await;
        server
    });
    let project = rt.block_on(server.get("/project/current"));
    let long = LongSession {
        session: LONG,
        title: "A large imported session",
        messages: LONG_MESSAGES,
        id_tail: &|i| format!("Hist{i:010}"),
        text: &|i| format!("Imported message number {i}"),
    };
    let (doc, ids) = long.document(
        project["id"].as_str().unwrap(),
        &server.project.display().to_string(),
    );
    let file = server.home.join("long-export.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let db = database_of(&server);

    let (mut app, mut rx) = history_app(&rt, &db);
    pump(&rt, &mut app, &mut rx, "the first session", |a, _| {
        !a.store.sessions().is_empty()
    });
    let mut import = server
        .command(&binary())
        .args(["import", &file.display().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read as a viewer does, again and again, until the import ends.
    let mut reads = 0usize;
    let mut seen_during = 0u64;
    let status = loop {
        let r = Db::open(&db).and_then(|d| {
            d.sessions(100, None)?;
            let n = d.message_count(LONG)?.unwrap_or(0);
            let page = d.message_page(LONG, 50, None)?;
            let ids: Vec<&str> = page.iter().map(|m| m.id.as_str()).collect();
            d.parts_of(&ids)?;
            Ok(n)
        });
        match r {
            Ok(n) => seen_during = seen_during.max(n),
            Err(e) => panic!("a read failed during the import (read {reads}): {e}"),
        }
        reads += 1;
        // The history source follows the database meanwhile.
        while let Ok(msg) = rx.try_recv() {
            app.on_source(msg);
        }
        let _ = screen(&mut app, 120, 30);
        if let Some(status) = import.try_wait().unwrap() {
            break status;
        }
    };
    let mut err = String::new();
    std::io::Read::read_to_string(import.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "opencode import failed: {err}");
    assert!(reads > 1, "read {reads} times during the import");
    eprintln!("{reads} reads during the import; saw up to {seen_during} messages mid-way");
    // Every message is there, for the server and for ocview.
    let served = rt.block_on(server.messages(LONG));
    assert_eq!(served.len(), LONG_MESSAGES);
    assert_eq!(
        Db::open(&db).unwrap().message_count(LONG).unwrap(),
        Some(LONG_MESSAGES as u64)
    );
    pump(
        &rt,
        &mut app,
        &mut rx,
        "the imported session listed",
        |a, _| a.store.session(&key(LONG)).is_some(),
    );
    app.selected = Some(key(LONG));
    let last = format!("Imported message number {}", LONG_MESSAGES - 1);
    pump(&rt, &mut app, &mut rx, "its last message", |_, t| {
        t.contains(&last)
    });
    let s = app.store.session(&key(LONG)).unwrap();
    assert_eq!(
        s.messages.last().map(|m| m.info.id.as_str()),
        ids.last().map(String::as_str)
    );
}

// ---- Bad databases, on screen ----
