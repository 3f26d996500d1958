//! Where themes come from: the ones built into the binary (`themes/*.json`),
//! the user's `$XDG_CONFIG_HOME/opencode/themes/*.json` and each project's
//! `.opencode/themes/*.json` (a later one of the same name wins, as in
//! OpenCode), and which one the user chose in OpenCode itself.

use std::path::{Path, PathBuf};

use crate::model::wire::sanitize;
use crate::render::theme::{Mode, Theme};

/// OpenCode's default theme, and ocview's.
pub const DEFAULT: &str = "opencode";

use super::built_in::BUILT_IN;

pub fn default_text() -> &'static str {
    BUILT_IN
        .iter()
        .find(|(name, _)| *name == DEFAULT)
        .map(|(_, text)| *text)
        .expect("the default theme is built in")
}

/// The folders themes and OpenCode's settings are looked for in.
#[derive(Debug, Clone, Default)]
pub struct Dirs {
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config: Option<PathBuf>,
    /// `$XDG_STATE_HOME`, else `~/.local/state` (OpenCode's `kv.json`).
    pub state: Option<PathBuf>,
    /// Where the project's `.opencode/themes` are looked for, upwards.
    pub cwd: Option<PathBuf>,
}

impl Dirs {
    pub fn from_env() -> Dirs {
        let xdg = |var: &str, fallback: &str| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| dirs::home_dir().map(|h| h.join(fallback)))
        };
        Dirs {
            config: xdg("XDG_CONFIG_HOME", ".config"),
            state: xdg("XDG_STATE_HOME", ".local/state"),
            cwd: std::env::current_dir().ok(),
        }
    }
}

#[derive(Debug, Clone)]
enum Source {
    BuiltIn(&'static str),
    File(PathBuf),
}

/// Every theme by name, sorted.
#[derive(Debug, Clone)]
pub struct Catalog {
    entries: Vec<(String, Source)>,
}

impl Catalog {
    pub fn built_in() -> Catalog {
        let mut entries: Vec<(String, Source)> = BUILT_IN
            .iter()
            .map(|(n, t)| (n.to_string(), Source::BuiltIn(t)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Catalog { entries }
    }

    /// The built-in themes and the theme files found in `dirs`.
    pub fn discover(dirs: &Dirs) -> Catalog {
        let mut catalog = Catalog::built_in();
        let mut folders = Vec::new();
        if let Some(config) = &dirs.config {
            folders.push(config.join("opencode").join("themes"));
        }
        if let Some(cwd) = &dirs.cwd {
            // Outermost first, so the nearest project's theme wins.
            let mut projects: Vec<PathBuf> = cwd
                .ancestors()
                .map(|a| a.join(".opencode").join("themes"))
                .collect();
            projects.reverse();
            folders.extend(projects);
        }
        for folder in folders {
            catalog.add_folder(&folder);
        }
        catalog
    }

    fn add_folder(&mut self, folder: &Path) {
        let Ok(read) = std::fs::read_dir(folder) else {
            return;
        };
        let mut files: Vec<PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let name = name.to_string();
            self.entries.retain(|(n, _)| *n != name);
            self.entries.push((name, Source::File(path)));
        }
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
    }

    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// A theme by name, or a theme file by path (`.json` in OpenCode's
    /// format, `.toml` in ocview's over the default theme).
    pub fn load(&self, name_or_path: &str, mode: Mode) -> Result<Theme, String> {
        let shown = sanitize::line(name_or_path);
        if let Some((name, source)) = self.entries.iter().find(|(n, _)| n == name_or_path) {
            return match source {
                Source::BuiltIn(text) => Theme::from_opencode(name, text, mode),
                Source::File(path) => load_file(path, mode),
            }
            .map_err(|e| format!("theme {shown}: {e}"));
        }
        let path = Path::new(name_or_path);
        if path.is_file() {
            // Named by its path, so it can be loaded again (in the other
            // variant, or after the picker).
            return load_file(path, mode)
                .map(|mut t| {
                    t.name = name_or_path.to_string();
                    t
                })
                .map_err(|e| format!("theme {shown}: {e}"));
        }
        Err(format!(
            "theme {shown}: no such theme ({}) and no such file",
            self.names().join(", ")
        ))
    }
}

fn load_file(path: &Path, mode: Mode) -> Result<Theme, String> {
    let text = read_capped(path)?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if path.extension().is_some_and(|x| x == "toml") {
        return Theme::opencode_default(mode).with_toml(&text).map(|mut t| {
            t.name = name;
            t
        });
    }
    Theme::from_opencode(&name, &text, mode)
}

/// The largest theme or settings file read: OpenCode's own are a few KB,
/// and a project's folder may hold anything.
const MAX_FILE_BYTES: u64 = 1 << 20;

fn read_capped(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {} KiB", MAX_FILE_BYTES / 1024));
    }
    Ok(text)
}

/// The theme to show and, when something fixes it, the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub name: String,
    pub mode: Option<Mode>,
}

/// `asked` (the flag or ocview's config) if given, else the theme the user
/// chose in OpenCode, else OpenCode's default. ocview's old theme names
/// `dark` and `light` mean the default theme in that variant.
pub fn choose(asked: Option<&str>, dirs: &Dirs) -> Choice {
    let (opencode_theme, opencode_mode) = opencode_choice(dirs);
    match asked {
        Some("dark") => Choice {
            name: DEFAULT.into(),
            mode: Some(Mode::Dark),
        },
        Some("light") => Choice {
            name: DEFAULT.into(),
            mode: Some(Mode::Light),
        },
        Some(name) => Choice {
            name: name.into(),
            mode: opencode_mode,
        },
        None => Choice {
            name: opencode_theme.unwrap_or_else(|| DEFAULT.into()),
            mode: opencode_mode,
        },
    }
}

/// What OpenCode's own settings say: the `theme` of `tui.json` (or of the
/// older `opencode.json`), else the one its theme dialog stored in its
/// state (`kv.json`), and a variant locked there (`theme_mode_lock`).
pub fn opencode_choice(dirs: &Dirs) -> (Option<String>, Option<Mode>) {
    let read = |path: PathBuf| -> Option<serde_json::Value> {
        let text = read_capped(&path).ok()?;
        serde_json::from_str(&strip_jsonc(&text)).ok()
    };
    let string = |v: &serde_json::Value, key: &str| {
        v.get(key)
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let mut theme = None;
    if let Some(config) = &dirs.config {
        let dir = config.join("opencode");
        for file in ["tui.json", "tui.jsonc", "opencode.json", "opencode.jsonc"] {
            if let Some(t) = read(dir.join(file)).and_then(|v| string(&v, "theme")) {
                theme = Some(t);
                break;
            }
        }
    }
    let kv = dirs
        .state
        .as_ref()
        .and_then(|s| read(s.join("opencode").join("kv.json")));
    if theme.is_none() {
        theme = kv.as_ref().and_then(|v| string(v, "theme"));
    }
    let mode = kv
        .as_ref()
        .and_then(|v| string(v, "theme_mode_lock"))
        .and_then(|m| match m.as_str() {
            "dark" => Some(Mode::Dark),
            "light" => Some(Mode::Light),
            _ => None,
        });
    // "system" (OpenCode's theme made from the terminal's own palette) is
    // passed on like any other name: ocview lacks it, and says so.
    (theme, mode)
}

/// JSON with comments (OpenCode reads `.jsonc`, and comments in `.json`)
/// to plain JSON: `//` and `/* */` outside strings become spaces.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::theme::Role;

    #[test]
    fn every_bundled_theme_loads_clean_in_both_variants() {
        let catalog = Catalog::built_in();
        for name in catalog.names() {
            let dark = catalog.load(name, Mode::Dark).unwrap();
            let light = catalog.load(name, Mode::Light).unwrap();
            assert!(dark.warnings.is_empty(), "{name} dark: {:?}", dark.warnings);
            assert!(
                light.warnings.is_empty(),
                "{name} light: {:?}",
                light.warnings
            );
            for theme in [&dark, &light] {
                // lucent-orng is OpenCode's see-through theme: the
                // terminal's own background shows.
                let see_through = name == "lucent-orng";
                assert_eq!(
                    theme.paints_background(),
                    !see_through,
                    "{name} {:?}",
                    theme.mode
                );
                for role in [
                    Role::DiffAddLine,
                    Role::DiffDelLine,
                    Role::Match,
                    Role::MatchCurrent,
                ] {
                    let banded = !see_through || matches!(role, Role::Match | Role::MatchCurrent);
                    assert_eq!(theme.style(role).bg.is_some(), banded, "{name} {role:?}");
                }
            }
        }
    }

    /// The list compiled in is every file `scripts/opencode_themes.py`
    /// wrote, so a theme added by regenerating cannot be left out.
    #[test]
    fn every_theme_file_is_built_in() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".json").map(str::to_string)
            })
            .collect();
        files.sort();
        let built_in: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        assert_eq!(built_in, files);
        // OpenCode 1.18.33 ships 33 themes; `system` is made from the
        // terminal's palette at run time and has no file.
        assert_eq!(built_in.len(), 33);
    }

    #[test]
    fn files_are_found_and_a_nearer_one_wins() {
        let home = tempfile::tempdir().unwrap();
        let user = home.path().join("config/opencode/themes");
        let project = home.path().join("work/.opencode/themes");
        let sub = home.path().join("work/src");
        for d in [&user, &project, &sub] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(user.join("mine.json"), r##"{"theme":{"error":"#010101"}}"##).unwrap();
        std::fs::write(user.join("nord.json"), r##"{"theme":{"error":"#020202"}}"##).unwrap();
        std::fs::write(
            project.join("nord.json"),
            r##"{"theme":{"error":"#030303"}}"##,
        )
        .unwrap();
        std::fs::write(project.join("notes.txt"), "not a theme").unwrap();
        let dirs = Dirs {
            config: Some(home.path().join("config")),
            state: None,
            cwd: Some(sub),
        };
        std::fs::write(user.join("huge.json"), " ".repeat(2 << 20)).unwrap();
        let catalog = Catalog::discover(&dirs);
        assert!(catalog.names().contains(&"mine"));
        assert!(
            catalog
                .load("huge", Mode::Dark)
                .unwrap_err()
                .contains("larger than")
        );
        assert!(!catalog.names().contains(&"notes"));
        let error = |name: &str| {
            catalog
                .load(name, Mode::Dark)
                .unwrap()
                .style(Role::Error)
                .fg
        };
        assert_eq!(error("mine"), Some(ratatui::style::Color::Rgb(1, 1, 1)));
        assert_eq!(error("nord"), Some(ratatui::style::Color::Rgb(3, 3, 3)));
        assert!(
            catalog
                .load("no-such-theme", Mode::Dark)
                .unwrap_err()
                .contains("no such theme")
        );
        // An ocview TOML file by path restyles roles over the default.
        let toml = home.path().join("mine.toml");
        std::fs::write(&toml, "error = \"#040404\"").unwrap();
        let t = catalog.load(toml.to_str().unwrap(), Mode::Light).unwrap();
        assert_eq!(
            t.style(Role::Error).fg,
            Some(ratatui::style::Color::Rgb(4, 4, 4))
        );
        assert_eq!(
            t.style(Role::Text),
            Theme::opencode_default(Mode::Light).style(Role::Text)
        );
    }

    #[test]
    fn the_users_opencode_choice_is_the_default() {
        let home = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            config: Some(home.path().join("config")),
            state: Some(home.path().join("state")),
            cwd: None,
        };
        assert_eq!(choose(None, &dirs).name, DEFAULT);
        std::fs::create_dir_all(home.path().join("state/opencode")).unwrap();
        std::fs::write(
            home.path().join("state/opencode/kv.json"),
            r#"{"theme": "gruvbox", "theme_mode_lock": "light"}"#,
        )
        .unwrap();
        assert_eq!(
            choose(None, &dirs),
            Choice {
                name: "gruvbox".into(),
                mode: Some(Mode::Light)
            }
        );
        std::fs::create_dir_all(home.path().join("config/opencode")).unwrap();
        std::fs::write(
            home.path().join("config/opencode/tui.json"),
            "{\n // the look\n \"theme\": \"nord\", /* why: */ \"x\": \"a//b\"\n}",
        )
        .unwrap();
        assert_eq!(choose(None, &dirs).name, "nord");
        assert_eq!(choose(Some("tokyonight"), &dirs).name, "tokyonight");
        assert_eq!(
            choose(Some("light"), &dirs),
            Choice {
                name: DEFAULT.into(),
                mode: Some(Mode::Light)
            }
        );
    }
}
