//! Verbs act on what is on screen, and counts say what exists (issue 24,
//! points 7 and 8), in a real terminal (tmux) with the real binary: a hit
//! only in a session's content opens that session at the hit; after `G`,
//! `y` copies a card on screen; `Y` on a live session of several pages
//! copies every message; the position says when older messages are not
//! loaded; the jump list shows prompts from pages not loaded yet.

use crate::common;
use crate::support;

use std::time::Duration;

use support::history_server::{FIRST_TEXT, HistoryServer};
use support::osc52::osc52_payloads;
use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

fn status_line(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

fn replay(t: &Tmux, env: &str, bytes: &[u8], dir: &tempfile::TempDir) {
    let path = dir.path().join("built.jsonl");
    std::fs::write(&path, bytes).unwrap();
    t.line(&format!(
        "{env} {} replay {} --instant",
        bin(),
        path.display()
    ));
}

fn type_text(t: &Tmux, text: &str) {
    for c in text.chars() {
        t.keys(&[&c.to_string()]);
    }
}

#[test]
fn a_hit_only_in_a_sessions_content_opens_that_session_at_the_hit() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start_sized("contenthit", 140, 24);
    replay(&t, "", &common::built::a_word_in_one_session(), &dir);
    t.wait_for("both sessions", |s| {
        s.contains("Beta plans") && s.contains("Alpha notes")
    });
    // The selection on the other session (Alpha, made after Beta, is
    // listed above it).
    t.keys(&["k"]);
    t.wait_for("Alpha selected", |s| {
        s.lines().any(|l| l.contains("› · Alpha notes"))
    });
    t.keys(&["/"]);
    type_text(&t, "zanzibar");
    t.wait_for("the hit counted", |s| {
        s.lines()
            .any(|l| l.contains("Beta plans") && l.contains("1 hit"))
    });
    t.keys(&["Enter"]);
    let s = t.wait_for("the hit on screen", |s| {
        s.contains("The ship sails to zanzibar at dawn.") && status_line(s).contains("1/1")
    });
    assert!(s.lines().next().unwrap().contains("Beta plans"), "{s}");
    assert!(status_line(&s).contains("/zanzibar"), "{s}");
    // At the hit, 30 exchanges up: not the end of the session.
    assert!(!s.contains("filler answer 29"), "{s}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn after_shift_g_y_copies_a_card_on_screen_not_the_one_scrolled_away() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("pane.raw");
    let t = Tmux::start_sized("copyonscreen", 100, 24);
    t.pipe_output_to(&raw);
    t.tmux(&["set", "-g", "set-clipboard", "on"]);
    replay(
        &t,
        "OCVIEW_CLIPBOARD=osc52",
        &common::built::cards_far_apart(),
        &dir,
    );
    t.wait_for("the session", |s| s.contains("NEW-CARD"));
    t.keys(&["Tab", "g"]);
    t.wait_for("the top", |s| s.contains("OLD-CARD"));
    t.keys(&["J"]);
    t.wait_for("the old card selected", |s| {
        s.lines()
            .any(|l| l.contains("› ✓") && l.contains("OLD-CARD"))
    });
    t.keys(&["G"]);
    t.wait_for("the end", |s| {
        s.contains("NEW-CARD") && !s.contains("OLD-CARD")
    });
    t.keys(&["y"]);
    t.wait_for("the copy said", |s| s.contains("copied bash output"));
    std::thread::sleep(Duration::from_millis(300));
    let copied = osc52_payloads(&std::fs::read(&raw).unwrap());
    assert_eq!(copied.len(), 1, "{copied:?}");
    assert!(
        copied[0].contains("NEW-CARD") && !copied[0].contains("OLD-CARD"),
        "{copied:?}"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// The viewer attached to a stand-in server holding one session of `n`
/// messages (100 a page), the session open.
fn attached(tag: &str, env: &str, url: &str) -> Tmux {
    let t = Tmux::start_sized(tag, 120, 30);
    t.line(&format!("{env} {} attach {url}", bin()));
    t.wait_for_secs("the newest page", 30, |s| {
        s.contains("live") && s.contains("Answer 249")
    });
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capital_y_on_a_live_session_of_three_pages_copies_every_message() {
    let server = HistoryServer::start(250).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        let t = attached("copyall", "", &url);
        t.tmux(&["delete-buffer"]);
        t.keys(&["Y"]);
        let s = t.wait_for_secs("the copy", 30, |s| {
            s.contains("copied session") || s.contains("copied") && s.contains("clipboard")
        });
        let copied = t.tmux(&["show-buffer"]);
        assert!(copied.contains(FIRST_TEXT), "{s}\n{copied}");
        let prompts = copied.matches("Question number ").count();
        assert_eq!(prompts, 124, "every prompt but the first: {s}");
        assert!(copied.contains("Answer 1.") && copied.contains("Answer 249."));
        t.keys(&["q"]);
        t.assert_terminal_restored();
    })
    .await
    .unwrap();
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_position_says_what_is_loaded_and_the_jump_list_every_prompt() {
    let server = HistoryServer::start(250).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        let t = attached("counts", "", &url);
        t.keys(&["Tab"]);
        // The newest page of three: not "/100" as if that were all.
        let s = t.wait_for("the position", |s| {
            s.contains(" of 100 loaded, more before")
        });
        assert!(!s.contains("/100 "), "{s}");

        // The jump list asks for the older pages: the first prompt joins.
        t.keys(&["i"]);
        let s = t.wait_for_secs("every prompt", 30, |s| {
            s.contains(FIRST_TEXT) || s.contains("Prompts ") && s.contains("/125 ")
        });
        assert!(s.contains("/125 "), "{s}");
        t.keys(&["g"]);
        let s = t.wait_for("the first prompt", |s| s.contains(FIRST_TEXT));
        assert!(s.contains("Prompts 1/125"), "{s}");
        // Filtered as typed: 12, 120, 122, 124, 126, 128.
        t.keys(&["/"]);
        type_text(&t, "number 12");
        let s = t.wait_for("the filter", |s| s.contains("/6 · /number 12"));
        assert!(!s.contains(FIRST_TEXT), "{s}");
        t.keys(&["Enter"]);
        // Everything is loaded now: the count is the session's.
        let s = t.wait_for("the prompt at the top", |s| {
            !s.contains("Prompts ") && s.contains("Question number 12:")
        });
        assert!(s.contains("msg 13/250"), "{s}");
        t.keys(&["q"]);
        t.assert_terminal_restored();
    })
    .await
    .unwrap();
    drop(server);
}
