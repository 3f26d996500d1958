//! Keys are data: one table of (context, key, action) drives key matching,
//! the help overlay and the status-line hints. The config file can rebind
//! any action by name.

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies. `Global` bindings apply everywhere a more
/// specific context did not claim the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Sessions,
    Turns,
    /// Replaying a recording file: the player's keys, which clash with no
    /// other context's.
    Player,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Sessions => "Session list",
            Context::Turns => "Turn view",
            Context::Player => "Replay player",
        }
    }
}

macro_rules! actions {
    ($($variant:ident => $name:literal, $ctx:ident, $help:literal, [$($key:literal),*];)*) => {
        /// Everything a key can do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action { $($variant),* }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];

            /// The name used in the config file (`[keys]` table).
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name),* }
            }

            pub fn help(self) -> &'static str {
                match self { $(Action::$variant => $help),* }
            }

            pub fn context(self) -> Context {
                match self { $(Action::$variant => Context::$ctx),* }
            }

            fn default_keys(self) -> &'static [&'static str] {
                match self { $(Action::$variant => &[$($key),*]),* }
            }
        }
    };
}

actions! {
    Quit => "quit", Global, "quit", ["q", "ctrl-c"];
    Help => "help", Global, "show or hide this help", ["?"];
    FocusNext => "focus_next", Global, "switch focus between the list and the turns", ["tab", "backtab"];
    Filter => "filter", Global, "filter sessions by title", ["/"];
    ToggleSidePanel => "side_panel", Global, "show or hide todos and modified files", ["t"];
    Back => "back", Global, "back: close an overlay, leave a child session", ["esc", "backspace"];
    Up => "up", Sessions, "previous session", ["k", "up"];
    Down => "down", Sessions, "next session", ["j", "down"];
    First => "first", Sessions, "first session", ["g", "home"];
    Last => "last", Sessions, "last session", ["G", "end"];
    Open => "open", Sessions, "open the session", ["enter", "l", "right"];
    ToggleTree => "toggle_tree", Sessions, "fold or unfold child sessions", ["space", "h", "left"];
    ScrollUp => "scroll_up", Turns, "scroll up a line", ["k", "up"];
    ScrollDown => "scroll_down", Turns, "scroll down a line", ["j", "down"];
    HalfPageUp => "half_page_up", Turns, "scroll up half a page", ["ctrl-u"];
    HalfPageDown => "half_page_down", Turns, "scroll down half a page", ["ctrl-d"];
    PageUp => "page_up", Turns, "scroll up a page", ["pageup", "ctrl-b"];
    PageDown => "page_down", Turns, "scroll down a page", ["pagedown", "ctrl-f"];
    Top => "top", Turns, "go to the first turn", ["g", "home"];
    Bottom => "bottom", Turns, "go to the end and follow new output", ["G", "end"];
    NextTurn => "next_turn", Turns, "next turn", ["]", "n"];
    PrevTurn => "prev_turn", Turns, "previous turn", ["[", "p"];
    NextCard => "next_card", Turns, "select the next card", ["}", "J"];
    PrevCard => "prev_card", Turns, "select the previous card", ["{", "K"];
    ToggleCard => "toggle_card", Turns, "fold or unfold the selected card", ["space"];
    OpenCard => "open_card", Turns, "open a task's session, or fold the card", ["enter"];
    FullOutput => "full_output", Turns, "show the selected card whole, untrimmed", ["o"];
    ToggleReasoning => "toggle_reasoning", Turns, "fold or unfold all reasoning", ["r"];
    CycleDetail => "detail", Global, "detail level: compact, normal, full", ["d"];
    Diffs => "diffs", Global, "modified files and their diffs", ["D"];
    Themes => "themes", Global, "choose a theme (previewed; enter keeps it)", ["T"];
    PlayPause => "play_pause", Player, "play or pause", ["P"];
    Faster => "faster", Player, "faster: 0.25× … 64×, then instant", ["+", "="];
    Slower => "slower", Player, "slower", ["-"];
    StepForward => "step_forward", Player, "one event forward", ["."];
    StepBack => "step_back", Player, "one event back", [","];
    PartForward => "part_forward", Player, "one part forward", [">"];
    PartBack => "part_back", Player, "one part back", ["<"];
    TurnForward => "turn_forward", Player, "one turn forward", [")"];
    TurnBack => "turn_back", Player, "one turn back", ["("];
    SeekForward => "seek_forward", Player, "10 seconds forward", ["f"];
    SeekBack => "seek_back", Player, "10 seconds back", ["b"];
    SeekStart => "seek_start", Player, "go to the start", ["0"];
    SeekEnd => "seek_end", Player, "go to the end", ["$"];
    SeekTo => "seek_to", Player, "seek to a time or a percentage (1:30, 40%)", [":"];
}

/// One key with its modifiers, as written in the config: `j`, `G`,
/// `ctrl-d`, `alt-enter`, `pagedown`, `space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub code: KeyCodeOrd,
    pub ctrl: bool,
    pub alt: bool,
}

/// `KeyCode` subset that can be ordered and written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCodeOrd {
    Char(char),
    F(u8),
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Insert,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
}

const NAMED: &[(&str, KeyCodeOrd)] = &[
    ("enter", KeyCodeOrd::Enter),
    ("esc", KeyCodeOrd::Esc),
    ("tab", KeyCodeOrd::Tab),
    ("backtab", KeyCodeOrd::BackTab),
    ("backspace", KeyCodeOrd::Backspace),
    ("delete", KeyCodeOrd::Delete),
    ("insert", KeyCodeOrd::Insert),
    ("up", KeyCodeOrd::Up),
    ("down", KeyCodeOrd::Down),
    ("left", KeyCodeOrd::Left),
    ("right", KeyCodeOrd::Right),
    ("home", KeyCodeOrd::Home),
    ("end", KeyCodeOrd::End),
    ("pageup", KeyCodeOrd::PageUp),
    ("pagedown", KeyCodeOrd::PageDown),
    ("space", KeyCodeOrd::Char(' ')),
];

impl Key {
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = text;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-") {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = if let Some((_, code)) = NAMED.iter().find(|(n, _)| *n == rest) {
            *code
        } else if let Some(n) = rest.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            KeyCodeOrd::F(n)
        } else {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => KeyCodeOrd::Char(c),
                _ => return Err(format!("unknown key {text:?}")),
            }
        };
        Ok(Key { code, ctrl, alt })
    }

    /// The key a terminal event stands for; `None` for keys we never bind.
    pub fn from_event(ev: &KeyEvent) -> Option<Key> {
        let code = match ev.code {
            KeyCode::Char(c) => KeyCodeOrd::Char(c),
            KeyCode::F(n) => KeyCodeOrd::F(n),
            KeyCode::Enter => KeyCodeOrd::Enter,
            KeyCode::Esc => KeyCodeOrd::Esc,
            KeyCode::Tab => KeyCodeOrd::Tab,
            KeyCode::BackTab => KeyCodeOrd::BackTab,
            KeyCode::Backspace => KeyCodeOrd::Backspace,
            KeyCode::Delete => KeyCodeOrd::Delete,
            KeyCode::Insert => KeyCodeOrd::Insert,
            KeyCode::Up => KeyCodeOrd::Up,
            KeyCode::Down => KeyCodeOrd::Down,
            KeyCode::Left => KeyCodeOrd::Left,
            KeyCode::Right => KeyCodeOrd::Right,
            KeyCode::Home => KeyCodeOrd::Home,
            KeyCode::End => KeyCodeOrd::End,
            KeyCode::PageUp => KeyCodeOrd::PageUp,
            KeyCode::PageDown => KeyCodeOrd::PageDown,
            _ => return None,
        };
        // Shift is part of the character (`G`), not a modifier of its own.
        Some(Key {
            code,
            ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
            alt: ev.modifiers.contains(KeyModifiers::ALT),
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        if let Some((name, _)) = NAMED.iter().find(|(_, c)| *c == self.code) {
            return f.write_str(name);
        }
        match self.code {
            KeyCodeOrd::Char(c) => write!(f, "{c}"),
            KeyCodeOrd::F(n) => write!(f, "f{n}"),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// Per action, its keys in the order they were given (the first is shown
    /// in hints).
    bindings: BTreeMap<Action, Vec<Key>>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = Action::ALL
            .iter()
            .map(|&a| {
                let keys = a
                    .default_keys()
                    .iter()
                    .map(|k| Key::parse(k).expect("default keys parse"))
                    .collect();
                (a, keys)
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with the config's `[keys]` table applied: each entry
    /// replaces that action's keys. Errors name the offending entry.
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (name, keys) in overrides {
            let action = Action::ALL
                .iter()
                .copied()
                .find(|a| a.name() == name)
                .ok_or_else(|| format!("keys.{name}: no such action"))?;
            let parsed = keys
                .iter()
                .map(|k| Key::parse(k).map_err(|e| format!("keys.{name}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            map.bindings.insert(action, parsed);
        }
        Ok(map)
    }

    /// The action for a key in a context: the context's own bindings first,
    /// then the global ones, then the player's.
    pub fn action(&self, context: Context, key: Key) -> Option<Action> {
        let find = |ctx: Context| {
            self.bindings
                .iter()
                .find(|(a, keys)| a.context() == ctx && keys.contains(&key))
                .map(|(a, _)| *a)
        };
        find(context)
            .or_else(|| find(Context::Global))
            .or_else(|| find(Context::Player))
    }

    pub fn keys(&self, action: Action) -> &[Key] {
        self.bindings.get(&action).map(Vec::as_slice).unwrap_or(&[])
    }

    /// "j/down" for the help overlay.
    pub fn describe(&self, action: Action) -> String {
        let keys: Vec<String> = self.keys(action).iter().map(Key::to_string).collect();
        keys.join("/")
    }

    /// The first key of an action, for the status-line hints.
    pub fn hint(&self, action: Action) -> Option<String> {
        self.keys(action).first().map(Key::to_string)
    }

    /// Help rows grouped by context, in table order.
    pub fn help_rows(&self) -> Vec<(Context, Vec<(String, &'static str)>)> {
        let mut groups: Vec<(Context, Vec<(String, &'static str)>)> = Vec::new();
        for &ctx in &[
            Context::Global,
            Context::Sessions,
            Context::Turns,
            Context::Player,
        ] {
            let rows = Action::ALL
                .iter()
                .filter(|a| a.context() == ctx && !self.keys(**a).is_empty())
                .map(|&a| (self.describe(a), a.help()))
                .collect();
            groups.push((ctx, rows));
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        Key::parse(s).unwrap()
    }

    #[test]
    fn keys_parse_and_print_back() {
        for text in [
            "j",
            "G",
            "ctrl-d",
            "alt-enter",
            "pagedown",
            "space",
            "f5",
            "?",
            "/",
        ] {
            assert_eq!(key(text).to_string(), text);
        }
        assert!(Key::parse("ctrl-").is_err());
        assert!(Key::parse("hyper-x").is_err());
    }

    #[test]
    fn context_bindings_win_over_global_ones() {
        let map = Keymap::default();
        assert_eq!(map.action(Context::Sessions, key("j")), Some(Action::Down));
        assert_eq!(
            map.action(Context::Turns, key("j")),
            Some(Action::ScrollDown)
        );
        assert_eq!(map.action(Context::Turns, key("q")), Some(Action::Quit));
        assert_eq!(map.action(Context::Turns, key("x")), None);
    }

    #[test]
    fn overrides_replace_keys_and_name_bad_entries() {
        let mut o = BTreeMap::new();
        o.insert("quit".to_string(), vec!["x".to_string()]);
        let map = Keymap::with_overrides(&o).unwrap();
        assert_eq!(map.action(Context::Turns, key("x")), Some(Action::Quit));
        assert_eq!(map.action(Context::Turns, key("q")), None);
        assert_eq!(map.describe(Action::Quit), "x");

        o.insert("fly".to_string(), vec!["z".to_string()]);
        assert_eq!(
            Keymap::with_overrides(&o).unwrap_err(),
            "keys.fly: no such action"
        );
        let mut o = BTreeMap::new();
        o.insert("quit".to_string(), vec!["ctrl-nope".to_string()]);
        assert!(
            Keymap::with_overrides(&o)
                .unwrap_err()
                .starts_with("keys.quit: unknown key")
        );
    }

    #[test]
    fn player_keys_clash_with_no_other_key() {
        let map = Keymap::default();
        for &a in Action::ALL
            .iter()
            .filter(|a| a.context() == Context::Player)
        {
            for &k in map.keys(a) {
                for ctx in [Context::Global, Context::Sessions, Context::Turns] {
                    assert_eq!(map.action(ctx, k), Some(a), "{k} in {ctx:?}");
                }
            }
        }
    }

    #[test]
    fn every_action_has_a_default_key_and_help() {
        let map = Keymap::default();
        for &a in Action::ALL {
            assert!(!map.keys(a).is_empty(), "{a:?}");
            assert!(!a.help().is_empty());
        }
        let rows: usize = map.help_rows().iter().map(|(_, r)| r.len()).sum();
        assert_eq!(rows, Action::ALL.len());
    }
}
