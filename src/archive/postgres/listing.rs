//! PostgreSQL's listing of sessions (`crate::archive::listing`).

use crate::archive::engine::ArchiveError;
use crate::archive::listing::{COLUMNS, ListCursor, ListedSession};
use crate::archive::postgres::PgArchive;

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

impl PgArchive {
    pub(in crate::archive) fn read_page(
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
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    pub(in crate::archive) fn read_since(
        &mut self,
        since: i64,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
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
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    pub(in crate::archive) fn read_listed(
        &mut self,
        id: &str,
    ) -> Result<Option<ListedSession>, ArchiveError> {
        let row = self
            .rt
            .block_on(self.client.query_opt(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"),
                &[&id],
            ))
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(row.as_ref().map(pg_row))
    }

    pub(in crate::archive) fn read_change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        Ok(None)
    }
}
