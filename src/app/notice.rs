//! Notices go quiet: what the status line says in passing (a prompt
//! answered elsewhere, a key that does nothing, a theme replaced) leaves
//! after a few seconds; a notice that asks for an action stays until a key
//! is pressed, and says which key.

use std::time::Duration;

use tokio::time::Instant;

use crate::app::App;

/// How long a passing notice stays.
pub const NOTICE_TTL: Duration = Duration::from_secs(6);

/// When the notice on screen was first shown, and which one stays.
#[derive(Debug, Default)]
pub struct NoticeClock {
    shown: Option<(String, Instant)>,
    /// A notice that asks for an action: it stays until a key is pressed.
    pinned: Option<String>,
}

impl App {
    /// Say `text` until the next key press: it names the keys to press.
    pub fn pin_notice(&mut self, text: String) {
        self.notice_clock.pinned = Some(text.clone());
        self.notice = Some(text);
    }

    /// A key was pressed: a pinned notice has been read and now passes
    /// like any other.
    pub(crate) fn unpin_notice(&mut self) {
        self.notice_clock.pinned = None;
    }

    /// When the current notice leaves (`None`: no notice, or it stays).
    /// A notice is timed from the first time this sees it, so every place
    /// that sets one gets the same life without knowing about it.
    pub fn notice_expiry(&mut self, now: Instant) -> Option<Instant> {
        let Some(text) = &self.notice else {
            self.notice_clock.shown = None;
            return None;
        };
        if self.notice_clock.pinned.as_ref() == Some(text) {
            return None;
        }
        match &self.notice_clock.shown {
            Some((shown, since)) if shown == text => Some(*since + NOTICE_TTL),
            _ => {
                self.notice_clock.shown = Some((text.clone(), now));
                Some(now + NOTICE_TTL)
            }
        }
    }

    /// Drop the notice if its time has come. Returns whether it did.
    pub fn expire_notice(&mut self, now: Instant) -> bool {
        match self.notice_expiry(now) {
            Some(at) if at <= now => {
                self.notice = None;
                self.notice_clock.shown = None;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::config::Config;

    #[test]
    fn a_passing_notice_leaves_and_a_pinned_one_waits_for_a_key() {
        let mut app = App::new(Config::default(), "test", true).unwrap();
        let t0 = Instant::now();
        app.notice = Some("answered elsewhere".into());
        assert_eq!(app.notice_expiry(t0), Some(t0 + NOTICE_TTL));
        // Seen again later: still timed from its first sight.
        assert_eq!(
            app.notice_expiry(t0 + NOTICE_TTL / 2),
            Some(t0 + NOTICE_TTL)
        );
        assert!(!app.expire_notice(t0 + NOTICE_TTL / 2));
        assert!(app.expire_notice(t0 + NOTICE_TTL));
        assert_eq!(app.notice, None);
        // A new text starts its own time.
        app.notice = Some("one".into());
        app.notice_expiry(t0);
        app.notice = Some("two".into());
        assert_eq!(
            app.notice_expiry(t0 + NOTICE_TTL),
            Some(t0 + 2 * NOTICE_TTL)
        );

        app.pin_notice("press j".into());
        assert_eq!(app.notice_expiry(t0), None);
        assert!(!app.expire_notice(t0 + 10 * NOTICE_TTL));
        app.unpin_notice();
        let now = t0 + 10 * NOTICE_TTL;
        assert_eq!(app.notice_expiry(now), Some(now + NOTICE_TTL));
    }
}
