//! Which theme, in which variant, at which colour depth: the flag or the
//! config, else the theme chosen in OpenCode; the variant the config fixes,
//! else the one OpenCode locked, else the terminal's background (OSC 11);
//! the depth from the environment. Changing any of them reloads the theme.

use std::time::Duration;

use crate::app::App;
use crate::app::config::Config;
use crate::app::terminal::color_depth::ColorDepth;
use crate::render::render_cache::RenderCache;
use crate::render::theme::catalog::{self, Catalog, Choice, Dirs};
use crate::render::theme::{Mode, Theme};

pub use crate::app::config::ModeSetting;

/// How long the terminal has to say its background colour. A terminal
/// that does not know the question usually says so at once (it answers
/// the device-attributes query sent after it); only a silent one costs
/// this much start-up time.
pub const BACKGROUND_TIMEOUT: Duration = Duration::from_millis(60);

#[derive(Debug, Clone)]
pub struct Look {
    pub catalog: Catalog,
    pub choice: Choice,
    /// Whether the theme was asked for (flag, config): one that cannot be
    /// loaded is then an error, not a quiet fallback.
    pub asked: bool,
    pub setting: ModeSetting,
    /// What the terminal said its background is.
    pub terminal: Option<Mode>,
    pub depth: ColorDepth,
}

impl Look {
    pub fn new(config: &Config) -> Look {
        let dirs = Dirs::from_env();
        Look {
            catalog: Catalog::discover(&dirs),
            choice: catalog::choose(config.theme.as_deref(), &dirs),
            asked: config.theme.is_some(),
            setting: config.theme_mode,
            terminal: None,
            depth: ColorDepth::TrueColor,
        }
    }

    /// The variant to read themes in.
    pub fn mode(&self) -> Mode {
        match self.setting {
            ModeSetting::Dark => Mode::Dark,
            ModeSetting::Light => Mode::Light,
            ModeSetting::Auto => self.choice.mode.or(self.terminal).unwrap_or_default(),
        }
    }

    /// Whether asking the terminal could change anything.
    pub fn wants_terminal_mode(&self) -> bool {
        self.setting == ModeSetting::Auto && self.choice.mode.is_none()
    }

    /// A theme by name in the current variant, made colourless for
    /// `NO_COLOR`.
    pub fn load(&self, name: &str) -> Result<Theme, String> {
        let theme = self.catalog.load(name, self.mode())?;
        Ok(if self.depth == ColorDepth::None {
            theme.without_color()
        } else {
            theme
        })
    }

    /// The chosen theme; one chosen in OpenCode that ocview lacks (or
    /// cannot read) falls back to the default, with a notice naming it.
    pub fn load_chosen(&self) -> Result<(Theme, Option<String>), String> {
        match self.load(&self.choice.name) {
            Ok(theme) => Ok((theme, None)),
            Err(e) if self.asked => Err(e),
            Err(e) => {
                tracing::warn!("{e}");
                let name = crate::model::wire::sanitize::line(&self.choice.name);
                let why = if self.catalog.names().contains(&self.choice.name.as_str()) {
                    "cannot be read (see the log)"
                } else {
                    "is not one ocview has"
                };
                let notice = format!(
                    "OpenCode's theme \"{name}\" {why}: showing {}",
                    catalog::DEFAULT
                );
                Ok((self.load(catalog::DEFAULT)?, Some(notice)))
            }
        }
    }
}

/// What the status line says about a theme with broken entries: the first
/// (naming its key) and how many more; each is logged.
pub fn warning_notice(theme: &Theme) -> Option<String> {
    let first = theme.warnings.first()?;
    for w in &theme.warnings {
        tracing::warn!("theme {}: {w}", theme.name);
    }
    let more = match theme.warnings.len() {
        1 => String::new(),
        n => format!(" (+{} more, see the log)", n - 1),
    };
    Some(format!("theme {}: {first}{more}", theme.name))
}

/// Ask the terminal for its background colour (OSC 11) and say whether it
/// is light or dark; `None` when it does not answer in time.
pub fn terminal_mode() -> Option<Mode> {
    let mut options = terminal_colorsaurus::QueryOptions::default();
    options.timeout = BACKGROUND_TIMEOUT;
    match terminal_colorsaurus::theme_mode(options) {
        Ok(terminal_colorsaurus::ThemeMode::Light) => Some(Mode::Light),
        Ok(terminal_colorsaurus::ThemeMode::Dark) => Some(Mode::Dark),
        Err(e) => {
            tracing::info!("terminal background unknown: {e}");
            None
        }
    }
}

impl App {
    /// Show `theme`: new code colours, everything rendered again.
    pub fn set_theme(&mut self, theme: Theme) {
        if let Some(notice) = warning_notice(&theme) {
            self.notice = Some(notice);
        }
        self.highlighter = self.highlighter.with_theme(&theme.syntax);
        self.cache = RenderCache::default();
        self.theme = theme;
    }

    /// Before the first frame: the terminal's background (if asked) and its
    /// colour depth. Reloads the theme when they change how it reads.
    pub fn adapt_to_terminal(&mut self, terminal: Option<Mode>, depth: ColorDepth) {
        let before = (self.look.mode(), self.look.depth);
        self.look.terminal = terminal;
        self.look.depth = depth;
        if before == (self.look.mode(), self.look.depth) {
            return;
        }
        match self.look.load(&self.theme.name.clone()) {
            Ok(theme) => self.set_theme(theme),
            Err(e) => tracing::warn!("{e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variant_comes_from_the_setting_then_the_lock_then_the_terminal() {
        let mut look = Look::new(&Config::default());
        look.choice = Choice {
            name: "nord".into(),
            mode: None,
        };
        assert_eq!(look.mode(), Mode::Dark);
        look.terminal = Some(Mode::Light);
        assert_eq!(look.mode(), Mode::Light);
        look.choice.mode = Some(Mode::Dark);
        assert_eq!(look.mode(), Mode::Dark);
        assert!(!look.wants_terminal_mode());
        look.setting = ModeSetting::Light;
        assert_eq!(look.mode(), Mode::Light);
    }

    #[test]
    fn the_terminal_reloads_a_theme_file_in_its_variant_and_depth() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.json");
        std::fs::write(
            &path,
            r##"{"theme": {"background": {"dark": "#000001", "light": "#fffffe"}}}"##,
        )
        .unwrap();
        let config = Config {
            theme: Some(path.to_str().unwrap().into()),
            ..Config::default()
        };
        let mut app = App::new(config, "test", true).unwrap();
        let bg = |app: &App| app.theme.style(crate::render::theme::Role::Background).bg;
        assert_eq!(bg(&app), Some(ratatui::style::Color::Rgb(0, 0, 1)));
        app.adapt_to_terminal(Some(Mode::Light), ColorDepth::TrueColor);
        assert_eq!(bg(&app), Some(ratatui::style::Color::Rgb(255, 255, 254)));
        app.adapt_to_terminal(Some(Mode::Light), ColorDepth::None);
        assert_eq!(bg(&app), None);
        assert_eq!(app.theme.name, path.to_str().unwrap());
    }

    #[test]
    fn a_theme_opencode_names_and_ocview_lacks_falls_back_with_a_notice() {
        let mut look = Look::new(&Config::default());
        look.choice = Choice {
            name: "system".into(),
            mode: None,
        };
        let (theme, notice) = look.load_chosen().unwrap();
        assert_eq!(theme.name, catalog::DEFAULT);
        assert_eq!(
            notice.as_deref(),
            Some("OpenCode's theme \"system\" is not one ocview has: showing opencode")
        );
        // Named by OpenCode and built in: no notice.
        look.choice.name = "tokyonight".into();
        let (theme, notice) = look.load_chosen().unwrap();
        assert_eq!((theme.name.as_str(), notice), ("tokyonight", None));
        // Asked for on ocview's own command line or config: an error.
        look.choice.name = "system".into();
        look.asked = true;
        assert!(look.load_chosen().is_err());
    }

    #[test]
    fn no_color_loads_a_colourless_theme() {
        let mut look = Look::new(&Config::default());
        look.depth = ColorDepth::None;
        let theme = look.load("nord").unwrap();
        assert!(!theme.paints_background());
    }
}
