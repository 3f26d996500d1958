//! Colour on screen: the same screen in the OpenCode default theme, dark
//! and light, and in two other bundled themes, kept with its styles (a
//! letter per distinct style under the text, and what each letter is);
//! the theme picker; and code blocks highlighted by the worker thread
//! reaching the screen with no key pressed.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::frame_probe::FrameProbe;
use common::{feed, fixture, press};
use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::look::ModeSetting;
use ocview::app::run::run;
use ocview::source::decode::apply::decode_record;
use ocview::source::msg::{SourceMsg, SourceState};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};

const NOW: i64 = 1_795_339_400_000;

fn config(theme: &str, mode: ModeSetting) -> Config {
    Config {
        theme: Some(theme.into()),
        theme_mode: mode,
        ..Config::default()
    }
}

fn themed(theme: &str, mode: ModeSetting, bytes: &[u8]) -> App {
    let mut app = App::new(config(theme, mode), "replay test", true).unwrap();
    feed(&mut app, bytes);
    app.on_source(SourceMsg::State(SourceState::Ended));
    app.now_ms = NOW;
    app.highlighter = ocview::render::highlight::Highlighter::blocking(&app.theme.syntax);
    app
}

fn colour(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => format!("ansi {i}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn describe(s: &Style) -> String {
    let mut parts = vec![
        format!("fg {}", colour(s.fg.unwrap_or(Color::Reset))),
        format!("bg {}", colour(s.bg.unwrap_or(Color::Reset))),
    ];
    for (m, name) in [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underline"),
        (Modifier::REVERSED, "reversed"),
    ] {
        if s.add_modifier.contains(m) {
            parts.push(name.into());
        }
    }
    parts.join(" ")
}

/// The text, then a letter per cell naming its style, then the letters.
fn styled(buf: &Buffer) -> String {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut styles: Vec<String> = Vec::new();
    let mut grid = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            let d = describe(&cell.style());
            let i = styles.iter().position(|s| *s == d).unwrap_or_else(|| {
                styles.push(d);
                styles.len() - 1
            });
            grid.push(LETTERS.get(i).map_or('?', |&b| b as char));
        }
        grid.push('\n');
    }
    let legend: Vec<String> = styles
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{} {s}", LETTERS.get(i).map_or('?', |&b| b as char)))
        .collect();
    format!(
        "{}\n{grid}\n{}\n",
        common::buffer_text(buf),
        legend.join("\n")
    )
}

fn styled_screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(ratatui::layout::Rect::new(0, 0, width, height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    styled(terminal.backend().buffer())
}

fn edit_screen(theme: &str, mode: ModeSetting) -> String {
    let mut app = themed(theme, mode, &fixture("b_edit_write_diff", "event.jsonl"));
    press(&mut app, &["tab", "g"]);
    styled_screen(&mut app, 100, 30)
}

#[test]
fn the_same_screen_in_four_looks() {
    let dark = edit_screen("opencode", ModeSetting::Dark);
    let light = edit_screen("opencode", ModeSetting::Light);
    assert_ne!(dark, light);
    // The light variant paints its own background under everything.
    assert!(light.contains("bg #ffffff"), "{light}");
    assert!(
        !light.contains("bg reset"),
        "a cell on the terminal's own background:\n{light}"
    );
    insta::assert_snapshot!("look_opencode_dark", dark);
    insta::assert_snapshot!("look_opencode_light", light);
    insta::assert_snapshot!(
        "look_tokyonight_dark",
        edit_screen("tokyonight", ModeSetting::Dark)
    );
    insta::assert_snapshot!(
        "look_gruvbox_light",
        edit_screen("gruvbox", ModeSetting::Light)
    );
}

#[test]
fn the_picker_previews_the_highlighted_theme_and_esc_puts_the_old_one_back() {
    let mut app = themed(
        "opencode",
        ModeSetting::Dark,
        &fixture("b_edit_write_diff", "event.jsonl"),
    );
    let before = styled_screen(&mut app, 100, 30);
    press(&mut app, &["T"]);
    let open = common::screen(&mut app, 100, 30);
    assert!(
        open.contains("Themes (dark)") && open.contains("› opencode"),
        "{open}"
    );
    press(&mut app, &["k"]);
    assert_eq!(app.theme.name, "one-dark");
    let preview = styled_screen(&mut app, 100, 30);
    assert!(preview.contains("› one-dark"), "{preview}");
    // One Dark's background behind the whole screen, picker and all.
    assert!(preview.contains("bg #282c34"), "{preview}");
    insta::assert_snapshot!("picker_one_dark", preview);
    press(&mut app, &["esc"]);
    assert_eq!(app.theme.name, "opencode");
    assert_eq!(styled_screen(&mut app, 100, 30), before);
}

#[test]
fn enter_keeps_the_choice_in_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "mouse = false\n").unwrap();
    let mut app = App::new(
        Config {
            path: Some(path.clone()),
            ..config("opencode", ModeSetting::Dark)
        },
        "test",
        true,
    )
    .unwrap();
    // The list is sorted: opencode, then orng.
    press(&mut app, &["T", "j", "enter"]);
    assert_eq!(app.theme.name, "orng");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "mouse = false\ntheme = \"orng\"\n"
    );
    assert!(app.overlay.is_none());
    // The next start shows it.
    let again = Config::load(Some(&path)).unwrap();
    assert_eq!(App::new(again, "test", true).unwrap().theme.name, "orng");
}

#[test]
fn a_broken_theme_file_loads_with_a_warning_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(
        &path,
        r##"{"defs": {"a": "b", "b": "a"}, "theme": {"error": "a", "text": "#12345", "primary": "#00ff00", "bogus": "#fff"}}"##,
    )
    .unwrap();
    let mut app = App::new(
        config(path.to_str().unwrap(), ModeSetting::Dark),
        "test",
        true,
    )
    .unwrap();
    let warnings = app.theme.warnings.join("\n");
    assert_eq!(app.theme.warnings.len(), 3, "{warnings}");
    for expected in [
        "theme.error: reference loop error -> a -> b -> a",
        "theme.text: bad colour \"#12345\"",
        "theme.bogus: unknown key",
    ] {
        assert!(warnings.contains(expected), "{expected}: {warnings}");
    }
    // The roles concerned fell back; the good key is used.
    let default = ocview::render::theme::Theme::default();
    use ocview::render::theme::Role;
    assert_eq!(app.theme.style(Role::Error), default.style(Role::Error));
    assert_eq!(app.theme.style(Role::Text), default.style(Role::Text));
    assert_eq!(
        app.theme.style(Role::Accent).fg,
        Some(Color::Rgb(0, 255, 0))
    );
    // The status line says so, naming the first key, and counts the rest.
    let notice = app.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("broken.json: theme.bogus: unknown key (+2 more"),
        "{notice}"
    );
    let screen = common::screen(&mut app, 200, 20);
    assert!(screen.contains("broken.json: theme.bogus"), "{screen}");
    // Not JSON at all: the file cannot be a theme, and the error says which.
    std::fs::write(&path, "{ nope").unwrap();
    let e = App::new(
        config(path.to_str().unwrap(), ModeSetting::Dark),
        "test",
        true,
    )
    .err()
    .unwrap();
    assert!(e.contains("broken.json") && e.contains("not JSON"), "{e}");
}

const CODE: &str = "Two files:\n\n```ts\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n```\n\n```toml\n[package]\nname = \"ocview\"\nversion = 1\n```\n";

fn code_records() -> Vec<String> {
    let text = serde_json::to_string(CODE).unwrap();
    vec![
        r#"{"type":"session.created","properties":{"sessionID":"ses_c","info":{"id":"ses_c","title":"Code","directory":"/p","time":{"created":1,"updated":2}}}}"#.to_string(),
        r#"{"type":"message.updated","properties":{"sessionID":"ses_c","info":{"id":"msg_u","sessionID":"ses_c","role":"user","time":{"created":1}}}}"#.to_string(),
        r#"{"type":"message.updated","properties":{"sessionID":"ses_c","info":{"id":"msg_a","sessionID":"ses_c","role":"assistant","time":{"created":2}}}}"#.to_string(),
        format!(
            r#"{{"type":"message.part.updated","properties":{{"sessionID":"ses_c","part":{{"id":"prt_a","messageID":"msg_a","sessionID":"ses_c","type":"text","text":{text}}}}}}}"#
        ),
    ]
}

/// Distinct foreground colours of `needle`'s own cells on screen.
fn code_colours(buf: &Buffer, needle: &str) -> usize {
    let text = common::buffer_text(buf);
    let Some((row, line)) = text.lines().enumerate().find(|(_, l)| l.contains(needle)) else {
        return 0;
    };
    // The column where it starts (the line is all single-width here).
    let start = line[..line.find(needle).unwrap()].chars().count() as u16;
    let mut seen = std::collections::HashSet::new();
    for (i, ch) in needle.chars().enumerate() {
        if !ch.is_whitespace() {
            seen.insert(buf[(start + i as u16, row as u16)].fg);
        }
    }
    seen.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_blocks_are_highlighted_without_a_key_press() {
    let mut app = App::new(config("opencode", ModeSetting::Dark), "test", true).unwrap();
    app.now_ms = NOW;
    let last = Arc::new(Mutex::new(None));
    // Keep each finished frame.
    let kept = last.clone();
    let mut terminal = Terminal::new(FrameProbe::new(100, 24, move |b| {
        *kept.lock().unwrap() = Some(b.buffer().clone())
    }))
    .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    for line in code_records() {
        tx.send(SourceMsg::Record(Box::new(decode_record(
            line.as_bytes(),
            1,
            true,
        ))))
        .await
        .unwrap();
    }
    let watch = last.clone();
    // Stop once a frame shows both blocks in several colours (or give up).
    let highlighted = async move {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let done = watch.lock().unwrap().as_ref().is_some_and(|b| {
                code_colours(b, "export function greet") > 1 && code_colours(b, "[package]") > 1
            });
            if done || tokio::time::Instant::now() > deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let input = futures_util::stream::pending;
    run(&mut app, &mut terminal, input, rx, highlighted)
        .await
        .unwrap();
    drop(tx);
    let buf = last.lock().unwrap().clone().expect("a frame");
    assert!(
        code_colours(&buf, "export function greet") > 1 && code_colours(&buf, "[package]") > 1,
        "still plain without a key:\n{}",
        styled(&buf)
    );
    insta::assert_snapshot!("code_highlighted_without_a_key", styled(&buf));
}

#[test]
fn theme_names_from_files_are_shown_inert() {
    use ocview::render::theme::catalog::{Catalog, Dirs};
    let home = tempfile::tempdir().unwrap();
    let themes = home.path().join("opencode/themes");
    std::fs::create_dir_all(&themes).unwrap();
    // An escape, and a right-to-left override that would make the list
    // read differently from what the files are.
    std::fs::write(
        themes.join("evil\x1b[31m\u{202E}cba.json"),
        r##"{"theme":{}}"##,
    )
    .unwrap();
    let mut app = themed("opencode", ModeSetting::Dark, b"");
    app.look.catalog = Catalog::discover(&Dirs {
        config: Some(home.path().to_path_buf()),
        ..Dirs::default()
    });
    press(&mut app, &["T"]);
    let screen = common::screen(&mut app, 100, 30);
    assert!(screen.contains("evil␛[31mcba"), "{screen}");
    assert!(
        !screen.contains('\x1b') && !screen.contains('\u{202E}'),
        "{screen:?}"
    );
}
