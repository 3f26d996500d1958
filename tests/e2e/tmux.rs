//! The real binary in a real terminal (tmux): keys a person would press,
//! what the screen shows after each, and a terminal back in cooked mode
//! after quitting, after SIGTERM and after a panic in a background task.

use crate::common;
use crate::support;

use support::tmux::Tmux;

use std::path::PathBuf;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

fn demo_file() -> String {
    format!("{}/assets/demo.jsonl", env!("CARGO_MANIFEST_DIR"))
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

    // The turns take the focus: `g` then scrolls them (in the list it
    // would select the first session).
    t.keys(&["k", "Tab"]);
    t.wait_for("the turns following", |s| s.contains("following"));
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

/// Each terminating signal restores the terminal and exits with 128 + its
/// number, as shells expect.
#[test]
fn signals_restore_the_terminal_and_exit_128_plus_the_signal() {
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("QUIT", 131), ("INT", 130)] {
        let t = Tmux::start(&format!("sig{signal}"));
        t.line(&format!("{} demo; echo exit=$?", bin()));
        t.wait_for("the demo", |s| s.contains("Sessions"));
        let pid = t.ocview_pid();
        assert!(
            Command::new("kill")
                .args([&format!("-{signal}"), &pid.to_string()])
                .status()
                .unwrap()
                .success()
        );
        let screen = t.wait_for("the exit code", |s| {
            s.lines().any(|l| l.trim_start().starts_with("exit="))
        });
        assert!(
            screen.contains(&format!("exit={code}")),
            "SIG{signal}:\n{screen}"
        );
        t.assert_terminal_restored();
    }
}

/// The terminal goes away without a SIGHUP reaching ocview (it is not the
/// terminal's session, as under some multiplexers and IDEs): it exits
/// within 2 s with 1 instead of spinning on a dead descriptor.
#[test]
fn a_terminal_gone_without_sighup_ends_the_program() {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let (master, slave) = support::pty::open(30, 100);
    let mut cmd = Command::new(bin());
    cmd.args([
        "replay",
        &fixture_path("c_todowrite").display().to_string(),
        "--instant",
    ])
    .env("TERM", "xterm-256color")
    .stdin(slave.try_clone().unwrap())
    .stdout(slave.try_clone().unwrap())
    .stderr(slave);
    // A session of its own: the pty is not its controlling terminal, so
    // closing the pty sends it no SIGHUP.
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    // Read until the first frame has been drawn, then let it go idle.
    let mut reader = std::fs::File::from(master);
    let mut seen = Vec::new();
    let mut buf = [0u8; 65536];
    while !String::from_utf8_lossy(&seen).contains("Sessions") {
        let n = reader.read(&mut buf).unwrap();
        assert!(n > 0, "the viewer drew nothing");
        seen.extend_from_slice(&buf[..n]);
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(reader);
    let closed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            panic!("still running 2 s after its terminal went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(1), "{status:?}");
}

/// An idle viewer, every periodic wake-up of its loop stretched to a
/// minute: a key typed into it is drawn all the same. The key itself wakes
/// the loop, not a timer that happens to come (crossterm's input stream
/// keeps the waker of the poll that first found nothing, so a poll with a
/// no-op waker after a frame once left keys waiting for the next timer).
#[test]
fn an_idle_viewer_draws_each_key_with_no_timer_to_wake_it() {
    use std::io::{Read, Write};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let home = tempfile::tempdir().unwrap();
    let (master, slave) = support::pty::open(30, 100);
    let mut cmd = Command::new(bin());
    cmd.args([
        "replay",
        &fixture_path("e_task_subagent").display().to_string(),
        "--instant",
    ])
    .env("TERM", "xterm-256color")
    .env("XDG_CONFIG_HOME", home.path())
    .env("XDG_STATE_HOME", home.path())
    .env("OCVIEW_TEST_TIMER_FLOOR_MS", "60000")
    .stderr(std::process::Stdio::null());
    support::pty::attach(&mut cmd, &slave);
    let mut child = cmd.spawn().unwrap();
    drop(slave);
    let mut writer = std::fs::File::from(master.try_clone().unwrap());
    let mut reader = std::fs::File::from(master);
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Everything written until `done` says so, or nothing more for `quiet`.
    let read_until = |what: &str, quiet: Option<Duration>, done: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        let mut seen = Vec::new();
        loop {
            let wait = quiet.unwrap_or(Duration::from_millis(200));
            match rx.recv_timeout(wait) {
                Ok(bytes) => seen.extend_from_slice(&bytes),
                Err(mpsc::RecvTimeoutError::Timeout) if quiet.is_some() => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the viewer ended"),
            }
            if done(&String::from_utf8_lossy(&seen)) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{what}: nothing drawn in 20 s"
            );
        }
        String::from_utf8_lossy(&seen).into_owned()
    };
    read_until("the first frame", None, &|s| s.contains("Sessions"));
    // Idle: a second with nothing written.
    read_until("quiet", Some(Duration::from_secs(1)), &|_| false);
    // Help, its closing, a move: each key's frame comes (a frame ends)
    // while nothing else could have asked for one.
    for (key, shows) in [("?", "Keys ("), ("\x1b", ""), ("j", "")] {
        writer.write_all(key.as_bytes()).unwrap();
        let frame = read_until(&format!("the frame of {key:?}"), None, &|s| {
            s.contains(shows) && s.contains("\x1b[?2026l")
        });
        assert!(frame.contains(shows), "{frame}");
        read_until("quiet", Some(Duration::from_millis(500)), &|_| false);
    }
    let _ = child.kill();
    let _ = child.wait();
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

/// The player's record position in the status line ("#12/1026").
fn position(screen: &str) -> usize {
    let line = status(screen);
    line.split('#')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The status line of a screen (its last line).
fn status(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

#[test]
fn player_keys_pause_step_seek_and_change_speed() {
    let t = Tmux::start_sized("player", 140, 30);
    // The demo's recording as a file: the recorded pace (the demo itself
    // plays at a reading pace).
    t.line(&format!("{} replay {} --speed 0.25", bin(), demo_file()));
    t.wait_for("the demo playing", |s| status(s).contains("▶ 0.25×"));

    t.keys(&["P"]);
    t.wait_for("paused", |s| status(s).contains("❚❚ 0.25×"));
    t.keys(&["0"]);
    t.wait_for("back at the start", |s| {
        status(s).contains("0:00/0:31") && status(s).contains("#0/1026")
    });
    t.keys(&[".", ".", "."]);
    t.wait_for("three events on", |s| status(s).contains("#3/1026"));
    t.keys(&[","]);
    t.wait_for("one event back", |s| status(s).contains("#2/1026"));

    // One turn forward shows the first prompt; one back hides it again.
    t.keys(&[")"]);
    let turn = t.wait_for("a turn on", |s| position(s) > 2);
    let after_turn = position(&turn);
    assert!(turn.contains("Sessions 1"), "{turn}");
    t.keys(&["("]);
    let back = t.wait_for("back before the turn", |s| position(s) < after_turn);
    assert!(position(&back) >= 2, "{back}");

    t.keys(&[":", "5", "0", "%"]);
    t.wait_for("the seek prompt", |s| status(s).contains("seek to: 50%"));
    t.keys(&["Enter"]);
    let half = t.wait_for("seeked to the middle", |s| status(s).contains("0:15/0:31"));
    // The bar shows the head, past marks where prompts were asked.
    let bar = status(&half);
    assert!(bar.contains('●') && bar.contains('◆'), "{bar}");

    t.keys(&["+", "+", "+"]);
    t.wait_for("faster", |s| status(s).contains("❚❚ 2×"));
    t.keys(&["$"]);
    t.wait_for("at the end", |s| {
        status(s).contains("■ 2× 0:31/0:31") && status(s).contains("#1026/1026")
    });
    t.keys(&["P"]);
    t.wait_for("playing again from the start", |s| {
        status(s).contains("▶ 2× 0:0")
    });

    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// `opencode run --format json … | ocview replay -` in a terminal: the
/// viewer shows each line's part as the line arrives, and the end of the
/// stream when the pipe closes.
#[test]
fn a_piped_run_renders_as_its_lines_arrive() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let run = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-run.ndjson"),
    )
    .unwrap();
    let lines: Vec<&str> = run.lines().collect();

    let t = Tmux::start("pipe");
    t.line(&format!("cat {} | {} replay -", fifo.display(), bin()));
    // Opening blocks until `cat` has the other end.
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    for line in &lines[..3] {
        writeln!(pipe, "{line}").unwrap();
    }
    pipe.flush().unwrap();
    let first = t.wait_for("the first step's text", |s| s.contains("Listing."));
    assert!(
        !first.contains("src/util.py"),
        "the tool was not sent yet:\n{first}"
    );
    assert!(!first.contains("ended"), "the pipe is still open:\n{first}");

    for line in &lines[3..] {
        writeln!(pipe, "{line}").unwrap();
    }
    drop(pipe);
    let end = t.wait_for("the whole run, ended", |s| {
        s.contains("It defines add(a, b).") && s.contains("ended")
    });
    assert!(end.contains("read") && end.contains("src/util.py"), "{end}");

    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// `--start end` opens a recording paused at its end, the whole session
/// shown, to browse it; `0` then goes back to the start.
#[test]
fn start_end_opens_the_finished_session_paused() {
    let t = Tmux::start_sized("start-end", 140, 30);
    t.line(&format!("{} replay {} --start end", bin(), demo_file()));
    let screen = t.wait_for("the end of the demo", |s| {
        status(s).contains("■ 1× 0:31/0:31") && status(s).contains("#1026/1026")
    });
    assert!(screen.contains("Sessions"), "{screen}");
    t.keys(&["0"]);
    t.wait_for("the start, paused", |s| {
        status(s).contains("❚❚ 1× 0:00/0:31") && status(s).contains("#0/1026")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
