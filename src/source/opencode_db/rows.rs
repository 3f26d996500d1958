//! The reads behind a history session's content: its messages a page at a
//! time (newest first, as live paging does), their parts, what changed
//! since a time, its todos, its event log, and the projects' worktrees.
//! Each is one short statement; rows come back raw (the `data` JSON as
//! text), to be turned into events by `convert`.

use std::collections::HashMap;

use rusqlite::Row;
use rusqlite::types::ValueRef;

use super::{Db, DbError};

/// A `message` or `part` row: its ids, times and the `data` JSON (without
/// the ids) as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentRow {
    pub id: String,
    /// The message a part belongs to (empty for a message).
    pub message_id: String,
    pub session_id: String,
    pub time_created: i64,
    pub time_updated: i64,
    pub data: String,
}

/// Where a page of messages ends: the next older page starts before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageCursor {
    pub time_created: i64,
    pub id: String,
}

/// One row of the `event` log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub id: String,
    pub seq: i64,
    pub kind: String,
    pub data: String,
}

/// One todo of a session, in its position.
#[derive(Debug, Clone, PartialEq)]
pub struct TodoRow {
    pub content: String,
    pub status: String,
    pub priority: String,
}

/// SQLite's limit on bound parameters is far above this; a page's parts
/// are read in chunks of it.
const IN_CHUNK: usize = 500;

impl Db {
    fn need(&self, table: &str, columns: &[&str]) -> Result<(), DbError> {
        for c in columns {
            if !self.schema.has(table, c) {
                return Err(DbError::Unsupported(format!("{table}.{c} column")));
            }
        }
        Ok(())
    }

    /// Each project's worktree (its directory), by project id.
    pub fn project_worktrees(&self) -> Result<HashMap<String, String>, DbError> {
        if !self.schema.has("project", "worktree") {
            return Ok(HashMap::new());
        }
        self.read(|conn| {
            let mut st = conn.prepare("SELECT id, worktree FROM project")?;
            st.query_map([], |r| Ok((text(r, 0), text(r, 1))))?
                .collect()
        })
    }

    /// Up to `limit` of a session's messages before `before` (none: the
    /// newest), oldest first, with the cursor of the page's oldest.
    pub fn message_page(
        &self,
        session: &str,
        limit: usize,
        before: Option<&MessageCursor>,
    ) -> Result<Vec<ContentRow>, DbError> {
        self.need("message", &["id", "session_id", "data"])?;
        let created = self.schema.column_or_null("message", "time_created");
        let updated = self.schema.column_or_null("message", "time_updated");
        let mut sql = format!(
            "SELECT id, '', session_id, {created}, {updated}, data FROM message WHERE session_id = ?1"
        );
        if before.is_some() {
            sql.push_str(&format!(" AND (coalesce({created}, 0), id) < (?2, ?3)"));
        }
        sql.push_str(&format!(
            " ORDER BY coalesce({created}, 0) DESC, id DESC LIMIT {limit}"
        ));
        let mut rows = self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            let rows = match before {
                Some(c) => st.query(rusqlite::params![session, c.time_created, c.id])?,
                None => st.query([session])?,
            };
            rows.mapped(content_row).collect::<Result<Vec<_>, _>>()
        })?;
        rows.reverse();
        Ok(rows)
    }

    /// The parts of these messages, by message then id (display order).
    pub fn parts_of(&self, messages: &[&str]) -> Result<Vec<ContentRow>, DbError> {
        self.need("part", &["id", "message_id", "session_id", "data"])?;
        let created = self.schema.column_or_null("part", "time_created");
        let updated = self.schema.column_or_null("part", "time_updated");
        let mut out = Vec::new();
        for chunk in messages.chunks(IN_CHUNK) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = format!(
                "SELECT id, message_id, session_id, {created}, {updated}, data FROM part \
                 WHERE message_id IN ({marks}) ORDER BY message_id, id"
            );
            out.extend(self.read(|conn| {
                let mut st = conn.prepare(&sql)?;
                st.query_map(rusqlite::params_from_iter(chunk.iter()), content_row)?
                    .collect::<Result<Vec<_>, _>>()
            })?);
        }
        Ok(out)
    }

    /// A session's messages and parts written at or after `since` (their
    /// `time_updated`, ms), oldest first: what a follower reads again. At,
    /// not only after: a row committed later in the same millisecond as
    /// the last one read has that same time (the caller drops repeats).
    pub fn changed_since(
        &self,
        session: &str,
        since: i64,
    ) -> Result<(Vec<ContentRow>, Vec<ContentRow>), DbError> {
        self.need("message", &["id", "session_id", "data", "time_updated"])?;
        self.need(
            "part",
            &["id", "message_id", "session_id", "data", "time_updated"],
        )?;
        let read = |sql: &str| {
            self.read(|conn| {
                let mut st = conn.prepare(sql)?;
                st.query_map(rusqlite::params![session, since], content_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
        };
        let messages = read(
            "SELECT id, '', session_id, time_created, time_updated, data FROM message \
             WHERE session_id = ?1 AND time_updated >= ?2 ORDER BY id",
        )?;
        let parts = read(
            "SELECT id, message_id, session_id, time_created, time_updated, data FROM part \
             WHERE session_id = ?1 AND time_updated >= ?2 ORDER BY message_id, id",
        )?;
        Ok((messages, parts))
    }

    /// The session's todos in their order (none where the table is missing).
    pub fn todos(&self, session: &str) -> Result<Vec<TodoRow>, DbError> {
        if !self.schema.has("todo", "content") || !self.schema.has("todo", "session_id") {
            return Ok(Vec::new());
        }
        let s = &self.schema;
        let order = if s.has("todo", "position") {
            "position"
        } else {
            "rowid"
        };
        let sql = format!(
            "SELECT content, {}, {} FROM todo WHERE session_id = ?1 ORDER BY {order}",
            s.column_or_null("todo", "status"),
            s.column_or_null("todo", "priority"),
        );
        self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            st.query_map([session], |r| {
                Ok(TodoRow {
                    content: text(r, 0),
                    status: text(r, 1),
                    priority: text(r, 2),
                })
            })?
            .collect()
        })
    }

    /// The session's durable event log, in its order (`seq`).
    pub fn events_of(&self, session: &str) -> Result<Vec<EventRow>, DbError> {
        self.need("event", &["id", "aggregate_id", "type", "data"])?;
        let seq = if self.schema.has("event", "seq") {
            "seq"
        } else {
            "0"
        };
        let sql = format!(
            "SELECT id, {seq}, type, data FROM event WHERE aggregate_id = ?1 ORDER BY {seq}, id"
        );
        self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            st.query_map([session], |r| {
                Ok(EventRow {
                    id: text(r, 0),
                    seq: int(r, 1),
                    kind: text(r, 2),
                    data: text(r, 3),
                })
            })?
            .collect()
        })
    }

    /// One session's row, when the database holds it.
    pub fn session(&self, id: &str) -> Result<Option<super::SessionRow>, DbError> {
        Ok(self.sessions_where("id = ?1", &[id], 1)?.into_iter().next())
    }

    /// Sessions updated at or after `since` (ms), newest first: a
    /// follower's re-read of the list (at: a session written again in the
    /// millisecond last read keeps that time).
    pub fn sessions_updated_since(
        &self,
        since: i64,
        limit: usize,
    ) -> Result<Vec<super::SessionRow>, DbError> {
        if !self.schema.has("session", "time_updated") {
            return Ok(Vec::new());
        }
        let since = since.to_string();
        self.sessions_where(
            "time_updated >= CAST(?1 AS INTEGER)",
            &[since.as_str()],
            limit,
        )
    }
}

impl super::Db {
    /// The session table's largest rowid: a session imported while ocview
    /// follows keeps its old times, so only its new rowid shows it is new.
    pub fn session_rowid_max(&self) -> Result<i64, DbError> {
        self.read(|conn| {
            conn.query_row("SELECT coalesce(max(rowid), 0) FROM session", [], |r| {
                r.get(0)
            })
        })
    }

    /// Sessions added with a rowid in `(after, upto]`.
    pub fn sessions_added(
        &self,
        after: i64,
        upto: i64,
        limit: usize,
    ) -> Result<Vec<super::SessionRow>, DbError> {
        let (a, u) = (after.to_string(), upto.to_string());
        self.sessions_where(
            "rowid > CAST(?1 AS INTEGER) AND rowid <= CAST(?2 AS INTEGER)",
            &[a.as_str(), u.as_str()],
            limit,
        )
    }
}

fn content_row(r: &Row<'_>) -> rusqlite::Result<ContentRow> {
    Ok(ContentRow {
        id: text(r, 0),
        message_id: text(r, 1),
        session_id: text(r, 2),
        time_created: int(r, 3),
        time_updated: int(r, 4),
        data: text(r, 5),
    })
}

fn text(r: &Row<'_>, i: usize) -> String {
    match r.get_ref(i) {
        Ok(ValueRef::Text(t) | ValueRef::Blob(t)) => String::from_utf8_lossy(t).into_owned(),
        Ok(ValueRef::Integer(n)) => n.to_string(),
        Ok(ValueRef::Real(f)) => f.to_string(),
        _ => String::new(),
    }
}

fn int(r: &Row<'_>, i: usize) -> i64 {
    match r.get_ref(i) {
        Ok(ValueRef::Integer(n)) => n,
        Ok(ValueRef::Real(f)) if f.is_finite() => f as i64,
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}
