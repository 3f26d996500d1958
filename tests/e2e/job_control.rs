//! Job control and limits (issue 22, point 5), with the real binary: Ctrl-Z
//! in tmux gives the shell its terminal back in cooked mode and `fg` brings
//! the viewer back drawn whole and answering keys; so does a SIGTSTP sent
//! from outside, and a SIGCONT after a SIGSTOP ocview never saw coming.
//! Ctrl-Z in the pager stops the pager and the viewer together. A write
//! past `ulimit -f` is an error with a message, not death by SIGXFSZ.

use crate::common;
use crate::support;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::tmux::{PROMPT, Tmux};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ocview")
}

/// ocview in tmux on a finished replay, its first screen drawn.
fn viewer(tag: &str) -> Tmux {
    let t = Tmux::start(tag);
    let fixture = common::fixtures_dir().join("e_task_subagent/event.jsonl");
    t.line(&format!("{} replay {} --instant", bin(), fixture.display()));
    t.wait_for("the viewer", |s| {
        s.contains("Sessions 2") && s.contains("Delegate util inspection")
    });
    t
}

/// The job is stopped: bash said so, its prompt is back on the main
/// screen, and the terminal is in cooked mode with the cursor shown.
fn assert_stopped_and_restored(t: &Tmux) {
    let screen = t.wait_for("the job stopped", |s| s.contains("Stopped"));
    assert!(
        !screen.contains("Delegate util inspection"),
        "the main screen, not the viewer's:\n{screen}"
    );
    t.assert_terminal_restored();
    assert_eq!(t.tmux(&["display", "-p", "#{alternate_on}"]).trim(), "0");
    assert_eq!(t.tmux(&["display", "-p", "#{cursor_flag}"]).trim(), "1");
}

/// After `fg`: the viewer whole again (nothing of the shell's left on it),
/// in raw mode (one key, no Enter, opens the help), and it quits cleanly.
fn assert_back_and_quits(t: &Tmux) {
    let screen = t.wait_for("the viewer again", |s| {
        s.contains("Sessions 2") && s.contains("Delegate util inspection")
    });
    assert!(
        !screen.contains(PROMPT) && !screen.contains("visible-42"),
        "drawn whole, over what the shell wrote:\n{screen}"
    );
    assert_eq!(t.tmux(&["display", "-p", "#{alternate_on}"]).trim(), "1");
    t.keys(&["?"]);
    let help = t.wait_for("the help overlay", |s| s.contains("Keys ("));
    assert!(
        help.contains("ctrl-z") && help.contains("suspend to the shell"),
        "help names the key:\n{help}"
    );
    t.keys(&["Escape"]);
    t.wait_for("help closed", |s| !s.contains("Keys ("));
    t.keys(&["q"]);
    // `fg` says how the job ended.
    t.wait_for("the shell prompt", |s| s.trim_end().ends_with(PROMPT));
    t.line("echo exit=$?");
    t.wait_for("the exit code", |s| s.contains("exit=0"));
    t.assert_terminal_restored();
}

#[test]
fn ctrl_z_gives_the_shell_its_terminal_and_fg_redraws() {
    let t = viewer("ctrlz");
    // Over an overlay that takes every key, too.
    t.keys(&["?"]);
    t.wait_for("the help overlay", |s| s.contains("Keys ("));
    t.keys(&["C-z"]);
    assert_stopped_and_restored(&t);
    t.line("fg");
    // The help was open when it stopped, and still is.
    t.wait_for("the help again", |s| s.contains("Keys ("));
    t.keys(&["Escape"]);
    assert_back_and_quits(&t);
}

#[test]
fn a_sigtstp_from_outside_suspends_the_same_way() {
    let t = viewer("tstp");
    let pid = t.ocview_pid();
    let killed = Command::new("kill")
        .args(["-TSTP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_stopped_and_restored(&t);
    t.line("fg");
    assert_back_and_quits(&t);
}

/// SIGSTOP cannot be caught: the terminal stays raw on the alternate screen
/// while bash writes its prompt there (and may set cooked mode). The
/// SIGCONT of `fg` takes the terminal again and draws it whole.
#[test]
fn a_sigcont_after_a_sigstop_takes_the_terminal_again() {
    let t = viewer("stopcont");
    let pid = t.ocview_pid();
    let stopped = Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    t.wait_for("the job stopped", |s| s.contains("Stopped"));
    // Whatever the shell shows meanwhile, it must be gone after fg.
    t.line("echo visible-$((6*7))");
    t.wait_for("shell output", |s| s.contains("visible-42"));
    t.line("fg");
    assert_back_and_quits(&t);
}

/// Ctrl-Z while the pager has the terminal reaches the whole job, as
/// SIGTSTP: the pager stops, and so does the viewer waiting for it (the
/// shell gets its prompt only when every process of the job has stopped).
/// `fg` continues both: the pager reads the next line, then the viewer
/// comes back.
#[test]
fn ctrl_z_in_the_pager_stops_the_whole_job() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let typed = dir.path().join("typed.txt");
    let pager = dir.path().join("pager.sh");
    std::fs::write(
        &pager,
        format!(
            "cat > /dev/null\necho x > '{}'\nIFS= read -r line < /dev/tty\nprintf '%s' \"$line\" > '{}'\n",
            started.display(),
            typed.display()
        ),
    )
    .unwrap();
    let t = Tmux::start("pagerz");
    let fixture = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    t.line(&format!(
        "PAGER='sh {}' {} replay {} --instant",
        pager.display(),
        bin(),
        fixture.display()
    ));
    t.wait_for("the session", |s| {
        s.contains("Sessions") && s.contains("ls -la")
    });
    t.keys(&["Tab", "J", "o"]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the pager did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    t.keys(&["C-z"]);
    t.wait_for("the job stopped", |s| {
        s.contains("Stopped") && s.trim_end().ends_with(PROMPT)
    });
    t.line("fg");
    t.line("typed after fg");
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::fs::read_to_string(&typed).unwrap_or_default() != "typed after fg" {
        assert!(Instant::now() < deadline, "the pager did not continue");
        std::thread::sleep(Duration::from_millis(20));
    }
    t.wait_for("the viewer back", |s| {
        s.contains("pager closed") && s.contains("Sessions")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// Run `cmd` with files limited to `bytes` (`ulimit -f`); its exit status
/// and standard error, within 30 s.
fn under_file_limit(mut cmd: Command, bytes: u64) -> (std::process::ExitStatus, String) {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

#[test]
fn a_transcript_past_ulimit_f_is_a_write_error_not_sigxfsz() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dump.txt");
    let mut cmd = Command::new(bin());
    cmd.args(["demo", "--dump"])
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap());
    let (status, stderr) = under_file_limit(cmd, 4096);
    assert_eq!(status.signal(), None, "killed by a signal: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output: File too large"),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 4096);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_past_ulimit_f_stops_with_a_message() {
    let server = support::history_server::HistoryServer::start(400).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    let mut cmd = Command::new(bin());
    cmd.args(["record", &server.url])
        .arg(&file)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let (status, stderr) = tokio::task::spawn_blocking(move || under_file_limit(cmd, 8192))
        .await
        .unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("recording stopped: cannot write") && stderr.contains("File too large"),
        "{stderr}"
    );
    assert!(std::fs::metadata(&file).unwrap().len() <= 8192);
}
