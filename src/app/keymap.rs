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
    /// A list over the screen (the help, the prompt jump list, the whole
    /// prompt): it takes every key, so only its own bindings apply.
    List,
    /// The prompt bar, while it has focus (digits pick a question's
    /// options; the text editor takes keys as typed).
    Prompt,
    /// A question that needs a yes (allow always, stop an agent).
    Confirm,
    /// The diff overlay.
    Diff,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Sessions => "Session list",
            Context::Turns => "Turn view",
            Context::Player => "Replay player",
            Context::List => "Lists over the screen (help, prompt jump list, whole prompt)",
            Context::Prompt => "Prompt bar (1-9 pick an option)",
            Context::Confirm => "Confirmations",
            Context::Diff => "Diff view",
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
    Suspend => "suspend", Global, "suspend to the shell; fg resumes", ["ctrl-z"];
    Help => "help", Global, "show or hide this help", ["?", "f1"];
    FocusNext => "focus_next", Global, "switch focus between the list and the turns", ["tab", "backtab"];
    Filter => "filter", Global, "find sessions by title or content, with hit counts", ["/"];
    ToggleList => "session_list", Global, "show or hide the session list (a one-line bar when hidden or narrow)", ["s"];
    ToggleSidePanel => "side_panel", Global, "show or hide todos and modified files", ["t"];
    Back => "back", Global, "back: close an overlay, leave a child session", ["esc", "backspace"];
    Up => "up", Sessions, "previous session", ["k", "up"];
    Down => "down", Sessions, "next session", ["j", "down"];
    First => "first", Sessions, "first session", ["g", "home"];
    Last => "last", Sessions, "last session", ["G", "end"];
    Open => "open", Sessions, "open the session", ["enter", "l", "right"];
    ToggleTree => "toggle_tree", Sessions, "fold or unfold child sessions, or a heading's group", ["space", "h", "left"];
    DismissServer => "dismiss_server", Sessions, "forget a gone server and its sessions (on its heading)", ["x"];
    ReplayHistory => "replay_history", Sessions, "replay a session of opencode's database or the archive in the player", ["R"];
    Audit => "audit", Global, "every answer given to a prompt: who, when, what it showed", ["A"];
    Insights => "insights", Global, "insights: failures by model and tool, waits on people, cost (tab: which; 1-5: range)", ["I"];
    PinSession => "pin_session", Sessions, "pin the session in the archive: a prune never takes it (again: unpin)", ["M"];
    ScrollUp => "scroll_up", Turns, "scroll up a line", ["k", "up"];
    ScrollDown => "scroll_down", Turns, "scroll down a line", ["j", "down"];
    HalfPageUp => "half_page_up", Turns, "scroll up half a page", ["ctrl-u"];
    HalfPageDown => "half_page_down", Turns, "scroll down half a page", ["ctrl-d"];
    PageUp => "page_up", Turns, "scroll up a page", ["pageup", "ctrl-b"];
    PageDown => "page_down", Turns, "scroll down a page", ["pagedown", "ctrl-f"];
    Top => "top", Turns, "go to the first turn", ["g", "home"];
    Bottom => "bottom", Turns, "go to the end and follow new output", ["G", "end"];
    NextTurn => "next_turn", Turns, "next turn", ["]"];
    PrevTurn => "prev_turn", Turns, "previous turn", ["[", "p"];
    Search => "search", Turns, "search this session as you type (smart case; esc clears)", ["/"];
    SearchNext => "search_next", Turns, "next search match", ["n"];
    SearchPrev => "search_prev", Turns, "previous search match", ["N"];
    NextCard => "next_card", Turns, "select the next card", ["}", "J"];
    PrevCard => "prev_card", Turns, "select the previous card", ["{", "K"];
    ToggleCard => "toggle_card", Turns, "fold or unfold the selected card", ["space"];
    OpenCard => "open_card", Turns, "open a task's session, or fold the card", ["enter"];
    FullOutput => "full_output", Turns, "show the selected card whole, untrimmed", ["O"];
    ToggleReasoning => "toggle_reasoning", Turns, "fold or unfold all reasoning", ["r"];
    Times => "times", Global, "wall-clock times on every message", ["w"];
    PromptList => "prompt_list", Global, "jump list of the session's prompts, with their times", ["i"];
    CycleDetail => "detail", Global, "detail level: compact, normal, full", ["d"];
    Diffs => "diffs", Global, "modified files and their diffs", ["D"];
    Copy => "copy", Turns, "copy the card or message (1-9: a code block)", ["y"];
    CopySession => "copy_session", Global, "copy the whole session as Markdown", ["Y"];
    Pager => "pager", Turns, "open the card or message in $PAGER", ["o"];
    Editor => "editor", Turns, "open the card or message in $EDITOR", ["e"];
    Abort => "abort", Global, "stop the selected session's run (asks first)", ["X"];
    Themes => "themes", Global, "choose a theme (previewed; enter keeps it)", ["T"];
    Usage => "usage", Global, "what the sessions cost: by day, model, project, agent, tool (1-5: range; tab: list)", ["u"];
    ArchiveSearch => "archive_search", Sessions, "search every archived session, from every server and file", ["F"];
    BadRecord => "bad_record", Global, "show the last record that could not be read, and why the archive is off", ["!"];
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
    ListUp => "list_up", List, "previous entry", ["k", "up"];
    ListDown => "list_down", List, "next entry", ["j", "down"];
    ListPageUp => "list_page_up", List, "a page up", ["pageup", "ctrl-u"];
    ListPageDown => "list_page_down", List, "a page down", ["pagedown", "ctrl-d", "space"];
    ListTop => "list_top", List, "first entry", ["g", "home"];
    ListBottom => "list_bottom", List, "last entry", ["G", "end"];
    ListChoose => "list_choose", List, "go to the chosen entry", ["enter"];
    ListClose => "list_close", List, "close", ["esc", "q"];
    ListKind => "list_kind", List, "which list: answers (permissions, questions, both); insights (failures, waits, cost); usage (sessions, days, tools)", ["tab"];
    ListThisSession => "list_this_session", List, "answers on record: this session's only, or every session's", ["S"];
    ListSort => "list_sort", List, "failures: order by failed, rate, calls, model or tool", ["s"];
    PromptNext => "prompt_next", Prompt, "next waiting prompt", ["]", "ctrl-n"];
    PromptPrev => "prompt_prev", Prompt, "previous waiting prompt", ["[", "ctrl-p"];
    PromptSession => "prompt_session", Prompt, "go to the prompt's session", ["ctrl-g"];
    PromptView => "prompt_view", Prompt, "show the whole prompt", ["v"];
    AllowOnce => "allow_once", Prompt, "permission: allow once", ["y"];
    AllowAlways => "allow_always", Prompt, "permission: allow always (asks first)", ["a"];
    Reject => "reject", Prompt, "permission: reject", ["n"];
    RejectMessage => "reject_message", Prompt, "permission: reject with a message", ["m"];
    ChoiceLeft => "choice_left", Prompt, "previous choice, or previous question", ["left", "h"];
    ChoiceRight => "choice_right", Prompt, "next choice, or next question", ["right", "l"];
    OptionUp => "option_up", Prompt, "question: previous option", ["up", "k"];
    OptionDown => "option_down", Prompt, "question: next option", ["down", "j"];
    OptionToggle => "option_toggle", Prompt, "question: pick the option, or type your own", ["space"];
    PromptEnter => "prompt_enter", Prompt, "take the highlighted choice (a permission: view it until one is highlighted)", ["enter"];
    QuestionReview => "question_review", Prompt, "question: review, then send", ["s"];
    QuestionDismiss => "question_dismiss", Prompt, "question: dismiss", ["x"];
    PromptLater => "prompt_later", Prompt, "leave the bar; the prompt waits", ["esc"];
    Confirm => "confirm", Confirm, "yes: allow always, stop the agent", ["y"];
    Cancel => "cancel", Confirm, "no", ["n", "esc"];
    DiffNextFile => "diff_next_file", Diff, "next file", ["j", "down"];
    DiffPrevFile => "diff_prev_file", Diff, "previous file", ["k", "up"];
    DiffScrollDown => "diff_scroll_down", Diff, "scroll the diff down", ["ctrl-d"];
    DiffScrollUp => "diff_scroll_up", Diff, "scroll the diff up", ["ctrl-u"];
    DiffPageDown => "diff_page_down", Diff, "a page down", ["pagedown", "space"];
    DiffPageUp => "diff_page_up", Diff, "a page up", ["pageup"];
    DiffTop => "diff_top", Diff, "the diff's first line", ["g", "home"];
    DiffClose => "diff_close", Diff, "close", ["esc", "q", "D"];
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

/// A line of the help overlay: keys, what they do, the action's name.
pub type HelpRow = (String, &'static str, &'static str);

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
    /// replaces that action's keys. Errors name the offending entry; an
    /// action left with no key (`quit = []`) is one: it could never be
    /// done, and help would not list it.
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (name, keys) in overrides {
            let action = Action::ALL
                .iter()
                .copied()
                .find(|a| a.name() == name)
                .ok_or_else(|| format!("keys.{name}: no such action"))?;
            if keys.is_empty() {
                return Err(format!(
                    "keys.{name}: no key left for {name} (give it at least one, e.g. {name} = [\"{}\"])",
                    action.default_keys()[0]
                ));
            }
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

    /// The action for a key in a context that takes every key (a list over
    /// the screen): its own bindings only.
    pub fn only(&self, context: Context, key: Key) -> Option<Action> {
        self.bindings
            .iter()
            .find(|(a, keys)| a.context() == context && keys.contains(&key))
            .map(|(a, _)| *a)
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

    /// Help rows grouped by context, in table order: keys, what they do,
    /// and the action's name (for the config's `[keys]` table).
    pub fn help_rows(&self) -> Vec<(Context, Vec<HelpRow>)> {
        let mut groups: Vec<(Context, Vec<HelpRow>)> = Vec::new();
        for &ctx in &[
            Context::Global,
            Context::Sessions,
            Context::Turns,
            Context::Player,
            Context::List,
            Context::Prompt,
            Context::Confirm,
            Context::Diff,
        ] {
            let rows = Action::ALL
                .iter()
                .filter(|a| a.context() == ctx && !self.keys(**a).is_empty())
                .map(|&a| (self.describe(a), a.help(), a.name()))
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
        o.insert("quit".to_string(), vec![]);
        assert_eq!(
            Keymap::with_overrides(&o).unwrap_err(),
            "keys.quit: no key left for quit (give it at least one, e.g. quit = [\"q\"])"
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
