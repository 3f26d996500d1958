//! OpenCode's own colours, side by side: the same session on a real server,
//! drawn by OpenCode's TUI (the real binary, `opencode attach`) and by
//! ocview, each in tmux with the theme chosen in OpenCode's `tui.json`.
//! The SGR colours of the text, muted text, accent, border and background
//! roles must be the same on both screens, and be what the theme file says.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::fake_model::{FakeModel, Step};
use support::opencode::{self, Server};
use support::tmux::Tmux;

type Rgb = (u8, u8, u8);

#[derive(Clone, Copy, Debug)]
struct Cell {
    ch: char,
    fg: Option<Rgb>,
    bg: Option<Rgb>,
}

/// A captured screen, cell by cell, with the colours its SGR sequences set.
struct Screen {
    rows: Vec<Vec<Cell>>,
}

impl Screen {
    fn parse(captured: &str) -> Screen {
        let (mut fg, mut bg) = (None, None);
        let mut rows = Vec::new();
        for line in captured.lines() {
            let mut row = Vec::new();
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\x1b' {
                    row.push(Cell { ch: c, fg, bg });
                    continue;
                }
                if chars.peek() != Some(&'[') {
                    continue;
                }
                chars.next();
                let mut params = String::new();
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() {
                        if p == 'm' {
                            apply_sgr(&params, &mut fg, &mut bg);
                        }
                        break;
                    }
                    params.push(p);
                }
            }
            rows.push(row);
        }
        Screen { rows }
    }

    fn text(&self) -> String {
        let lines: Vec<String> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.ch).collect())
            .collect();
        lines.join("\n")
    }

    /// The first cell of the first place `needle` is shown.
    fn find(&self, needle: &str) -> Option<Cell> {
        let needle: Vec<char> = needle.chars().collect();
        for row in &self.rows {
            for start in 0..row.len() {
                if row[start..]
                    .iter()
                    .map(|c| c.ch)
                    .take(needle.len())
                    .eq(needle.iter().copied())
                {
                    return Some(row[start]);
                }
            }
        }
        None
    }

    fn cell(&self, needle: &str) -> Cell {
        self.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} is not on the screen:\n{}", self.text()))
    }

    /// Every foreground colour of a cell showing one of `glyphs`.
    fn glyph_colours(&self, glyphs: &str) -> Vec<Rgb> {
        let mut out: Vec<Rgb> = self
            .rows
            .iter()
            .flatten()
            .filter(|c| glyphs.contains(c.ch))
            .filter_map(|c| c.fg)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

fn hex(c: Option<Rgb>) -> String {
    c.map(|(r, g, b)| format!("#{r:02x}{g:02x}{b:02x}"))
        .unwrap_or_else(|| "default".into())
}

fn apply_sgr(params: &str, fg: &mut Option<Rgb>, bg: &mut Option<Rgb>) {
    let ps: Vec<u16> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
    let mut i = 0;
    while i < ps.len() {
        match ps[i] {
            0 => (*fg, *bg) = (None, None),
            39 => *fg = None,
            49 => *bg = None,
            38 | 48 if ps.get(i + 1) == Some(&2) && i + 4 < ps.len() => {
                let c = Some((ps[i + 2] as u8, ps[i + 3] as u8, ps[i + 4] as u8));
                if ps[i] == 38 {
                    *fg = c
                } else {
                    *bg = c
                }
                i += 4;
            }
            38 | 48 if ps.get(i + 1) == Some(&5) => i += 2,
            _ => {}
        }
        i += 1;
    }
}

/// A key of an OpenCode theme file resolved as OpenCode resolves it: a
/// variant pick, a def name or another key, down to a hex colour.
fn theme_colour(name: &str, dark: bool, key: &str) -> Rgb {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("themes/{name}.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut v = doc["theme"][key].clone();
    for _ in 0..16 {
        if v.is_object() {
            v = v[if dark { "dark" } else { "light" }].clone();
        }
        let s = v
            .as_str()
            .unwrap_or_else(|| panic!("{name}.{key}: {v}"))
            .to_string();
        if let Some(h) = s.strip_prefix('#') {
            let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap();
            return (byte(0), byte(2), byte(4));
        }
        v = doc["defs"]
            .get(&s)
            .or_else(|| doc["theme"].get(&s))
            .cloned()
            .unwrap();
    }
    panic!("{name}.{key} does not resolve");
}

/// "delegate": a task for a subagent, whose session is the one both
/// programs show: OpenCode draws a child session's header with a bar in
/// the theme's `border` colour, one of the few places it uses that key.
async fn model() -> FakeModel {
    let task = serde_json::json!({"description": "colour check", "prompt": "hello colour check",
        "subagent_type": "general"});
    FakeModel::start(std::sync::Arc::new(move |req: &Value, _: usize| {
        let (text, step) = support::fake_model::last_turn(req);
        match step {
            0 if text.contains("delegate") => {
                Step::text("Delegating.").then_tool("task", task.clone())
            }
            0 => Step::text("The answer, in colour."),
            _ => Step::text("Done."),
        }
    }))
    .await
}

/// The same environment for both programs: the theme in OpenCode's
/// `tui.json`, truecolour, and (for a light variant) a white pane, whose
/// colour tmux gives both when they ask for the terminal's background.
fn terminal(tag: &str, theme: &str, dark: bool) -> Tmux {
    let t = Tmux::start_sized(tag, 170, 40);
    let dir = t.home().join("opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tui.json"), format!("{{\"theme\": \"{theme}\"}}")).unwrap();
    if !dark {
        t.pane_style("fg=#000000,bg=#ffffff");
    }
    t
}

/// The colour each compared role has on one screen.
#[derive(Debug, PartialEq)]
struct Roles {
    background: Option<Rgb>,
    text: Option<Rgb>,
    muted: Option<Rgb>,
    /// A selected row's band: OpenCode's and ocview's both are `primary`.
    accent: Option<Rgb>,
    border: Vec<Rgb>,
}

/// OpenCode's TUI on the child session, and with its command list open.
fn opencode_roles(theme: &str, dark: bool, url: &str, child: &str) -> Roles {
    let t = terminal(&format!("oc-{theme}"), theme, dark);
    t.line(&format!(
        "XDG_DATA_HOME={home}/data XDG_CACHE_HOME={home}/cache OPENCODE_DISABLE_AUTOUPDATE=1 \
         COLORTERM=truecolor {bin} attach {url} --session {child}",
        home = t.home().display(),
        bin = opencode::binary().display(),
    ));
    t.wait_for_secs("OpenCode's view of the subagent", 60, |s| {
        s.contains("hello colour check") && s.contains("in colour") && s.contains("Parent")
    });
    // Its first frames fade in.
    std::thread::sleep(std::time::Duration::from_millis(800));
    let session = Screen::parse(&t.capture_styled());
    t.keys(&["C-p"]);
    t.wait_for("OpenCode's command list", |s| s.contains("Switch session"));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let dialog = Screen::parse(&t.capture_styled());
    let header = session
        .rows
        .iter()
        .position(|r| {
            r.iter()
                .map(|c| c.ch)
                .collect::<String>()
                .contains("Parent")
        })
        .unwrap();
    let bar = session.rows[header].iter().find(|c| c.ch == '┃').copied();
    Roles {
        // Behind the assistant's answer: OpenCode fills other parts of a
        // subagent's view with its panel colour.
        background: session.cell("The answer, in colour").bg,
        text: session.cell("hello colour check").fg,
        muted: session.cell("· mock-1").fg,
        accent: dialog.cell("Switch session").bg,
        border: bar.and_then(|c| c.fg).into_iter().collect(),
    }
}

/// ocview attached to the same server, the subagent selected.
fn ocview_roles(theme: &str, dark: bool, url: &str) -> Roles {
    let t = terminal(&format!("ov-{theme}"), theme, dark);
    t.line(&format!(
        "COLORTERM=truecolor {} attach {url}",
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for("ocview's list", |s| {
        s.contains("colour check") && s.contains("Delegating")
    });
    t.keys(&["j"]);
    t.wait_for("the subagent's turns", |s| {
        s.contains("hello colour check") && s.contains("in colour")
    });
    // The side panel shows only when asked for or when it has something:
    // `t` brings it, and its border is drawn in the unfocused `border` role.
    t.keys(&["t"]);
    t.wait_for("the side panel", |s| s.contains("Context"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let screen = Screen::parse(&t.capture_styled());
    Roles {
        background: screen.cell("The answer, in colour").bg,
        text: screen.cell("hello colour check").fg,
        muted: screen.cell("idle ·").fg,
        accent: screen.cell("›").bg,
        border: screen.glyph_colours("│─"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn opencode_and_ocview_draw_the_same_roles_in_the_same_colours() {
    let model = model().await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    server.prompt(&session, "delegate").await;
    server.wait_idle(&session, 60).await;
    let children = server.get(&format!("/session/{session}/children")).await;
    let child = children[0]["id"]
        .as_str()
        .expect("the subagent's session")
        .to_string();
    server.wait_idle(&child, 60).await;
    let url = server.url();
    let mut wrong = Vec::new();
    for (theme, dark) in [
        ("tokyonight", true),
        ("catppuccin", true),
        ("gruvbox", false),
        ("opencode", false),
    ] {
        let oc = opencode_roles(theme, dark, &url, &child);
        let ov = ocview_roles(theme, dark, &url);
        let want = |key: &str| Some(theme_colour(theme, dark, key));
        let variant = if dark { "dark" } else { "light" };
        for (role, key, oc, ov) in [
            ("background", "background", oc.background, ov.background),
            ("text", "text", oc.text, ov.text),
            ("muted text", "textMuted", oc.muted, ov.muted),
            ("accent", "primary", oc.accent, ov.accent),
        ] {
            if oc != want(key) || ov != want(key) {
                wrong.push(format!(
                    "{theme} {variant} {role}: theme {} · OpenCode {} · ocview {}",
                    hex(want(key)),
                    hex(oc),
                    hex(ov)
                ));
            }
        }
        let border = theme_colour(theme, dark, "border");
        if oc.border != [border] || !ov.border.contains(&border) {
            wrong.push(format!(
                "{theme} {variant} border: theme {} · OpenCode {:?} · ocview {:?}",
                hex(Some(border)),
                oc.border.iter().map(|c| hex(Some(*c))).collect::<Vec<_>>(),
                ov.border.iter().map(|c| hex(Some(*c))).collect::<Vec<_>>()
            ));
        }
    }
    assert!(wrong.is_empty(), "colours differ:\n{}", wrong.join("\n"));
}
