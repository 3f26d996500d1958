//! Inputs shared by the benchmarks: the captured fixture streams, made long.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
