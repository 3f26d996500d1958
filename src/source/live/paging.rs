//! Where each session's history stands: the server's cursor for the page
//! before the oldest one loaded, or the beginning reached.
//!
//! The server pages back only through its own opaque cursors (the
//! `X-Next-Cursor` of the previous page); a bare message id in `before=` is
//! answered HTTP 400. Cursors belong to a connection: a resync forgets them
//! and pages again from the newest page.

use std::collections::HashMap;

/// The next older page of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Older {
    /// Not known yet (no page loaded on this connection).
    Unknown,
    /// The cursor to send as `before=`.
    Cursor(String),
    /// The session's first message is loaded: there is none.
    None,
}

#[derive(Debug, Default)]
pub struct Paging {
    sessions: HashMap<String, Option<String>>,
}

impl Paging {
    /// A new connection: every cursor is forgotten.
    pub fn clear(&mut self) {
        self.sessions.clear();
    }

    pub fn older(&self, session: &str) -> Older {
        match self.sessions.get(session) {
            None => Older::Unknown,
            Some(Some(c)) => Older::Cursor(c.clone()),
            Some(None) => Older::None,
        }
    }

    /// The newest page came with `cursor`. It moves the history back only
    /// when none is known: reloading the newest page (when a session goes
    /// idle) must not forget the older pages already loaded.
    pub fn newest_loaded(&mut self, session: &str, cursor: Option<String>) {
        self.sessions.entry(session.to_string()).or_insert(cursor);
    }

    /// An older page came with `cursor` (`None`: it holds the first message).
    pub fn older_loaded(&mut self, session: &str, cursor: Option<String>) {
        self.sessions.insert(session.to_string(), cursor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_back_until_a_page_without_a_cursor() {
        let mut p = Paging::default();
        assert_eq!(p.older("s"), Older::Unknown);
        p.newest_loaded("s", Some("c1".into()));
        assert_eq!(p.older("s"), Older::Cursor("c1".into()));
        p.older_loaded("s", Some("c2".into()));
        // The newest page again (finalisation): the history stays where it was.
        p.newest_loaded("s", Some("c1".into()));
        assert_eq!(p.older("s"), Older::Cursor("c2".into()));
        p.older_loaded("s", None);
        assert_eq!(p.older("s"), Older::None);
        p.clear();
        assert_eq!(p.older("s"), Older::Unknown);
    }

    #[test]
    fn a_short_session_is_whole_from_its_newest_page() {
        let mut p = Paging::default();
        p.newest_loaded("s", None);
        assert_eq!(p.older("s"), Older::None);
    }
}
