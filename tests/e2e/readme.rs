//! The README as a newcomer reads it, and docs/keys.md: the keys table
//! there is the keymap (every action, by name, with its default keys,
//! grouped as help groups them), the README's everyday keys are keys of the
//! actions they name, help lists every action too, the two commands stay
//! near the top and are the ones CI runs, and the picture of the screen is
//! there and is made the same way every time by `scripts/screenshot.py`.
//!
//! The keys table is generated: when the keymap changes, run
//! `OCVIEW_README_KEYS=write bash scripts/test -E 'test(/^readme::/)'` to
//! rewrite it (the failing test prints the expected table too).

use crate::common;

use std::path::Path;
use std::time::Duration;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::keymap::{Action, Context, Keymap};
use ocview::source::msg::SourceMsg;
use ocview::source::timeline::{Backing, IndexOptions, Timeline};

const START: &str = "<!-- keys:start";
const END: &str = "<!-- keys:end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// Where the generated keys table lives.
const KEYS_DOC: &str = "docs/keys.md";

fn keys_doc() -> String {
    std::fs::read_to_string(root().join(KEYS_DOC)).expect(KEYS_DOC)
}

/// A key or a description as a table cell: `|` would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The README's keys table, from the default keymap: a small table per
/// context, in help's order, each row the keys, what they do and the
/// action's name (what the config rebinds).
fn keys_table(map: &Keymap) -> String {
    let mut out = String::new();
    for (ctx, rows) in map.help_rows() {
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("\n### {}\n\n", ctx.title()));
        out.push_str("| keys | does | action |\n|---|---|---|\n");
        for (_, help, name) in rows {
            let action = Action::ALL.iter().find(|a| a.name() == name).unwrap();
            let keys: Vec<String> = map
                .keys(*action)
                .iter()
                .map(|k| format!("`{}`", cell(&k.to_string())))
                .collect();
            out.push_str(&format!(
                "| {} | {} | `{name}` |\n",
                keys.join(" "),
                cell(help)
            ));
        }
    }
    out.push('\n');
    out
}

/// The text between the markers (the marker lines excluded), and where it
/// starts and ends in the README.
fn generated_part(text: &str) -> (usize, usize) {
    let start = text
        .find(START)
        .expect("docs/keys.md marks its keys table with <!-- keys:start … -->");
    let start = start + text[start..].find('\n').expect("a line after the marker") + 1;
    let end = text[start..]
        .find(END)
        .map(|e| start + e)
        .expect("docs/keys.md ends its keys table with <!-- keys:end -->");
    (start, end)
}

#[test]
fn the_keys_table_is_the_keymap() {
    let text = keys_doc();
    let (start, end) = generated_part(&text);
    let expected = keys_table(&Keymap::default());
    if text[start..end] == expected {
        return;
    }
    if std::env::var("OCVIEW_README_KEYS").as_deref() == Ok("write") {
        let rewritten = format!("{}{expected}{}", &text[..start], &text[end..]);
        std::fs::write(root().join(KEYS_DOC), rewritten).unwrap();
        eprintln!("{KEYS_DOC}: keys table rewritten from the keymap");
        return;
    }
    panic!(
        "{KEYS_DOC}'s keys table is not the keymap's (src/app/keymap.rs). \
         Rewrite it with `OCVIEW_README_KEYS=write bash scripts/test -E 'test(/^readme::/)'`; \
         it should read:\n{expected}"
    );
}

/// Every action's row, found by reading the generated tables back: under
/// its context's heading, its name and each of its default keys.
#[test]
fn every_action_and_its_default_keys_are_in_the_keys_table() {
    let text = keys_doc();
    let (start, end) = generated_part(&text);
    let mut heading = "";
    let mut rows: Vec<(&str, &str)> = Vec::new();
    for line in text[start..end].lines() {
        if let Some(h) = line.strip_prefix("### ") {
            heading = h;
        } else if line.starts_with("| `") {
            rows.push((heading, line));
        }
    }
    let map = Keymap::default();
    let mut missing = Vec::new();
    for &action in Action::ALL {
        let name_cell = format!("| `{}` |", action.name());
        let row = rows
            .iter()
            .find(|(h, line)| *h == action.context().title() && line.ends_with(&name_cell));
        let Some((_, row)) = row else {
            missing.push(format!(
                "{} (under {:?})",
                action.name(),
                action.context().title()
            ));
            continue;
        };
        let keys_cell = row.split(" | ").next().unwrap_or("");
        for key in map.keys(action) {
            let key = format!("`{}`", cell(&key.to_string()));
            if !keys_cell
                .split(' ')
                .any(|k| k.trim_start_matches("| ") == key)
            {
                missing.push(format!("{}: key {key}", action.name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{KEYS_DOC}'s keys table lacks: {missing:?}"
    );
    // And names nothing the keymap does not have.
    assert_eq!(rows.len(), Action::ALL.len(), "one row per action");
}

/// The README's everyday keys: each row names actions of the keymap, and
/// each key it shows is a default key of one of them.
#[test]
fn the_readmes_everyday_keys_are_the_keymaps() {
    let text = readme();
    let start = text
        .find("## The everyday keys")
        .expect("the README has its everyday keys");
    let map = Keymap::default();
    let mut rows = 0;
    for line in text[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| keys"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
    {
        rows += 1;
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        let (keys, actions) = (cells[0], cells[cells.len() - 1]);
        let actions: Vec<Action> = actions
            .split_whitespace()
            .map(|name| {
                let name = name.trim_matches('`');
                *Action::ALL
                    .iter()
                    .find(|a| a.name() == name)
                    .unwrap_or_else(|| panic!("no action {name}: {line}"))
            })
            .collect();
        for key in keys.split_whitespace() {
            let key = key.trim_matches('`');
            assert!(
                actions
                    .iter()
                    .any(|a| map.keys(*a).iter().any(|k| k.to_string() == key)),
                "{key} is not a key of {actions:?}: {line}"
            );
        }
    }
    assert!(rows >= 8, "the everyday keys table has {rows} rows");
}

/// An app replaying the demo recording as a file, so help has the
/// player's keys too.
fn demo_player_app() -> App {
    let bytes = std::fs::read(root().join("assets/demo.jsonl")).unwrap();
    let options = IndexOptions {
        max_gap: Duration::from_secs(5),
        spacing: Some(50),
        reading_step: None,
    };
    let opened = Timeline::index(Backing::Memory(bytes.into()), options).unwrap();
    let mut app = App::new(Config::default(), "replay demo.jsonl", true).unwrap();
    app.on_source(SourceMsg::Indexed(Box::new(opened)));
    app
}

#[test]
fn help_lists_every_action_with_its_keys_and_description() {
    let mut app = demo_player_app();
    common::press(&mut app, &["?"]);
    let screen = common::screen(&mut app, 220, 130);
    assert!(screen.contains(" Keys ("), "help is open:\n{screen}");
    let map = Keymap::default();
    let mut missing = Vec::new();
    for &action in Action::ALL {
        // On one line: the keys, the description and the name.
        let shown = screen.lines().any(|line| {
            line.contains(&map.describe(action))
                && line.contains(action.help())
                && line.trim_end_matches(['│', ' ']).ends_with(action.name())
        });
        if !shown {
            missing.push(action.name());
        }
    }
    assert!(missing.is_empty(), "help lacks {missing:?}:\n{screen}");
    for ctx in [
        Context::Global,
        Context::Sessions,
        Context::Turns,
        Context::Player,
        Context::List,
        Context::Prompt,
        Context::Confirm,
        Context::Diff,
    ] {
        assert!(screen.contains(ctx.title()), "{ctx:?} heading:\n{screen}");
    }
}

/// Where a line first holds `needle`, or the end.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or(usize::MAX)
}

#[test]
fn the_two_commands_stay_near_the_top_and_ci_runs_the_test_command() {
    let text = readme();
    let demo = line_of(&text, "cargo run --release -- demo");
    let tests = line_of(&text, "bash scripts/test");
    assert!(demo < 40 && tests < 40, "the two commands near the top");
    // Before the install notes, the keys and the details.
    assert!(demo < line_of(&text, "## Install"));
    assert!(tests < line_of(&text, START));
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == "bash scripts/test"),
        ".ci/run runs the README's test command"
    );
}

#[test]
fn the_readme_shows_the_picture_made_by_the_script() {
    let text = readme();
    assert!(
        text.contains("](assets/screen.svg)"),
        "the README shows assets/screen.svg by a relative path"
    );
    let svg = std::fs::read_to_string(root().join("assets/screen.svg")).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("scripts/screenshot.py"));
    // A real screen: the session list and the status line's way to help.
    assert!(
        svg.contains(">Sessions"),
        "the session list is in the picture"
    );
    assert!(
        svg.contains(">?</text>") && svg.contains(">help</text>"),
        "the status line is in the picture"
    );
    assert!(text.contains("python3 scripts/screenshot.py"));
}

fn screenshot(args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new("python3")
        .arg(root().join("scripts/screenshot.py"))
        .args(args)
        .output()
        .expect("python3 runs scripts/screenshot.py");
    assert!(
        out.status.success(),
        "screenshot.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The converter on a capture made by hand: colours of each kind, runs,
/// wide characters, and text that would be markup is escaped.
#[test]
fn the_picture_converter_places_colours_and_escapes_text() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("capture.txt");
    let svg_path = dir.path().join("out.svg");
    std::fs::write(
        &capture,
        concat!(
            "\x1b[38;2;250;178;131m\x1b[48;2;20;20;20mSessions\x1b[0m <a&b>\n",
            "\x1b[1;31mred\x1b[0m \x1b[38;5;244mgrey\x1b[39m 日本 \x1b[7mrev\x1b[27m\n",
            "\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\\n",
        ),
    )
    .unwrap();
    screenshot(&[
        "--from-capture",
        capture.to_str().unwrap(),
        "--out",
        svg_path.to_str().unwrap(),
        "--width",
        "20",
        "--height",
        "4",
    ]);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains(r##"fill="#fab283""##), "24-bit fg:\n{svg}");
    assert!(
        svg.contains(r##"fill="#141414""##),
        "24-bit bg rect:\n{svg}"
    );
    assert!(svg.contains(">Sessions</text>"), "{svg}");
    assert!(svg.contains(">&lt;a&amp;b&gt;</text>"), "escaped:\n{svg}");
    assert!(!svg.contains("<a&b>"), "{svg}");
    assert!(
        svg.contains(r##"fill="#cd0000" font-weight="bold""##),
        "16-colour red, bold:\n{svg}"
    );
    assert!(
        svg.contains(r##"fill="#808080""##),
        "256-colour grey:\n{svg}"
    );
    // `日本` takes four cells: `rev` starts at column 14.
    assert!(svg.contains(r#"<text x="117.6" y="31.5""#), "{svg}");
    assert!(svg.contains(">link</text>"), "OSC 8 dropped:\n{svg}");
    assert!(!svg.contains('\x1b'), "no escape byte left");
}

/// The script run twice on the built binary writes the same file: the
/// picture depends on the binary, not on the moment or the machine's
/// settings.
#[test]
fn the_picture_script_gives_the_same_file_twice() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_ocview");
    let files: Vec<String> = (0..2)
        .map(|i| {
            let out = dir.path().join(format!("{i}.svg"));
            screenshot(&["--binary", bin, "--out", out.to_str().unwrap()]);
            std::fs::read_to_string(out).unwrap()
        })
        .collect();
    assert!(files[0].contains(">Sessions"), "{}", files[0]);
    assert_eq!(files[0], files[1], "two runs, two pictures");
}

/// Every text file a merge can leave half-done: the README, the docs, the
/// sources, tests, benches and scripts.
fn merged_text_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            merged_text_files(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("rs" | "md" | "toml" | "py" | "sh")
        ) {
            out.push(path);
        }
    }
}

#[test]
fn no_file_holds_a_merge_conflicts_markers() {
    let mut files = vec![root().join("README.md"), root().join("Cargo.toml")];
    for dir in ["docs", "src", "tests", "benches", "scripts", ".ci"] {
        merged_text_files(&root().join(dir), &mut files);
    }
    let mut found = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let marker =
                ["<<<<<<< ", ">>>>>>> "].iter().any(|m| line.starts_with(m)) || line == "=======";
            if marker {
                found.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "merge markers left:\n{}",
        found.join("\n")
    );
}
