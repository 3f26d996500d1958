//! The archive's sessions for the list: a page at a time, newest first,
//! each with the origin it was first seen at; one session again when a
//! writer says it changed; and whether anything was written since the last
//! look (SQLite's `data_version`). Each read is one short statement on an
//! index (`sessions_by_updated`), so 10,000 archived sessions list in pages
//! without holding the reader long.

use rusqlite::{OptionalExtension, params};

use super::engine::{ArchiveError, Engine};
use super::place::Setting;
use super::postgres::PgArchive;
use super::sqlite::SqliteArchive;

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

/// An archive that can list its sessions as well as do what every engine
/// does (open one, give its event log).
pub trait Listing: Engine {
    /// Sessions newest first, after `after` (the last of the page before).
    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError>;
    /// Sessions updated at or after `since` ms, newest first.
    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError>;
    /// One session, if the archive has it.
    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError>;
    /// A number that changes when another connection commits (SQLite's
    /// `data_version`); `None` where a writer says so itself (PostgreSQL's
    /// NOTIFY, `super::notify`).
    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError>;
}

/// Open the archive for listing; `None` when it is off.
pub fn open(setting: &Setting) -> Result<Option<Box<dyn Listing>>, ArchiveError> {
    Ok(match setting {
        Setting::Off => None,
        Setting::Sqlite(path) => Some(Box::new(SqliteArchive::open(path)?)),
        Setting::Postgres(url) => Some(Box::new(PgArchive::open(url)?)),
    })
}

const COLUMNS: &str = "id, raw, updated, server, host, file";

fn sqlite_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ListedSession> {
    Ok(ListedSession {
        id: r.get(0)?,
        raw: r.get(1)?,
        updated: r.get(2)?,
        server: r.get(3)?,
        host: r.get(4)?,
        file: r.get(5)?,
    })
}

impl Listing for SqliteArchive {
    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| super::sqlite::classify(&self.place, &e);
        let (updated, id) = match after {
            Some(c) => (Some(c.updated), c.id.as_str()),
            None => (None, ""),
        };
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM sessions
                 WHERE ?1 IS NULL OR updated < ?1 OR (updated = ?1 AND id < ?2)
                 ORDER BY updated DESC, id DESC LIMIT ?3"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![updated, id, limit], sqlite_row)
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| super::sqlite::classify(&self.place, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE updated >= ?1
                 ORDER BY updated DESC, id DESC LIMIT ?2"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![since, limit], sqlite_row)
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| super::sqlite::classify(&self.place, &e);
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                [id],
                sqlite_row,
            )
            .optional()
            .map_err(err)
    }

    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map(Some)
            .map_err(|e| super::sqlite::classify(&self.place, &e))
    }
}

fn pg_row(r: &tokio_postgres::Row) -> ListedSession {
    ListedSession {
        id: r.get(0),
        raw: r.get(1),
        updated: r.get(2),
        server: r.get(3),
        host: r.get(4),
        file: r.get(5),
    }
}

impl Listing for PgArchive {
    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let (updated, id) = match after {
            Some(c) => (Some(c.updated), c.id.clone()),
            None => (None, String::new()),
        };
        let limit = i64::from(limit);
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT {COLUMNS} FROM sessions
                     WHERE $1::bigint IS NULL OR (updated, id) < ($1, $2)
                     ORDER BY updated DESC, id DESC LIMIT $3"
                ),
                &[&updated, &id, &limit],
            ))
            .map_err(|e| super::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError> {
        let limit = i64::from(limit);
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT {COLUMNS} FROM sessions WHERE updated >= $1
                     ORDER BY updated DESC, id DESC LIMIT $2"
                ),
                &[&since, &limit],
            ))
            .map_err(|e| super::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError> {
        let row = self
            .rt
            .block_on(self.client.query_opt(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"),
                &[&id],
            ))
            .map_err(|e| super::postgres::classify(&self.place, &e))?;
        Ok(row.as_ref().map(pg_row))
    }

    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        Ok(None)
    }
}
