//! Where each session's history stands: the server's cursor for the page
//! before the oldest one loaded, or the beginning reached; and the newest
//! message loaded, which a reconnect pages back to.
//!
//! The server pages back only through its own opaque cursors (the
//! `X-Next-Cursor` of the previous page); a bare message id in `before=` is
//! answered HTTP 400. A cursor names a place in the stored history, not a
//! connection (checked against a real server restarted mid-scroll in
//! tests/e2e/e2e_paging.rs): a reconnect keeps every cursor, so the pages
//! already loaded are not read again. Should the server refuse a kept
//! cursor anyway (400), it is forgotten and the history read again from
//! the newest page.
//!
//! Shared between the sync loop and a whole-history walk running beside it
//! (`walk.rs`), so every method takes `&self`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The next older page of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Older {
    /// Not known yet (no page loaded).
    Unknown,
    /// The cursor to send as `before=`.
    Cursor(String),
    /// The session's first message is loaded: there is none.
    None,
}

#[derive(Debug, Default)]
struct Session {
    /// `None` inside: the first message is loaded.
    older: Option<Option<String>>,
    /// The newest message id a page brought.
    newest: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Paging {
    sessions: Arc<Mutex<HashMap<String, Session>>>,
}

impl Paging {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        // A panic elsewhere while holding it leaves plain data: go on.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn older(&self, session: &str) -> Older {
        match self.lock().get(session).and_then(|s| s.older.clone()) {
            None => Older::Unknown,
            Some(Some(c)) => Older::Cursor(c),
            Some(None) => Older::None,
        }
    }

    /// The newest message a page brought (a reconnect pages back to it).
    pub fn newest(&self, session: &str) -> Option<String> {
        self.lock().get(session).and_then(|s| s.newest.clone())
    }

    /// The newest page (and any pages a reconnect read back to the messages
    /// already loaded) came, reaching back to `cursor`, its newest message
    /// `newest`. It moves the history back only when none is known:
    /// reloading the newest page (when a session goes idle, or after a
    /// reconnect) must not forget the older pages already loaded.
    pub fn newest_loaded(&self, session: &str, cursor: Option<String>, newest: Option<&str>) {
        let mut sessions = self.lock();
        let s = sessions.entry(session.to_string()).or_default();
        s.older.get_or_insert(cursor);
        if let Some(n) = newest
            && s.newest.as_deref().is_none_or(|old| old < n)
        {
            s.newest = Some(n.to_string());
        }
    }

    /// An older page came with `cursor` (`None`: it holds the first message).
    pub fn older_loaded(&self, session: &str, cursor: Option<String>) {
        self.lock().entry(session.to_string()).or_default().older = Some(cursor);
    }

    /// The server refused the kept cursor: page again from the newest page.
    pub fn forget(&self, session: &str) {
        if let Some(s) = self.lock().get_mut(session) {
            s.older = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_back_until_a_page_without_a_cursor() {
        let p = Paging::default();
        assert_eq!(p.older("s"), Older::Unknown);
        p.newest_loaded("s", Some("c1".into()), Some("m09"));
        assert_eq!(p.older("s"), Older::Cursor("c1".into()));
        p.older_loaded("s", Some("c2".into()));
        // The newest page again (finalisation, a reconnect): the history
        // stays where it was; the newest message moves on.
        p.newest_loaded("s", Some("c1".into()), Some("m12"));
        assert_eq!(p.older("s"), Older::Cursor("c2".into()));
        assert_eq!(p.newest("s").as_deref(), Some("m12"));
        p.older_loaded("s", None);
        assert_eq!(p.older("s"), Older::None);
        p.forget("s");
        assert_eq!(p.older("s"), Older::Unknown);
    }

    #[test]
    fn a_short_session_is_whole_from_its_newest_page() {
        let p = Paging::default();
        p.newest_loaded("s", None, Some("m1"));
        assert_eq!(p.older("s"), Older::None);
    }
}
