//! Getting the user's attention when a prompt arrives or a watched session
//! finishes or fails: the bell and a desktop notification (OSC 9 or OSC
//! 777), once per event, and only while the terminal is not focused when
//! the terminal reports focus. Live sessions only: a replay never rings.

mod follow;
#[cfg(test)]
mod tests_about;

use std::collections::HashSet;

pub use crate::app::config::NotifyMode;

#[derive(Debug, Default)]
pub struct Attention {
    /// Events already announced (prompt ids, "session:status" keys).
    seen: HashSet<String>,
    /// Waiting to be written by the loop, after the next frame.
    pending: Vec<String>,
    /// `None` until the terminal reports focus.
    pub focused: Option<bool>,
    /// A bell is due (a prompt waits behind what the person is typing).
    bell: bool,
}

impl Attention {
    /// Announce `text` for event `key`, once.
    pub fn raise(&mut self, key: &str, text: String) {
        if !self.seen.insert(key.to_string()) {
            return;
        }
        if self.focused == Some(true) {
            return; // the user is looking
        }
        self.pending.push(text);
    }

    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }

    /// Ring the bell once for event `key`, even while the terminal has
    /// focus: the person is looking, but at something over the prompt.
    pub fn ring_once(&mut self, key: &str) {
        if self.seen.insert(format!("ring:{key}")) {
            self.bell = true;
        }
    }

    /// Whether a bell is due (once).
    pub fn take_bell(&mut self) -> bool {
        std::mem::take(&mut self.bell)
    }
}

/// A notification's words: the server (in a fleet), the session by its
/// title, and what happened there (`ocview: alpha:4096 · Fix the build:
/// permission: bash`). Several sessions may ask at once: the server alone
/// would not say which.
pub fn about(store: &crate::model::Store, session_id: &str, what: &str) -> String {
    use crate::model::store::fleet;
    let title = store
        .session(session_id)
        .map(|s| s.title().to_string())
        .unwrap_or_else(|| fleet::bare(session_id).to_string());
    let title = crate::render::wrap::truncate(&title, 60);
    match fleet::server_of(session_id) {
        Some(key) => format!("ocview: {key} · {title}: {what}"),
        None => format!("ocview: {title}: {what}"),
    }
}

/// The bytes that announce `text` in a mode. The text comes from the data,
/// so it is made inert as the screen makes it (control characters become
/// their visible pictures, bidi and invisible format characters go), and
/// `;` becomes `,` in OSC 777's fields.
pub fn sequence(mode: NotifyMode, text: &str) -> Vec<u8> {
    let clean: String = crate::model::wire::sanitize::line(text)
        .chars()
        .take(200)
        .collect();
    let bell = "\u{7}";
    let s = match mode {
        NotifyMode::Off => String::new(),
        NotifyMode::Bell => bell.to_string(),
        NotifyMode::Auto => format!("{bell}\u{1b}]9;{clean}\u{7}"),
        NotifyMode::Osc9 => format!("\u{1b}]9;{clean}\u{7}"),
        NotifyMode::Osc777 => format!("\u{1b}]777;notify;ocview;{}\u{7}", clean.replace(';', ",")),
    };
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_per_event_and_not_while_focused() {
        let mut a = Attention::default();
        a.raise("per_1", "permission".into());
        a.raise("per_1", "permission".into());
        assert_eq!(a.take(), ["permission"]);
        a.focused = Some(true);
        a.raise("per_2", "other".into());
        assert!(a.take().is_empty());
        a.focused = Some(false);
        a.raise("per_2", "other".into());
        assert!(
            a.take().is_empty(),
            "an event seen while focused is not announced later"
        );
    }

    #[test]
    fn sequences_carry_no_control_characters_from_the_data() {
        let evil = "rm\u{1b}]0;pwned\u{7} -rf; x";
        let s = String::from_utf8(sequence(NotifyMode::Osc777, evil)).unwrap();
        assert_eq!(s, "\u{1b}]777;notify;ocview;rm␛]0,pwned␇ -rf, x\u{7}");
        // What reorders or hides text on the screen does not reach the
        // desktop either: bidi overrides, isolates, zero-width spaces.
        let sneaky = "fix \u{202E}txt.exe\u{202C} \u{2066}a\u{2069}\u{200B}b\u{FEFF}";
        let s = String::from_utf8(sequence(NotifyMode::Osc9, sneaky)).unwrap();
        assert_eq!(s, "\u{1b}]9;fix txt.exe ab\u{7}");
        // Line and paragraph separators and NEL end no line of a desktop's.
        let s =
            String::from_utf8(sequence(NotifyMode::Osc9, "a\u{2028}b\u{2029}c\u{85}d")).unwrap();
        assert!(!s.contains(['\u{2028}', '\u{2029}', '\u{85}']), "{s:?}");
        assert!(s.contains('a') && s.contains('d'), "{s:?}");
        let s = String::from_utf8(sequence(NotifyMode::Auto, "hi")).unwrap();
        assert_eq!(s, "\u{7}\u{1b}]9;hi\u{7}");
        assert!(sequence(NotifyMode::Off, "x").is_empty());
    }
}
