//! The archive's sessions for the list (the `Engine` methods `list_page`,
//! `list_since`, `listed`, `change_mark`; each engine's SQL beside its
//! `Engine` impl): a page at a time, newest first,
//! each with the origin it was first seen at; one session again when a
//! writer says it changed; and whether anything was written since the last
//! look (SQLite's `data_version`). Each read is one short statement on an
//! index (`sessions_by_updated`), so 10,000 archived sessions list in pages
//! without holding the reader long.

/// One archived session as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSession {
    pub id: String,
    /// The session's info object as last kept (a `session.updated`'s).
    pub raw: String,
    pub updated: i64,
    pub server: Option<String>,
    pub host: Option<String>,
    pub file: Option<String>,
}

/// Where the background listing goes on: the last row of the page before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCursor {
    pub updated: i64,
    pub id: String,
}

impl ListedSession {
    pub fn cursor(&self) -> ListCursor {
        ListCursor {
            updated: self.updated,
            id: self.id.clone(),
        }
    }
}

pub(in crate::archive) const COLUMNS: &str = "id, raw, updated, server, host, file";

/// What a listener heard (`Setting::listen`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// Listening (again): what was written while not listening is unknown.
    Connected,
    /// This session was written.
    Session(String),
    /// Many sessions were written: read what is new.
    Many,
    /// The connection dropped (why); it is made again.
    Lost(String),
}
