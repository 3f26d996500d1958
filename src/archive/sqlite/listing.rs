//! SQLite's listing of sessions (`crate::archive::listing`).

use rusqlite::{OptionalExtension, params};

use crate::archive::engine::ArchiveError;
use crate::archive::listing::{COLUMNS, ListCursor, ListedSession};
use crate::archive::sqlite::SqliteArchive;

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

impl SqliteArchive {
    pub(in crate::archive) fn read_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
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

    pub(in crate::archive) fn read_since(
        &mut self,
        since: i64,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
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

    pub(in crate::archive) fn read_listed(
        &mut self,
        id: &str,
    ) -> Result<Option<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                [id],
                sqlite_row,
            )
            .optional()
            .map_err(err)
    }

    pub(in crate::archive) fn read_change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map(Some)
            .map_err(|e| crate::archive::sqlite::classify(&self.place, &e))
    }
}
