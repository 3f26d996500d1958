//! Inputs shared by the benchmarks: the captured fixture streams, made long.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ocview::app::App;
use ocview::render::highlight::Highlighter;
use ocview::source::decode::apply::decode_record;
use ocview::source::msg::SourceMsg;

pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("OCVIEW_FIXTURES") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-1.18.33")
}

/// Every fixture's event.jsonl, in folder order.
pub fn fixture_streams() -> Vec<String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures in tests/fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("event.jsonl").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| std::fs::read_to_string(d.join("event.jsonl")).unwrap())
        .collect()
}

/// Session ids (`ses_` + 26 characters) in a stream, in first-seen order.
fn session_ids(stream: &str) -> Vec<&str> {
    let mut ids = Vec::new();
    let mut rest = stream;
    while let Some(at) = rest.find("\"ses_") {
        let id = rest.get(at + 1..at + 31).unwrap_or("");
        if id.len() == 30 && !ids.contains(&id) {
            ids.push(id);
        }
        rest = &rest[at + 5..];
    }
    ids
}

/// The fixture streams repeated until `target_bytes`, each copy under fresh
/// session ids so every copy is new state, not a duplicate the reducer skips.
pub fn long_recording(target_bytes: usize) -> String {
    let streams = fixture_streams();
    let mut out = String::with_capacity(target_bytes + (1 << 20));
    let mut copy = 0u32;
    while out.len() < target_bytes {
        for stream in &streams {
            let mut s = stream.clone();
            for id in session_ids(stream) {
                let fresh = format!("{}{:06x}", &id[..24], copy);
                s = s.replace(id, &fresh);
            }
            out.push_str(&s);
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        copy += 1;
    }
    out
}

pub fn feed(app: &mut App, line: &str) {
    app.on_source(SourceMsg::Record(Box::new(decode_record(
        line.as_bytes(),
        1,
        true,
    ))));
}

pub fn msg_id(i: usize) -> String {
    format!(
        "msg_{:012x}aaaaaaaaaaaaaa",
        0x2028f0000000u64 + i as u64 * 16
    )
}

/// An app holding one session of `n` messages: user prompts, and assistant answers with
/// markdown, a code block and a bash card.
pub fn session(n: usize) -> App {
    let mut app = App::new(ocview::app::config::Config::default(), "bench", true).unwrap();
    app.highlighter = Highlighter::blocking(&app.theme.syntax);
    feed(
        &mut app,
        r#"{"type":"session.created","properties":{"info":{"id":"ses_b","title":"bench","directory":"/p","time":{"created":1,"updated":2}}}}"#,
    );
    for i in 0..n {
        let id = msg_id(i);
        let user = i % 2 == 0;
        let parent = if user {
            String::new()
        } else {
            format!(r#","parentID":"{}""#, msg_id(i - 1))
        };
        let role = if user { "user" } else { "assistant" };
        feed(
            &mut app,
            &format!(
                r#"{{"type":"message.updated","properties":{{"info":{{"id":"{id}","sessionID":"ses_b","role":"{role}"{parent},"time":{{"created":1,"completed":2}}}}}}}}"#
            ),
        );
        let text = if user {
            format!("Please look at item {i} and fix what is wrong with it.")
        } else {
            format!(
                "## Answer {i}\\n\\nHere is **what** I changed, with `code` and a list:\\n\\n- first point\\n- second point\\n\\n```rust\\nfn f{i}() -> u32 {{ {i} }}\\n```"
            )
        };
        feed(
            &mut app,
            &format!(
                r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{:012x}a","messageID":"{id}","sessionID":"ses_b","type":"text","text":"{text}"}}}}}}"#,
                i
            ),
        );
        if !user {
            feed(
                &mut app,
                &format!(
                    r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{:012x}b","messageID":"{id}","sessionID":"ses_b","type":"tool","tool":"bash","callID":"c{i}","state":{{"status":"completed","input":{{"command":"cargo test -p item{i}"}},"output":"ok\\nall good\\n","title":"","metadata":{{"exit":0}},"time":{{"start":1,"end":2}}}}}}}}}}"#,
                    i
                ),
            );
        }
    }
    app.focus = ocview::app::Focus::Turns;
    app
}

/// Lay out and draw one frame at the terminal's size.
pub fn frame(app: &mut App, terminal: &mut ratatui::Terminal<ratatui::backend::TestBackend>) {
    let size = terminal.size().expect("a test backend has a size");
    app.prepare(ratatui::layout::Rect::new(0, 0, size.width, size.height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
}

pub fn median(mut runs: Vec<std::time::Duration>) -> std::time::Duration {
    runs.sort();
    runs[runs.len() / 2]
}
