//! The everyday verbs in a real terminal (tmux), on real captured sessions:
//! search, times, the prompt jump list, the session list hidden and
//! folded, and the demo following attention.

use crate::common;
use crate::support;

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

#[test]
fn the_list_folds_at_90_columns_and_its_key_shows_and_hides_it() {
    let t = Tmux::start_sized("listfold", 90, 30);
    t.line(&format!(
        "{} replay {} --instant",
        bin(),
        common::fixtures_dir()
            .join("e_task_subagent/event.jsonl")
            .display()
    ));
    let bar = t.wait_for("the one-line bar", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains("Sessions 1/2 ▸ Delegate util inspection"))
    });
    // The turns take the whole width: no list column beside them.
    assert!(
        bar.lines().nth(3).is_some_and(|l| l.starts_with(" ▌ You")),
        "{bar}"
    );
    t.keys(&["s"]);
    let shown = t.wait_for("the list shown", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.starts_with("Sessions 2"))
    });
    assert!(shown.contains("s hides it"), "{shown}");
    assert!(
        shown.lines().nth(1).is_some_and(|l| l.contains('│')),
        "{shown}"
    );
    t.keys(&["s"]);
    t.wait_for("hidden again", |s| {
        s.lines().next().is_some_and(|l| l.contains("▸")) && s.contains("s shows it")
    });
    // In the bar, j moves to the next session.
    t.keys(&["j"]);
    t.wait_for("the bar follows the selection", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains("Sessions 2/2 ▸ Inspect util module"))
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn following_the_demo_shows_cards_todos_and_prompts_with_no_key_pressed() {
    let t = Tmux::start_sized("demofollow", 120, 40);
    t.line(&format!("{} demo --follow --speed 4", bin()));
    let mut saw_todos = false;
    let mut saw_tool = false;
    let mut saw_prompt = false;
    t.wait_for_secs("todos, a tool card and a prompt", 40, |s| {
        saw_todos |= s.contains("todowrite") && s.contains("[x]");
        saw_tool |= s.contains("✓ ▾ bash") || s.contains("▾ edit") || s.contains("▾ write");
        saw_prompt |= s.contains("permission · ") || s.contains("question · ");
        saw_todos && saw_tool && saw_prompt
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn times_toggle_and_the_prompt_jump_list_jumps() {
    let t = Tmux::start_sized("times", 120, 40);
    t.line(&format!("{} demo --start end --no-follow", bin()));
    t.wait_for("the demo at its end", |s| s.contains("Refactoring plan"));
    let clock = |s: &str| {
        s.lines().any(|l| {
            l.contains("▌ You")
                && l.split_whitespace()
                    .any(|w| w.len() == 8 && w.as_bytes()[2] == b':' && w.as_bytes()[5] == b':')
        })
    };
    assert!(!clock(&t.capture()));
    t.keys(&["w"]);
    t.wait_for("wall-clock times", clock);
    t.keys(&["w"]);
    t.wait_for("no times", |s| !clock(s));
    t.keys(&["i"]);
    t.wait_for("the jump list", |s| s.contains("Prompts 1/2"));
    t.keys(&["j"]);
    t.wait_for("the second prompt chosen", |s| s.contains("Prompts 2/2"));
    t.keys(&["k"]);
    t.wait_for("the first prompt chosen", |s| s.contains("Prompts 1/2"));
    t.keys(&["Enter"]);
    let top = t.wait_for("the first prompt at the top", |s| {
        !s.contains("Prompts 1/2")
    });
    let first_turn_line = top.lines().nth(2).unwrap_or("");
    assert!(first_turn_line.contains("▌ You"), "{top}");
    assert!(
        top.lines()
            .nth(3)
            .unwrap_or("")
            .contains("Explain how you would refactor"),
        "{top}"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
