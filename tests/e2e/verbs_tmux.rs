//! Copy and open in a real terminal (tmux), on a captured session: what
//! `y` writes to the terminal, what `o` and `e` hand to the pager and the
//! editor, and the viewer (and the terminal) back after them.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use support::osc52::osc52_payloads;
use support::tmux::Tmux;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

fn fixture(name: &str) -> PathBuf {
    common::fixtures_dir().join(name).join("event.jsonl")
}

/// The bash card of `a_bash_permission_once` as the server stored it:
/// command, whole output, exit code.
fn bash_card_text() -> String {
    let msgs: Value =
        serde_json::from_slice(&common::fixture("a_bash_permission_once", "messages.json"))
            .unwrap();
    let part = msgs
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["tool"] == "bash")
        .unwrap();
    let state = &part["state"];
    format!(
        "$ {}\n{}exit {}\n",
        state["input"]["command"].as_str().unwrap(),
        state["output"].as_str().unwrap(),
        state["metadata"]["exit"]
    )
}

/// The viewer replaying `a_bash_permission_once`, the bash card selected.
fn viewer_on_the_bash_card(t: &Tmux, env: &str) {
    t.line(&format!(
        "{env} {} replay {} --instant",
        bin(),
        fixture("a_bash_permission_once").display()
    ));
    t.wait_for("the session", |s| {
        s.contains("Sessions") && s.contains("ls -la")
    });
    t.keys(&["Tab", "J"]);
    // A selected card has `›` in the turn view's first column.
    t.wait_for("the bash card selected", |s| {
        s.lines().any(|l| l.contains("│ › ") && l.contains("bash"))
    });
}

fn wait_file(path: &Path, what: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {what} at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `y` with OSC 52 forced: the bytes ocview writes hold one OSC 52 whose
/// payload is the card's whole text; the status line says what and how
/// big. In tmux without the override, the copy goes to tmux's buffer.
#[test]
fn y_copies_the_card_by_osc52_or_into_tmuxs_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("pane.raw");
    let t = Tmux::start("copy");
    t.pipe_output_to(&raw);
    // tmux takes an OSC 52 from a pane only with `set-clipboard on`.
    t.tmux(&["set", "-g", "set-clipboard", "on"]);
    viewer_on_the_bash_card(&t, "OCVIEW_CLIPBOARD=osc52");
    t.keys(&["y"]);
    let screen = t.wait_for("the copy said", |s| s.contains("copied bash output"));
    assert!(screen.contains("(9 lines, 309 B) by OSC 52"), "{screen}");
    std::thread::sleep(Duration::from_millis(300));
    let bytes = std::fs::read(&raw).unwrap();
    assert_eq!(osc52_payloads(&bytes), [bash_card_text()]);
    assert_eq!(t.tmux(&["show-buffer"]), bash_card_text());
    t.keys(&["q"]);
    t.assert_terminal_restored();

    // Auto, inside tmux with its default `set-clipboard external` (which
    // drops a pane's OSC 52): `tmux load-buffer -w`.
    t.tmux(&["set", "-g", "set-clipboard", "external"]);
    t.tmux(&["delete-buffer"]);
    assert_eq!(t.tmux(&["show-buffer"]), "");
    viewer_on_the_bash_card(&t, "");
    t.keys(&["y"]);
    t.wait_for("the copy said", |s| {
        s.contains("copied bash output") && s.contains("to the clipboard (tmux)")
    });
    assert_eq!(t.tmux(&["show-buffer"]), bash_card_text());
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// `o` hands the card's whole output to `$PAGER` on its standard input,
/// and the pager has the keyboard: what is typed while it runs reaches
/// it, not the viewer. `e` gives `$EDITOR` a file that is gone after.
#[test]
fn o_and_e_hand_the_card_to_the_pager_and_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let paged = dir.path().join("paged.txt");
    let typed = dir.path().join("typed.txt");
    let pager = dir.path().join("pager.sh");
    std::fs::write(
        &pager,
        format!(
            "cat > '{}'\nIFS= read -r line < /dev/tty\nprintf '%s' \"$line\" > '{}'\n",
            paged.display(),
            typed.display()
        ),
    )
    .unwrap();
    let edited = dir.path().join("edited.txt");
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "cp \"$1\" '{}'\nprintf '%s' \"$1\" > '{}.path'\n",
            edited.display(),
            edited.display()
        ),
    )
    .unwrap();
    let t = Tmux::start("open");
    viewer_on_the_bash_card(
        &t,
        &format!(
            "PAGER='sh {}' EDITOR='sh {}'",
            pager.display(),
            editor.display()
        ),
    );
    t.keys(&["o"]);
    assert_eq!(wait_file(&paged, "paged text"), bash_card_text());
    // The pager reads the terminal: `q` and `j` would be the viewer's keys.
    t.line("qj typed to the pager");
    assert_eq!(wait_file(&typed, "typed line"), "qj typed to the pager");
    let screen = t.wait_for("the viewer back", |s| {
        s.contains("pager closed: bash output (9 lines, 309 B)")
    });
    assert!(screen.contains("Sessions"), "{screen}");

    t.keys(&["e"]);
    assert_eq!(wait_file(&edited, "edited file"), bash_card_text());
    t.wait_for("the viewer back", |s| {
        s.contains("editor closed: bash output")
    });
    let path = std::fs::read_to_string(format!("{}.path", edited.display())).unwrap();
    assert!(
        !Path::new(&path).exists(),
        "the temporary file is removed: {path}"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// A pager that cannot run says so in the status line; the viewer goes on.
#[test]
fn a_missing_pager_is_a_message_not_a_broken_terminal() {
    let t = Tmux::start("nopager");
    viewer_on_the_bash_card(&t, "PAGER=/nonexistent/pager");
    t.keys(&["o"]);
    t.wait_for("the message", |s| {
        s.contains("pager not found: /nonexistent/pager")
    });
    t.keys(&["j"]);
    t.wait_for("the viewer taking keys", |s| !s.contains("pager not found"));
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// Ctrl-C while the pager runs is the pager's key: it reaches the whole
/// foreground process group, the viewer included, and the viewer stays,
/// says how the pager ended, and quits normally later.
#[test]
fn ctrl_c_in_the_pager_does_not_end_the_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let pager = dir.path().join("pager.sh");
    std::fs::write(
        &pager,
        format!(
            "cat > /dev/null\necho x > '{}'\nsleep 30\n",
            started.display()
        ),
    )
    .unwrap();
    let t = Tmux::start("ctrlc");
    t.line(&format!(
        "PAGER='sh {}' {} replay {} --instant; echo exit=$?",
        pager.display(),
        bin(),
        fixture("a_bash_permission_once").display()
    ));
    t.wait_for("the session", |s| {
        s.contains("Sessions") && s.contains("ls -la")
    });
    t.keys(&["Tab", "J", "o"]);
    wait_file(&started, "the pager");
    t.keys(&["C-c"]);
    // The viewer's screen may still show while the pager starts: wait
    // for what it says once it is back, not only for its list.
    let screen = t.wait_for("the viewer back", |s| {
        s.contains("Sessions") && s.contains("failed: signal")
    });
    assert!(screen.contains("failed: signal: 2 (SIGINT)"), "{screen}");
    t.keys(&["q"]);
    let screen = t.wait_for("the exit code", |s| s.contains("exit="));
    assert!(screen.contains("exit=0"), "{screen}");
    t.assert_terminal_restored();
}

/// The captured session with the bash call's output grown to 60 lines: the
/// card shows a head and a tail, the pager gets every line.
#[test]
fn o_gives_the_pager_the_lines_the_card_trims() {
    let dir = tempfile::tempdir().unwrap();
    let events =
        String::from_utf8(common::fixture("a_bash_permission_once", "event.jsonl")).unwrap();
    let last = events
        .lines()
        .rfind(|l| l.contains("message.part.updated") && l.contains("\"tool\": \"bash\""))
        .unwrap();
    let mut ev: Value = serde_json::from_str(last).unwrap();
    let output: String = (1..=60)
        .map(|i| format!("row {i:02} of the output\n"))
        .collect();
    ev["event"]["id"] = serde_json::json!("evt_2028ffffffffffffffffffffff");
    ev["event"]["properties"]["part"]["state"]["output"] = serde_json::json!(output);
    let recording = dir.path().join("long.jsonl");
    std::fs::write(&recording, format!("{events}{ev}\n")).unwrap();
    let paged = dir.path().join("paged.txt");
    let t = Tmux::start("trim");
    t.line(&format!(
        "PAGER='cat > {}' {} replay {} --instant",
        paged.display(),
        bin(),
        recording.display()
    ));
    t.wait_for("the session", |s| {
        s.contains("Sessions") && s.contains("ls -la")
    });
    t.keys(&["Tab", "J"]);
    let card = t.wait_for("the trimmed card", |s| {
        s.contains("more lines (O shows all)")
    });
    assert!(!card.contains("row 30 of the output"), "{card}");
    t.keys(&["o"]);
    let text = wait_file(&paged, "paged text");
    assert_eq!(text, format!("$ ls -la\n{output}exit 0\n"));
    t.wait_for("the viewer back", |s| {
        s.contains("pager closed: bash output (62 lines")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
