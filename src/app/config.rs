//! The config file: `$XDG_CONFIG_HOME/ocview/config.toml`, or `--config PATH`.
//! Every setting is optional; `docs/config.md` lists them with their
//! defaults. Unknown keys are errors so a typo is caught, not ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::app::keymap::Keymap;

/// The `theme_mode` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeSetting {
    /// The terminal's background decides.
    #[default]
    Auto,
    Dark,
    Light,
}

/// The `colors` setting: `auto` follows the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorSetting {
    #[default]
    Auto,
    Truecolor,
    #[serde(rename = "256")]
    Ansi256,
    #[serde(rename = "16")]
    Ansi16,
    None,
}

/// How to copy (config `clipboard`, or `OCVIEW_CLIPBOARD`, which wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ClipboardMode {
    /// The system clipboard's program when one is reachable, else OSC 52.
    #[default]
    Auto,
    /// Always OSC 52 (over ssh, or when the local clipboard is not the one
    /// wanted).
    Osc52,
    /// Never copy.
    Off,
}

impl ClipboardMode {
    pub fn parse(text: &str) -> Option<ClipboardMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(ClipboardMode::Auto),
            "osc52" => Some(ClipboardMode::Osc52),
            "off" => Some(ClipboardMode::Off),
            _ => None,
        }
    }
}

/// How to notify (config `notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NotifyMode {
    /// The bell and an OSC 9 notification (iTerm2, WezTerm, Windows Terminal, kitty, foot…).
    #[default]
    Auto,
    /// The bell only.
    Bell,
    /// OSC 9 only.
    Osc9,
    /// OSC 777 (rxvt-unicode, some VTE terminals).
    Osc777,
    Off,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// A theme name (built in, or a file in an OpenCode themes folder) or a
    /// theme file's path. Unset: the theme chosen in OpenCode, else
    /// `opencode`. `dark` and `light` mean `opencode` in that variant.
    pub theme: Option<String>,
    /// Which variant of the theme: `auto` (the terminal's background),
    /// `dark` or `light`.
    pub theme_mode: ModeSetting,
    /// Colour depth: `auto` (from COLORTERM, TERM and NO_COLOR),
    /// `truecolor`, `256`, `16` or `none`.
    pub colors: ColorSetting,
    /// Mouse support: wheel scrolling and clicks.
    pub mouse: bool,
    /// At this many columns or more the side panel sits beside the turns
    /// (by itself when it has something to show and the turns keep 80
    /// columns; always when asked for with its key); below it, it is an
    /// overlay toggled with its key.
    pub side_panel_min_width: u16,
    /// The most columns the session list takes (it is as narrow as the
    /// titles in view allow, and at most a third of the screen). Unset: it
    /// grows with the terminal, 34 columns up to a quarter of it, while the
    /// turns keep 130 columns.
    pub session_list_width: Option<u16>,
    /// Fold reasoning parts to one line by default.
    pub collapse_reasoning: bool,
    /// Replay: the longest pause between two recorded events, in seconds;
    /// longer idle gaps are shortened to it.
    pub replay_max_gap_secs: f64,
    /// Attention when a prompt arrives or a watched session finishes or
    /// fails: `auto` (bell and OSC 9), `bell`, `osc9`, `osc777`, `off`.
    pub notify: NotifyMode,
    /// How long a prompt that took focus shows before it takes an answer,
    /// in milliseconds: keys typed for the previous prompt must not answer
    /// one the user has not seen.
    pub prompt_arming_ms: u64,
    /// Until you navigate, the turn view shows the session that asks for an
    /// answer or was last active (`--follow`).
    pub follow_attention: bool,
    /// Show prompts but never answer them, nor stop a session, whatever
    /// the command (`--read-only`).
    pub read_only: bool,
    /// Servers `ocview` (no subcommand) and `ocview discover` look at
    /// besides the ones they find by themselves (`http://host:port`).
    pub servers: Vec<String>,
    /// Servers to watch together (`[[server]]` tables): `ocview` with no
    /// subcommand attaches to them all, with the ones it finds.
    #[serde(rename = "server")]
    pub fleet: Vec<ServerConfig>,
    /// Below this many columns the session list folds to a one-line bar
    /// (its key shows or hides it at any width).
    pub session_list_fold_width: u16,
    /// How `y` copies: `auto` (the system clipboard's program when one is
    /// reachable, else OSC 52), `osc52`, `off`. `OCVIEW_CLIPBOARD` wins.
    pub clipboard: ClipboardMode,
    /// The archive of every session seen: `true` (the default,
    /// `$XDG_DATA_HOME/ocview/archive.db`), `false`, a file, or a
    /// `postgres://` URL (no password in it: ~/.pgpass or $PGPASSWORD).
    pub archive: Option<crate::archive::place::ConfigValue>,
    /// The archive's size cap in MB (default 2048; 0: none) and age limit
    /// in days (default 365; 0: none): past either, its least recently
    /// updated sessions are pruned whole.
    pub archive_max_mb: Option<u64>,
    pub archive_max_age_days: Option<u64>,
    /// The viewer imports this machine's opencode database into the
    /// archive and follows it (`--no-archive-opencode-db` turns it off).
    pub archive_opencode_db: bool,
    /// Which archives secrets are redacted out of before they are written:
    /// `shared` (a team's PostgreSQL, the default), `all` (the local one
    /// too) or `off`.
    pub archive_redact: crate::redact::Policy,
    /// Rebind actions: `quit = ["q", "ctrl-c"]`. See the help overlay (`?`)
    /// for the action names.
    pub keys: BTreeMap<String, Vec<String>>,
    /// The file this was read from (the theme picker writes its choice
    /// there).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: None,
            theme_mode: Default::default(),
            colors: Default::default(),
            mouse: true,
            side_panel_min_width: 120,
            session_list_width: None,
            collapse_reasoning: true,
            replay_max_gap_secs: 2.0,
            notify: Default::default(),
            prompt_arming_ms: 500,
            follow_attention: false,
            read_only: false,
            servers: Vec::new(),
            fleet: Vec::new(),
            session_list_fold_width: 100,
            clipboard: Default::default(),
            archive: None,
            archive_max_mb: None,
            archive_max_age_days: None,
            archive_opencode_db: true,
            archive_redact: Default::default(),
            keys: BTreeMap::new(),
            path: None,
        }
    }
}

/// One `[[server]]` of the config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// What the list calls it (default: its `host:port`).
    pub name: Option<String>,
    pub url: String,
    /// Basic-auth user (default `opencode`, with a password).
    pub user: Option<String>,
    /// A file whose first line is the basic-auth password.
    pub password_file: Option<PathBuf>,
    /// Every project of the server (`/global/event`), not only its own.
    #[serde(default)]
    pub all: bool,
}

/// A config that could not be used, with the file and the key at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}: {source}", shown(path))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config {}: {message}", shown(path))]
    Invalid { path: PathBuf, message: String },
}

/// A path as a message shows it: inert, like any text from outside.
fn shown(path: &Path) -> String {
    crate::model::wire::sanitize::line(&path.display().to_string()).into_owned()
}

impl Config {
    /// The default location, honouring `XDG_CONFIG_HOME`.
    pub fn default_path() -> Option<PathBuf> {
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| dirs::home_dir().map(|h| h.join(".config")))
            .map(|d| d.join("ocview").join("config.toml"))
    }

    /// Load `explicit` (which must exist) or the default file (which may not).
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => match Config::default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => match Config::parse(&text) {
                Ok(config) => Ok(Config {
                    path: Some(path),
                    ..config
                }),
                Err(message) => Err(ConfigError::Invalid { path, message }),
            },
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(Config {
                path: Some(path),
                ..Config::default()
            }),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }

    /// The config in `text`, or why not. The reason may quote the file
    /// (toml shows the line at fault, keys name themselves), so it is made
    /// inert before anyone shows it.
    pub fn parse(text: &str) -> Result<Config, String> {
        Config::parse_unchecked(text)
            .map_err(|e| crate::model::wire::sanitize::line(&e).into_owned())
    }

    fn parse_unchecked(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| {
            // toml's message names the key and shows the line; keep it whole
            // but on one line for the status line.
            e.to_string().trim().replace('\n', " ")
        })?;
        config.keymap()?;
        if let Some(crate::archive::place::ConfigValue::At(value)) = &config.archive {
            crate::archive::place::parse(value, "archive")?;
        }
        if !(0.0..=3600.0).contains(&config.replay_max_gap_secs) {
            return Err("replay_max_gap_secs: must be between 0 and 3600".into());
        }
        Ok(config)
    }

    pub fn keymap(&self) -> Result<Keymap, String> {
        Keymap::with_overrides(&self.keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
    }

    #[test]
    fn settings_and_keys_apply() {
        let c =
            Config::parse("theme = \"light\"\nmouse = false\n[keys]\nquit = [\"x\"]\n").unwrap();
        assert_eq!(c.theme.as_deref(), Some("light"));
        assert!(!c.mouse);
        assert_eq!(
            c.keymap()
                .unwrap()
                .describe(super::super::keymap::Action::Quit),
            "x"
        );
        let c = Config::parse("theme_mode = \"light\"\ncolors = \"256\"").unwrap();
        assert_eq!(c.theme_mode, ModeSetting::Light);
        assert_eq!(c.colors, ColorSetting::Ansi256);
        assert!(
            Config::parse("colors = \"lots\"")
                .unwrap_err()
                .contains("colors")
        );
    }

    #[test]
    fn read_only_is_a_setting() {
        assert!(Config::parse("read_only = true").unwrap().read_only);
        assert!(!Config::parse("").unwrap().read_only);
        let e = Config::parse("read_only = \"yes\"").unwrap_err();
        assert!(e.contains("read_only"), "{e}");
    }

    #[test]
    fn archive_redact_is_shared_all_or_off() {
        use crate::redact::Policy;
        assert_eq!(Config::parse("").unwrap().archive_redact, Policy::Shared);
        for (text, policy) in [
            ("shared", Policy::Shared),
            ("all", Policy::All),
            ("off", Policy::Off),
        ] {
            let c = Config::parse(&format!("archive_redact = \"{text}\"")).unwrap();
            assert_eq!(c.archive_redact, policy);
        }
        let e = Config::parse("archive_redact = \"some\"").unwrap_err();
        assert!(e.to_string().contains("archive_redact"), "{e}");
        // A team archive is redacted by default, the local one is not.
        assert!(Policy::Shared.redacts(true) && !Policy::Shared.redacts(false));
        assert!(Policy::All.redacts(false) && !Policy::Off.redacts(true));
    }

    #[test]
    fn archive_is_on_off_a_file_or_a_server_without_password() {
        use crate::archive::place::ConfigValue;
        assert_eq!(Config::parse("").unwrap().archive, None);
        assert_eq!(
            Config::parse("archive = false").unwrap().archive,
            Some(ConfigValue::On(false))
        );
        assert_eq!(
            Config::parse("archive = \"postgres://me@db/arch\"")
                .unwrap()
                .archive,
            Some(ConfigValue::At("postgres://me@db/arch".into()))
        );
        let e = Config::parse("archive = \"postgres://me:hunter2@db/arch\"").unwrap_err();
        assert!(e.contains("password") && !e.contains("hunter2"), "{e}");
        assert!(
            Config::parse("archive = 3")
                .unwrap_err()
                .contains("archive")
        );
    }

    #[test]
    fn servers_are_a_list_of_urls() {
        let c = Config::parse("servers = [\"http://10.0.0.5:4096\", \"http://box:4097\"]").unwrap();
        assert_eq!(c.servers, ["http://10.0.0.5:4096", "http://box:4097"]);
        assert!(
            Config::parse("servers = \"http://x:1\"")
                .unwrap_err()
                .contains("servers")
        );
    }

    #[test]
    fn server_tables_make_a_fleet() {
        let c = Config::parse(
            "[[server]]\nurl = \"http://a:1\"\nname = \"api\"\n\n[[server]]\nurl = \"http://b:2\"\nuser = \"me\"\npassword_file = \"/run/pw\"\nall = true\n",
        )
        .unwrap();
        assert_eq!(c.fleet.len(), 2);
        assert_eq!(c.fleet[0].name.as_deref(), Some("api"));
        assert!(c.fleet[1].all && c.fleet[1].user.as_deref() == Some("me"));
        assert!(
            Config::parse("[[server]]\nurl = \"http://a:1\"\npassword = \"x\"\n")
                .unwrap_err()
                .contains("password")
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::parse("mouse = \"yes\"").unwrap_err();
        assert!(e.contains("mouse"), "{e}");
        let e = Config::parse("colour = 1").unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = Config::parse("[keys]\nquit = [\"ctrl-\"]").unwrap_err();
        assert!(e.contains("keys.quit"), "{e}");
        let e = Config::parse("replay_max_gap_secs = -1").unwrap_err();
        assert!(e.contains("replay_max_gap_secs"), "{e}");
    }

    #[test]
    fn an_action_left_without_a_key_is_refused_by_name() {
        let e = Config::parse("[keys]\nquit = []").unwrap_err();
        assert!(e.starts_with("keys.quit: no key left for quit"), "{e}");
        let e = Config::parse("[keys]\nquit = [\"x\"]\nhelp = []").unwrap_err();
        assert!(e.starts_with("keys.help: no key left"), "{e}");
    }

    #[test]
    fn errors_quoting_the_file_are_inert() {
        // toml quotes the line at fault; a key names itself.
        for text in [
            "mouse = \"\u{1b}]0;pwned\u{7}\u{1b}[2J\"",
            "mouse = \"\u{202E}eurt\"",
            "[keys]\n\"\u{1b}[31mq\u{202E}\" = [\"x\"]",
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(
                !e.chars().any(|c| c.is_control()
                    || ('\u{2066}'..='\u{2069}').contains(&c)
                    || ('\u{202A}'..='\u{202E}').contains(&c)),
                "{e:?}"
            );
            assert!(e.contains('␛') || e.contains("eurt"), "{e:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evil\u{1b}[2J.toml");
        std::fs::write(&path, "mouse = 1").unwrap();
        let e = Config::load(Some(&path)).unwrap_err().to_string();
        assert!(
            e.contains("evil␛[2J.toml") && !e.contains('\u{1b}'),
            "{e:?}"
        );
    }

    #[test]
    fn a_missing_default_file_is_fine_but_a_missing_explicit_one_is_not() {
        let dir = std::env::temp_dir().join("ocview-no-such-dir");
        assert!(Config::load(Some(&dir.join("config.toml"))).is_err());
    }
}
