//! The everyday verbs in a real terminal (tmux), on real captured sessions:
//! search, times, the prompt jump list, the session list hidden and
//! folded, and the demo following attention.

mod common;
mod support;

use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

/// The captured bash session followed by 200 exchanges: its tool card is
/// 400 messages up.
fn long_bash_session(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, common::lengthened("a_bash_permission_once", 200)).unwrap();
    path
}

fn status_line(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

#[test]
fn search_finds_a_folded_tool_output_far_up_and_n_moves() {
    let dir = tempfile::tempdir().unwrap();
    let path = long_bash_session(&dir);
    let t = Tmux::start_sized("search", 120, 40);
    t.line(&format!("{} replay {} --instant", bin(), path.display()));
    t.wait_for("the end of the session", |s| {
        s.contains("filler message 399")
    });
    // Compact: every card folded to its header.
    t.keys(&["Tab", "d", "d"]);
    t.wait_for("the detail level said", |s| {
        status_line(s).contains("detail: compact")
    });
    t.keys(&["/"]);
    t.wait_for("the search line", |s| status_line(s).contains("search /"));
    // Only in the bash card's output: the size column of `ls -l`.
    for k in ["6", "5", "0", " ", "N", "o", "v"] {
        t.keys(&[k]);
    }
    let found = t.wait_for("the match in view", |s| {
        s.contains("650 Nov 22") && status_line(s).contains("1/1")
    });
    assert!(found.contains("opencode.json"), "{found}");
    assert!(!found.contains("filler message 399"), "{found}");
    t.keys(&["Enter"]);
    t.wait_for("the search kept", |s| {
        let st = status_line(s);
        st.contains("/650 Nov") && st.contains("1/1") && !st.contains("search /")
    });

    // A word with hits in many messages: n and N step through them.
    t.keys(&["/"]);
    for k in ["m", "e", "s", "s", "a", "g", "e", " ", "3", "9", "8"] {
        t.keys(&[k]);
    }
    t.wait_for("the first hit", |s| {
        s.contains("filler message 398") && status_line(s).contains("1/1")
    });
    t.keys(&["BSpace", "BSpace"]);
    let first = t.wait_for("hits of message 3", |s| status_line(s).contains("/111"));
    let at = |s: &str| {
        status_line(s)
            .split_whitespace()
            .find(|w| w.ends_with("/111"))
            .unwrap_or("")
            .to_string()
    };
    let start = at(&first);
    t.keys(&["Enter", "n"]);
    let moved = t.wait_for("n to move", |s| !at(s).is_empty() && at(s) != start);
    t.keys(&["N"]);
    t.wait_for("N to move back", |s| at(s) == start);
    assert_ne!(at(&moved), start);
    t.keys(&["Escape"]);
    t.wait_for("the search cleared", |s| !status_line(s).contains("/111"));
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
