//! The real binary in a real terminal (tmux): keys a person would press,
//! what the screen shows after each, and a terminal back in cooked mode
//! after quitting, after SIGTERM and after a panic in a background task.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    name: String,
    _home: tempfile::TempDir,
}

const PROMPT: &str = "ocv-test$";

impl Tmux {
    /// A shell in a fresh tmux session, with isolated config and state dirs.
    fn start(tag: &str) -> Tmux {
        assert!(
            Command::new("tmux")
                .arg("-V")
                .output()
                .is_ok_and(|o| o.status.success()),
            "tmux is required for this test (.ci/run installs it)"
        );
        let home = tempfile::tempdir().unwrap();
        let name = format!("ocview-{tag}-{}", std::process::id());
        let status = Command::new("tmux")
            .args(["new-session", "-d", "-s", &name, "-x", "100", "-y", "30"])
            .args(["-e", &format!("PS1={PROMPT} ")])
            .args(["-e", &format!("XDG_CONFIG_HOME={}", home.path().display())])
            .args(["-e", &format!("XDG_STATE_HOME={}", home.path().display())])
            .args(["bash", "--norc", "--noprofile"])
            .status()
            .unwrap();
        assert!(status.success());
        let t = Tmux { name, _home: home };
        t.wait_for("shell prompt", |s| s.contains(PROMPT));
        t
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, k])
                .status()
                .unwrap();
            assert!(status.success());
            // An Escape followed at once by a letter reads as Alt+letter.
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    fn line(&self, text: &str) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.name, "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
        self.keys(&["Enter"]);
    }

    fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn ocview_pid(&self) -> u32 {
        let out = Command::new("tmux")
            .args(["display", "-p", "-t", &self.name, "#{pane_pid}"])
            .output()
            .unwrap();
        let shell: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let out = Command::new("pgrep")
            .args(["-P", &shell.to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .expect("ocview is running")
            .trim()
            .parse()
            .unwrap()
    }

    /// After ocview ends: the prompt is back and the tty is in cooked mode.
    fn assert_terminal_restored(&self) {
        self.wait_for("the shell prompt after ocview", |s| {
            s.trim_end().ends_with(PROMPT)
        });
        self.line("clear; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo|isig)$'");
        let screen = self.wait_for("stty output", |s| {
            s.contains("icanon") && s.contains("isig")
        });
        for flag in ["icanon", "echo", "isig"] {
            assert!(
                screen.lines().any(|l| l.trim() == flag),
                "{flag} is not set:\n{screen}"
            );
        }
        // The alternate screen was left and the cursor shows: the shell draws normally.
        self.line("echo visible-$((6*7))");
        self.wait_for("shell output", |s| s.contains("visible-42"));
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

fn fixture_path(name: &str) -> PathBuf {
    common::fixtures_dir().join(name).join("event.jsonl")
}

fn selected_row(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with('›'))
        .unwrap_or("")
        .to_string()
}

#[test]
fn keys_move_scroll_help_and_quit_restores_the_terminal() {
    let t = Tmux::start("keys");
    t.line(&format!(
        "{} replay {} --instant",
        bin(),
        fixture_path("e_task_subagent").display()
    ));
    let first = t.wait_for("the session list", |s| {
        s.contains("Sessions 2") && s.contains("Delegate util inspection")
    });
    assert!(
        selected_row(&first).contains("Delegate util inspection"),
        "{first}"
    );

    t.keys(&["j"]);
    let moved = t.wait_for("the selection to move", |s| {
        selected_row(s).contains("Inspect util module")
    });
    assert!(
        moved
            .lines()
            .next()
            .unwrap()
            .contains("Inspect util module"),
        "the turn view follows the selection:\n{moved}"
    );

    t.keys(&["k", "Tab"]);
    let focused = t.wait_for("turn view focus", |s| s.contains("} card"));
    assert!(focused.contains("following"));
    t.keys(&["g"]);
    t.wait_for("scrolled to the top", |s| {
        s.contains("scrolled") && s.contains("Use a subagent")
    });
    t.keys(&["G"]);
    t.wait_for("following again", |s| s.contains("following"));

    t.keys(&["?"]);
    t.wait_for("the help overlay", |s| {
        s.contains("Keys (") && s.contains("switch focus between")
    });
    t.keys(&["Escape"]);
    t.wait_for("help closed", |s| !s.contains("Keys ("));

    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn sigterm_restores_the_terminal() {
    let t = Tmux::start("term");
    t.line(&format!("{} demo", bin()));
    t.wait_for("the demo", |s| s.contains("Sessions"));
    let pid = t.ocview_pid();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    t.assert_terminal_restored();
}

#[test]
fn a_panic_in_a_background_task_ends_the_app_and_restores_the_terminal() {
    let t = Tmux::start("panic");
    t.line(&format!(
        "RUST_BACKTRACE=0 OCVIEW_TEST_PANIC_AFTER_MS=700 {} demo; echo exit=$?",
        bin()
    ));
    t.wait_for("the demo", |s| s.contains("Sessions"));
    // The echoed command line holds "exit=$?" too: wait for the digits.
    let ended = |s: &str| {
        s.lines().any(|l| {
            l.trim()
                .strip_prefix("exit=")
                .is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit()))
        })
    };
    let screen = t.wait_for("the app to end", ended);
    assert!(screen.contains("exit=101"), "{screen}");
    assert!(
        screen.contains("test panic requested"),
        "the panic message is shown after restoring:\n{screen}"
    );
    t.assert_terminal_restored();
}
