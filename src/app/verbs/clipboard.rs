//! Copying: to the system clipboard through its program where one is
//! reachable (`pbcopy`, `wl-copy`, `xclip`/`xsel`, tmux's own buffer),
//! otherwise with OSC 52, which the terminal (local, or at the far end of
//! ssh) puts on its clipboard.
//!
//! OSC 52 is the only escape sequence ocview writes from content. The text
//! is already plain (`sanitize::plain`: no control character but newline
//! and tab), and goes out base64-encoded, so nothing in it can end the
//! sequence; it is cut to `OSC52_LIMIT` bytes.

pub use crate::app::config::ClipboardMode;

/// Where copies go, decided once at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clipboard {
    /// A program that reads the text on its standard input.
    Program {
        name: String,
        argv: Vec<String>,
    },
    /// OSC 52 to the terminal; wrapped for GNU screen, which passes on
    /// only what a DCS string carries.
    Osc52 {
        screen: bool,
    },
    Off,
}

impl Clipboard {
    /// The way to copy in this environment: `env` reads a variable,
    /// `found` says whether a program is on `PATH`.
    pub fn choose(
        mode: ClipboardMode,
        env: impl Fn(&str) -> Option<String>,
        found: impl Fn(&str) -> bool,
    ) -> Clipboard {
        let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
        let osc52 = Clipboard::Osc52 {
            screen: set("STY") && !set("TMUX"),
        };
        let mode = env("OCVIEW_CLIPBOARD")
            .and_then(|v| ClipboardMode::parse(&v))
            .unwrap_or(mode);
        match mode {
            ClipboardMode::Off => return Clipboard::Off,
            ClipboardMode::Osc52 => return osc52,
            ClipboardMode::Auto => {}
        }
        let program = |name: &str, args: &[&str]| Clipboard::Program {
            name: name.to_string(),
            argv: std::iter::once(name)
                .chain(args.iter().copied())
                .map(str::to_string)
                .collect(),
        };
        // Over ssh the local programs reach the far machine's clipboard,
        // not the user's: OSC 52 travels back to the user's terminal.
        let remote = set("SSH_CONNECTION") || set("SSH_TTY");
        if cfg!(target_os = "macos") && !remote && found("pbcopy") {
            return program("pbcopy", &[]);
        }
        if set("WAYLAND_DISPLAY") && found("wl-copy") {
            return program("wl-copy", &[]);
        }
        if set("DISPLAY") {
            if found("xclip") {
                return program("xclip", &["-selection", "clipboard"]);
            }
            if found("xsel") {
                return program("xsel", &["--clipboard", "--input"]);
            }
        }
        // In tmux a plain OSC 52 from a pane is dropped unless
        // `set-clipboard on`; `load-buffer -w` keeps it in tmux's buffer
        // and hands it on to the outer terminal in either setting.
        if set("TMUX") && found("tmux") {
            return program("tmux", &["load-buffer", "-w", "-"]);
        }
        osc52
    }

    /// The real environment.
    pub fn detect(mode: ClipboardMode) -> Clipboard {
        Clipboard::choose(mode, |k| std::env::var(k).ok(), on_path)
    }

    /// For the status line: "OSC 52", "wl-copy".
    pub fn via(&self) -> String {
        match self {
            Clipboard::Program { name, .. } => name.clone(),
            Clipboard::Osc52 { .. } => "OSC 52".into(),
            Clipboard::Off => "nothing (clipboard = off)".into(),
        }
    }
}

fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The most text an OSC 52 carries: its base64 fits in 100 000 bytes, what
/// many terminals take (hterm, and what vim-oscyank assumes).
pub const OSC52_LIMIT: usize = 74_994;

/// `text` cut to `limit` bytes at the last line break before it (or a
/// character boundary when a single line is longer). Returns the text kept.
pub fn cap(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl > 0 => &text[..=nl],
        _ => &text[..end],
    }
}

/// The OSC 52 sequence that sets the clipboard to `text` (already plain
/// and capped).
pub fn osc52(text: &str, screen: bool) -> Vec<u8> {
    let payload = base64(text.as_bytes());
    if !screen {
        return format!("\u{1b}]52;c;{payload}\u{7}").into_bytes();
    }
    // GNU screen passes a DCS string's content on, 768 bytes at most: the
    // sequence goes in pieces, each its own DCS.
    let mut out = String::from("\u{1b}P\u{1b}]52;c;");
    for (i, chunk) in payload.as_bytes().chunks(76).enumerate() {
        if i > 0 {
            out.push_str("\u{1b}\\\u{1b}P");
        }
        out.push_str(std::str::from_utf8(chunk).unwrap_or(""));
    }
    out.push_str("\u{7}\u{1b}\\");
    out.into_bytes()
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ABC[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// How long a clipboard program may take before it counts as failed.
const PROGRAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Run a clipboard program with `text` on its standard input, off the
/// loop. `Err` says why it failed.
pub async fn run_program(argv: Vec<String>, text: String) -> Result<(), String> {
    let name = argv.first().cloned().unwrap_or_default();
    let work = tokio::task::spawn_blocking(move || -> Result<(), String> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(text.as_bytes())
                .map_err(|e| e.to_string())?;
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("").trim();
            Err(format!(
                "{}{}",
                out.status,
                if first.is_empty() {
                    String::new()
                } else {
                    format!(": {first}")
                }
            ))
        }
    });
    match tokio::time::timeout(PROGRAM_TIMEOUT, work).await {
        Ok(Ok(r)) => r.map_err(|e| format!("{name}: {e}")),
        Ok(Err(e)) => Err(format!("{name}: {e}")),
        Err(_) => Err(format!("{name} did not finish")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn osc52_is_one_sequence_or_screen_pieces() {
        assert_eq!(osc52("hi\n", false), b"\x1b]52;c;aGkK\x07");
        let long = "x".repeat(200);
        let s = String::from_utf8(osc52(&long, true)).unwrap();
        assert!(s.starts_with("\u{1b}P\u{1b}]52;c;"));
        assert!(s.ends_with("\u{7}\u{1b}\\"));
        assert_eq!(s.matches("\u{1b}P").count(), 4, "{s:?}");
    }

    #[test]
    fn cap_cuts_at_a_line_break_or_a_character() {
        assert_eq!(cap("ab\ncd\nef", 100), "ab\ncd\nef");
        assert_eq!(cap("ab\ncd\nef", 7), "ab\ncd\n");
        assert_eq!(cap("ééé", 3), "é");
    }

    #[test]
    fn the_config_names_the_mode() {
        use crate::app::config::Config;
        assert_eq!(
            Config::parse("clipboard = \"osc52\"").unwrap().clipboard,
            ClipboardMode::Osc52
        );
        assert_eq!(Config::default().clipboard, ClipboardMode::Auto);
        let e = Config::parse("clipboard = \"system\"").unwrap_err();
        assert!(e.contains("clipboard"), "{e}");
    }

    #[test]
    fn the_environment_picks_the_clipboard() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = |_: &str| true;
        let none = |_: &str| false;
        let wl = Clipboard::choose(ClipboardMode::Auto, env(&[("WAYLAND_DISPLAY", "w")]), all);
        assert_eq!(wl.via(), "wl-copy");
        let x = Clipboard::choose(ClipboardMode::Auto, env(&[("DISPLAY", ":0")]), |p| {
            p == "xsel"
        });
        assert_eq!(x.via(), "xsel");
        let tmux = Clipboard::choose(ClipboardMode::Auto, env(&[("TMUX", "/tmp/t")]), all);
        assert_eq!(tmux.via(), "tmux");
        let bare = Clipboard::choose(ClipboardMode::Auto, env(&[("DISPLAY", ":0")]), none);
        assert_eq!(bare, Clipboard::Osc52 { screen: false });
        let screen = Clipboard::choose(ClipboardMode::Osc52, env(&[("STY", "1.pts")]), all);
        assert_eq!(screen, Clipboard::Osc52 { screen: true });
        let forced = Clipboard::choose(
            ClipboardMode::Auto,
            env(&[("WAYLAND_DISPLAY", "w"), ("OCVIEW_CLIPBOARD", "osc52")]),
            all,
        );
        assert_eq!(forced, Clipboard::Osc52 { screen: false });
        let off = Clipboard::choose(
            ClipboardMode::Auto,
            env(&[("OCVIEW_CLIPBOARD", "off")]),
            all,
        );
        assert_eq!(off, Clipboard::Off);
    }
}
