//! A shell in a tmux session, for driving the real binary as a person would.

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    name: String,
    home: tempfile::TempDir,
}

pub const PROMPT: &str = "ocv-test$";

impl Tmux {
    /// A shell in a fresh tmux session, with isolated config and state dirs.
    pub fn start(tag: &str) -> Tmux {
        Tmux::start_sized(tag, 100, 30)
    }

    /// The same, on a terminal of `width` × `height`.
    pub fn start_sized(tag: &str, width: u16, height: u16) -> Tmux {
        assert!(
            Command::new("tmux")
                .arg("-V")
                .output()
                .is_ok_and(|o| o.status.success()),
            "tmux is required for this test (.ci/run installs it)"
        );
        let home = tempfile::tempdir().unwrap();
        let name = format!("ocview-{tag}-{}", std::process::id());
        let status = tmux_cmd(&name)
            .args(["new-session", "-d", "-s", &name])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .args(["-e", &format!("PS1={PROMPT} ")])
            .args(["-e", &format!("XDG_CONFIG_HOME={}", home.path().display())])
            .args(["-e", &format!("XDG_STATE_HOME={}", home.path().display())])
            // Dates on screen read the same on every machine.
            .args(["-e", "TZ=UTC"])
            .args(["bash", "--norc", "--noprofile"])
            .status()
            .unwrap();
        assert!(status.success());
        let t = Tmux { name, home };
        t.wait_for("shell prompt", |s| s.contains(PROMPT));
        t
    }

    /// The real binary attached to a live server at `url`, in a terminal
    /// of `width` × `height`, once it says it is live.
    pub fn attached(tag: &str, width: u16, height: u16, url: &str) -> Tmux {
        let t = Tmux::start_sized(tag, width, height);
        t.line(&format!("{} attach {url}", env!("CARGO_BIN_EXE_ocview")));
        t.wait_for("the viewer, live", |sc| {
            sc.contains("live") && sc.contains("Sessions")
        });
        t
    }

    /// The session's name (a target for `tmux` commands).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The isolated `XDG_CONFIG_HOME` (and state home) of the shell.
    pub fn home(&self) -> &std::path::Path {
        self.home.path()
    }

    /// Append everything the pane's program writes, raw, to `path`.
    pub fn pipe_output_to(&self, path: &std::path::Path) {
        let status = tmux_cmd(&self.name)
            .args(["pipe-pane", "-O", "-t", &self.name])
            .arg(format!("cat >> '{}'", path.display()))
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Set the pane's colours (`fg=…,bg=…`): tmux then answers OSC 10/11
    /// queries from the pane with them.
    pub fn pane_style(&self, style: &str) {
        let status = tmux_cmd(&self.name)
            .args(["select-pane", "-t", &self.name, "-P", style])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = tmux_cmd(&self.name)
                .args(["send-keys", "-t", &self.name, k])
                .status()
                .unwrap();
            assert!(status.success());
            // An Escape followed at once by a letter reads as Alt+letter.
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    pub fn line(&self, text: &str) {
        let status = tmux_cmd(&self.name)
            .args(["send-keys", "-t", &self.name, "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
        self.keys(&["Enter"]);
    }

    /// A tmux command on this session's server; its standard output.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = tmux_cmd(&self.name).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn capture(&self) -> String {
        let out = tmux_cmd(&self.name)
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its SGR attributes (`capture-pane -e`).
    pub fn capture_styled(&self) -> String {
        let out = tmux_cmd(&self.name)
            .args(["capture-pane", "-p", "-e", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        self.wait_for_secs(what, 15, ok)
    }

    /// `wait_for` with another deadline; `ok` may note what it sees.
    pub fn wait_for_secs(&self, what: &str, secs: u64, mut ok: impl FnMut(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
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

    /// The screen once `ok` holds and nothing has changed on it for
    /// 300 ms: what a snapshot may keep (no frame half drawn, no count
    /// still climbing). Lines lose their trailing blanks.
    pub fn settled(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let mut screen = self.wait_for(what, &ok);
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut since = Instant::now();
        while since.elapsed() < Duration::from_millis(300) {
            std::thread::sleep(Duration::from_millis(50));
            let now = self.capture();
            if now != screen {
                assert!(ok(&now), "{what} went away; the screen:\n{now}");
                assert!(Instant::now() < deadline, "{what} never settled:\n{now}");
                screen = now;
                since = Instant::now();
            }
        }
        screen
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn ocview_pid(&self) -> u32 {
        let out = tmux_cmd(&self.name)
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
    pub fn assert_terminal_restored(&self) {
        self.wait_for("the shell prompt after ocview", |s| {
            s.trim_end().ends_with(PROMPT)
        });
        self.line("clear; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo|isig)$'");
        // Wait for stty's own lines: the typed command names the flags too,
        // so a screen that only echoes it must not count as the answer.
        let flag_line =
            |s: &str, flag: &str| s.lines().any(|l| l.trim().trim_start_matches('-') == flag);
        let screen = self.wait_for("stty output", |s| {
            flag_line(s, "icanon") && flag_line(s, "echo") && flag_line(s, "isig")
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
        let _ = tmux_cmd(&self.name).args(["kill-server"]).status();
    }
}

/// Each session gets a tmux server of its own (`-L`), so tests running in
/// parallel never race to start one, and a user's tmux is never touched.
fn tmux_cmd(name: &str) -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", name]);
    c
}

/// The player's position on the status line, `#n/total`: (n, total).
pub fn player_position(screen: &str) -> Option<(u64, u64)> {
    let at = screen.rfind('#')?;
    let rest = &screen[at + 1..];
    let (n, rest) = rest.split_once('/')?;
    let total: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((n.parse().ok()?, total.parse().ok()?))
}
