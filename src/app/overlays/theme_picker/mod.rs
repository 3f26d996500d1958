//! The theme picker: every theme in a list, the screen behind it shown in
//! the highlighted one as the selection moves; enter keeps it (and writes
//! it to the config file), esc puts the old one back.

pub mod draw;

use std::path::Path;

use crossterm::event::KeyEvent;

use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::app::{App, Overlay};
use crate::render::theme::Theme;

pub struct ThemePicker {
    pub names: Vec<String>,
    pub index: usize,
    /// The theme shown when the picker opened, for esc.
    original: Theme,
}

impl App {
    pub fn open_theme_picker(&mut self) {
        let names: Vec<String> = self
            .look
            .catalog
            .names()
            .into_iter()
            .map(str::to_string)
            .collect();
        let index = names
            .iter()
            .position(|n| *n == self.theme.name)
            .unwrap_or(0);
        self.overlays.theme_picker = Some(ThemePicker {
            names,
            index,
            original: self.theme.clone(),
        });
        self.overlay = Some(Overlay::Themes);
    }

    /// Put back the theme the picker opened on, and close it.
    pub(crate) fn restore_theme(&mut self) {
        if let Some(picker) = self.overlays.theme_picker.take() {
            self.set_theme(picker.original);
        }
        self.overlay = None;
    }

    /// Show the theme the picker moved to.
    pub(crate) fn preview_theme(&mut self, name: &str) {
        match self.look.load(name) {
            Ok(theme) => self.set_theme(theme),
            Err(e) => self.notice = Some(e),
        }
    }

    pub(crate) fn keep_theme(&mut self) {
        self.overlay = None;
        let Some(picker) = self.overlays.theme_picker.take() else {
            return;
        };
        let name = picker.names[picker.index].clone();
        self.look.choice.name = name.clone();
        let Some(path) = self
            .config
            .path
            .clone()
            .or_else(crate::app::config::Config::default_path)
        else {
            return;
        };
        self.notice = Some(match save_theme(&path, &name) {
            Ok(()) => format!("theme {name} kept in {}", path.display()),
            Err(e) => format!("theme {name} not saved: {e}"),
        });
    }
}

/// Set `theme = "name"` in the config file at `path`, keeping the rest of
/// it as it is; the file (and its folder) is created when missing.
pub fn save_theme(path: &Path, name: &str) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let line = format!("theme = {}", toml::Value::String(name.to_string()));
    let updated = with_top_level_line(&text, "theme", &line);
    // Never write a file ocview would then refuse to start with.
    crate::app::config::Config::parse(&updated)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, updated).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, path).map_err(|e| e.to_string())
}

/// `text` with the top-level `key = …` line replaced by `line`, or `line`
/// added before the first table.
fn with_top_level_line(text: &str, key: &str, line: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let first_table = lines
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .unwrap_or(lines.len());
    let is_key = |l: &str| {
        l.trim_start()
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    match lines[..first_table].iter().position(|l| is_key(l)) {
        Some(i) => lines[i] = line.to_string(),
        None => lines.insert(first_table, line.to_string()),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

impl Component for ThemePicker {
    /// Move (previewing), keep, or go back; the picker's own key closes it
    /// as esc does.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let last = self.names.len().saturating_sub(1);
        let action = match cx.only(Context::List, &key) {
            _ if cx.is(Action::Themes, &key) => Action::ListClose,
            Some(a) => a,
            None => return Handled::Used,
        };
        let index = match action {
            Action::ListDown => (self.index + 1).min(last),
            Action::ListUp => self.index.saturating_sub(1),
            Action::ListPageDown => (self.index + 10).min(last),
            Action::ListPageUp => self.index.saturating_sub(10),
            Action::ListTop => 0,
            Action::ListBottom => last,
            Action::ListChoose => return Handled::Asks(Ask::KeepTheme),
            Action::ListClose => return Handled::Asks(Ask::RestoreTheme),
            _ => return Handled::Used,
        };
        if index == self.index {
            return Handled::Used;
        }
        self.index = index;
        Handled::Asks(Ask::PreviewTheme(self.names[index].clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_replaces_the_theme_line_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ocview/config.toml");
        save_theme(&path, "nord").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "theme = \"nord\"\n"
        );
        std::fs::write(
            &path,
            "# mine\nmouse = false\ntheme = \"dark\"\n\n[keys]\ntheme = [\"x\"]\n",
        )
        .ok();
        // `[keys] theme` is not the top-level key (and is no action: the
        // check refuses to write a broken file).
        assert!(save_theme(&path, "gruvbox").is_err());
        std::fs::write(&path, "# mine\nmouse = false\n\n[keys]\nquit = [\"x\"]\n").unwrap();
        save_theme(&path, "gruvbox").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\nmouse = false\n\ntheme = \"gruvbox\"\n[keys]\nquit = [\"x\"]\n"
        );
        save_theme(&path, "a \"quoted\" name").unwrap();
        let config =
            crate::app::config::Config::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(config.theme.as_deref(), Some("a \"quoted\" name"));
        assert!(!config.mouse);
    }
}
