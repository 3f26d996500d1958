//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod built;
pub mod frame_probe;

use std::path::{Path, PathBuf};

use ocview::model::{NoObserver, ReplyObserver, Store};
use ocview::source::{IngestStats, ReplayReader, ingest};

/// `tests/fixtures/opencode-1.18.33` (copied from the captures in
/// `../shared/fixtures`), or `$OCVIEW_FIXTURES`.
pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("OCVIEW_FIXTURES") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-1.18.33")
}

/// Every scenario folder, sorted. Panics when there are none: a test that
/// silently walks nothing would prove nothing.
pub fn scenarios() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixtures at {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("event.jsonl").is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no fixture scenarios in {}", dir.display());
    out
}

pub fn replay_bytes(bytes: &[u8]) -> (Store, IngestStats) {
    replay_with(bytes, &mut NoObserver)
}

pub fn replay_with(bytes: &[u8], obs: &mut dyn ReplyObserver) -> (Store, IngestStats) {
    let mut reader = ReplayReader::new(bytes);
    let mut store = Store::new();
    let stats = ingest(&mut reader, &mut store, obs).expect("in-memory read cannot fail");
    (store, stats)
}

pub fn replay_file(path: &Path) -> (Store, IngestStats) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    replay_bytes(&bytes)
}

/// An app fed with a recording through the same path as the viewer.
pub fn app_with(bytes: &[u8]) -> ocview::app::App {
    let mut app =
        ocview::app::App::new(ocview::app::config::Config::default(), "replay test", true).unwrap();
    // Searches answer at once, so a key's result is there for the next frame.
    app.overlays.search.worker = ocview::app::overlays::search::worker::SearchWorker::inline();
    feed(&mut app, bytes);
    app
}

pub fn feed(app: &mut ocview::app::App, bytes: &[u8]) {
    use ocview::source::msg::SourceMsg;
    let mut reader = ReplayReader::new(bytes);
    while let Some(record) = reader.next_record().unwrap() {
        app.on_source(SourceMsg::Record(Box::new(record)));
    }
}

pub fn fixture(name: &str, file: &str) -> Vec<u8> {
    let path = fixtures_dir().join(name).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The state part of a `--dump` (no counters, no problem lines), to compare
/// two ways of reaching one state.
pub fn dump_state(dump: &str) -> String {
    dump.lines()
        .filter(|l| {
            !l.starts_with("summary:")
                && !l.starts_with("form:")
                && !l.starts_with("ignored types:")
                && !l.starts_with("line ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each session of an app selected in turn and drawn: the screens.
pub fn screens_of_every_session(
    app: &mut ocview::app::App,
    width: u16,
    height: u16,
) -> Vec<String> {
    let ids: Vec<String> = app
        .store
        .sessions()
        .iter()
        .map(|s| s.info.id.clone())
        .collect();
    ids.into_iter()
        .map(|id| {
            app.selected = Some(id);
            screen(app, width, height)
        })
        .collect()
}

/// Lay out and draw one frame on a test backend; the screen as text.
pub fn screen(app: &mut ocview::app::App, width: u16, height: u16) -> String {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(ratatui::layout::Rect::new(0, 0, width, height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    // As the loop does once a frame is out: a prompt it showed is seen.
    app.frame_flushed(tokio::time::Instant::now());
    buffer_text(terminal.backend().buffer())
}

pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            // The cells a wide character covers after its first are fillers.
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Press keys as a user would: `"j"`, `"G"`, `"tab"`, `"ctrl-d"`, `"esc"`.
pub fn press(app: &mut ocview::app::App, keys: &[&str]) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    for k in keys {
        let (code, mods) = match *k {
            "tab" => (KeyCode::Tab, KeyModifiers::NONE),
            "esc" => (KeyCode::Esc, KeyModifiers::NONE),
            "enter" => (KeyCode::Enter, KeyModifiers::NONE),
            "space" => (KeyCode::Char(' '), KeyModifiers::NONE),
            "backspace" => (KeyCode::Backspace, KeyModifiers::NONE),
            "up" => (KeyCode::Up, KeyModifiers::NONE),
            "down" => (KeyCode::Down, KeyModifiers::NONE),
            "right" => (KeyCode::Right, KeyModifiers::NONE),
            "left" => (KeyCode::Left, KeyModifiers::NONE),
            "pageup" => (KeyCode::PageUp, KeyModifiers::NONE),
            "end" => (KeyCode::End, KeyModifiers::NONE),
            k if k.starts_with("ctrl-") => (
                KeyCode::Char(k.chars().last().unwrap()),
                KeyModifiers::CONTROL,
            ),
            k => (KeyCode::Char(k.chars().next().unwrap()), KeyModifiers::NONE),
        };
        app.on_key(KeyEvent::new(code, mods));
        // As the loop does when the search worker has answered.
        app.on_search_results();
    }
}

/// Calls of the tool `name` the server sent (not ocview's own stream-only
/// cards).
pub fn tool_calls(store: &Store, name: &str) -> usize {
    store
        .sessions()
        .iter()
        .flat_map(|s| &s.messages)
        .flat_map(|m| &m.parts)
        .filter(|p| !p.is_stream_only() && p.tool().is_some_and(|t| t.tool == name))
        .count()
}

/// A real captured session made long: the fixture's events, then `pairs`
/// user/assistant exchanges of plain text in the same session (ids sort
/// after the captured ones, times follow them). Message `k` of the added
/// ones says `filler message k`.
pub fn lengthened(name: &str, pairs: usize) -> Vec<u8> {
    use serde_json::{Value, json};
    let mut out = fixture(name, "event.jsonl");
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let mut session = String::new();
    let (mut t, mut clock) = (0i64, 0i64);
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        t = t.max(v["t"].as_i64().unwrap_or(0));
        let e = &v["event"];
        if session.is_empty()
            && let Some(id) = e["properties"]["info"]["id"].as_str()
            && e["type"] == "session.created"
        {
            session = id.to_string();
        }
        if let Some(c) = e["properties"]["info"]["time"]["created"].as_i64() {
            clock = clock.max(c);
        }
    }
    assert!(!session.is_empty(), "{name}: no session.created");
    let mut push = |t: i64, kind: &str, props: Value, n: &mut usize| {
        *n += 1;
        let line = json!({"t": t, "event": {"id": format!("evt_zz{n:08}"), "type": kind, "properties": props}});
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    };
    let mut n = 0;
    for k in 0..pairs * 2 {
        t += 5;
        clock += 1000;
        let mid = format!("msg_zz{k:08}");
        let user = k % 2 == 0;
        let mut info = json!({"id": mid, "sessionID": session, "time": {"created": clock}});
        if user {
            info["role"] = json!("user");
            info["agent"] = json!("build");
            info["model"] = json!({"providerID": "mock", "modelID": "mock-1"});
        } else {
            info["role"] = json!("assistant");
            info["parentID"] = json!(format!("msg_zz{:08}", k - 1));
            info["modelID"] = json!("mock-1");
            info["providerID"] = json!("mock");
            info["mode"] = json!("build");
            info["agent"] = json!("build");
            info["cost"] = json!(0);
            info["tokens"] =
                json!({"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}});
            info["time"]["completed"] = json!(clock + 500);
        }
        push(
            t,
            "message.updated",
            json!({"sessionID": session, "info": info}),
            &mut n,
        );
        let part = json!({"type": "text", "text": format!("filler message {k}"), "messageID": mid, "sessionID": session, "id": format!("prt_zz{k:08}")});
        push(
            t,
            "message.part.updated",
            json!({"sessionID": session, "part": part, "time": clock}),
            &mut n,
        );
    }
    out
}

/// A runtime whose one worker runs what the app spawns (a router's task)
/// while the test drives the app on its own thread.
pub fn background_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Hand `app` what its threads answered (`done`, from `take_done`) until
/// `until` holds; ten seconds at most.
#[allow(dead_code)]
pub fn settle(
    app: &mut ocview::app::App,
    done: &mut tokio::sync::mpsc::UnboundedReceiver<ocview::app::msg::AppMsg>,
    until: &dyn Fn(&ocview::app::App) -> bool,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !until(app) {
        while let Ok(d) = done.try_recv() {
            app.on_done(d);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the app's threads said nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
