//! The end-to-end harness: the real opencode server and a scripted model.
#![allow(dead_code)]

pub mod archived;
pub mod big_events;
pub mod cut_proxy;
pub mod discover_json;
pub mod fake_model;
pub mod fleet_server;
pub mod fresh_archive;
pub mod header_server;
pub mod history_db;
pub mod history_server;
pub mod insights;
pub mod live_viewer;
pub mod long_session;
pub mod opencode;
pub mod osc52;
pub mod peak;
pub mod postgres;
pub mod proc_status;
pub mod pty;
pub mod scenarios;
pub mod secrets;
pub mod stalling_server;
pub mod stand_in;
pub mod tmux;
pub mod two_sessions;
pub mod usage_db;
pub mod words;

/// The output of `command` (the binary, usually) run to its end, once
/// it is seen to have succeeded: a failure names the command and shows
/// what it said.
pub fn succeeded(command: &mut std::process::Command) -> std::process::Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The names in `dir`, sorted: what a test finds made beside a file.
pub fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
