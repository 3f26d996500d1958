//! The reads the app makes: sessions, newest first, a page at a time, and
//! a session's message count. Each is one short statement; columns a
//! version lacks read as absent, and values of an unexpected type are read
//! leniently (a number stored as text still counts).

use rusqlite::Row;
use rusqlite::types::ValueRef;

use super::schema::{TOTALS_COLUMNS, quote};
use super::{Db, DbError};

/// The cost and tokens opencode stored for a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionTotals {
    pub cost: f64,
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// One row of `session`, as far as this schema has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub project_id: Option<String>,
    pub directory: Option<String>,
    pub title: Option<String>,
    pub version: Option<String>,
    pub time_created: Option<i64>,
    pub time_updated: Option<i64>,
    pub time_archived: Option<i64>,
    /// `None` where the schema has no totals columns (older versions).
    pub totals: Option<SessionTotals>,
}

/// Where a page of sessions ends: the next page starts after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCursor {
    pub time_updated: i64,
    pub id: String,
}

const ROW_COLUMNS: [&str; 9] = [
    "id",
    "parent_id",
    "project_id",
    "directory",
    "title",
    "version",
    "time_created",
    "time_updated",
    "time_archived",
];

impl Db {
    /// Up to `limit` sessions, most recently updated first, after `after`
    /// (the previous page's last row). Uses the columns this schema has.
    pub fn sessions(
        &self,
        limit: usize,
        after: Option<&SessionCursor>,
    ) -> Result<Vec<SessionRow>, DbError> {
        let order = self.session_order();
        match after {
            Some(c) => {
                let t = c.time_updated.to_string();
                self.sessions_where(
                    &format!("({order}, id) < (CAST(?1 AS INTEGER), ?2)"),
                    &[t.as_str(), c.id.as_str()],
                    limit,
                )
            }
            None => self.sessions_where("1", &[], limit),
        }
    }

    /// Up to `limit` sessions updated at or after `since` (all when
    /// `None`, or when this schema has no `time_updated`), most recently
    /// updated first, after `after`: what an import reads.
    pub fn sessions_from(
        &self,
        since: Option<i64>,
        limit: usize,
        after: Option<&SessionCursor>,
    ) -> Result<Vec<SessionRow>, DbError> {
        let order = self.session_order();
        let since = since.filter(|_| self.schema.has("session", "time_updated"));
        let s = since.unwrap_or(i64::MIN).to_string();
        let (t, id) = after.map_or((String::new(), String::new()), |c| {
            (c.time_updated.to_string(), c.id.clone())
        });
        let mut filter = format!("{order} >= CAST(?1 AS INTEGER)");
        if after.is_some() {
            filter.push_str(&format!(" AND ({order}, id) < (CAST(?2 AS INTEGER), ?3)"));
            self.sessions_where(&filter, &[s.as_str(), t.as_str(), id.as_str()], limit)
        } else {
            self.sessions_where(&filter, &[s.as_str()], limit)
        }
    }

    /// How many sessions `sessions_from(since, …)` reads in all.
    pub fn session_count_from(&self, since: Option<i64>) -> Result<u64, DbError> {
        let order = self.session_order();
        let since = since
            .filter(|_| self.schema.has("session", "time_updated"))
            .unwrap_or(i64::MIN);
        let sql = format!("SELECT count(*) FROM session WHERE {order} >= ?1");
        self.read(|conn| conn.query_row(&sql, [since], |r| r.get::<_, i64>(0)))
            .map(|n| n.max(0) as u64)
    }

    fn session_order(&self) -> &'static str {
        if self.schema.has("session", "time_updated") {
            "coalesce(time_updated, 0)"
        } else {
            // No time to order by: by id (newest ids first). Not the bare
            // literal `0`, which SQLite reads as "the 0th column" (an error).
            "abs(0)"
        }
    }

    /// Sessions matching `filter` (with `params`), most recently updated
    /// first, up to `limit`. Uses the columns this schema has.
    pub(super) fn sessions_where(
        &self,
        filter: &str,
        params: &[&str],
        limit: usize,
    ) -> Result<Vec<SessionRow>, DbError> {
        let s = &self.schema;
        let mut cols: Vec<String> = ROW_COLUMNS
            .iter()
            .map(|c| s.column_or_null("session", c))
            .collect();
        let totals = s.has_totals();
        if totals {
            cols.extend(TOTALS_COLUMNS.iter().map(|c| quote(c)));
        }
        let order = self.session_order();
        let sql = format!(
            "SELECT {} FROM session WHERE {filter} ORDER BY {order} DESC, id DESC LIMIT {limit}",
            cols.join(", ")
        );
        self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            let rows = st.query(rusqlite::params_from_iter(params.iter()))?;
            rows.mapped(|r| Ok(session_row(r, totals))).collect()
        })
    }

    /// How many sessions the database holds.
    pub fn session_count(&self) -> Result<u64, DbError> {
        self.read(|conn| conn.query_row("SELECT count(*) FROM session", [], |r| r.get::<_, i64>(0)))
            .map(|n| n.max(0) as u64)
    }

    /// How many messages `session` has; `None` when this database does
    /// not hold that session (it is some other machine's, or gone).
    pub fn message_count(&self, session: &str) -> Result<Option<u64>, DbError> {
        if !self.schema.has("message", "session_id") {
            return Err(DbError::Unsupported("message table".into()));
        }
        self.read(|conn| {
            let mut st = conn.prepare(
                "SELECT (SELECT count(*) FROM message WHERE session_id = ?1) \
                 FROM session WHERE id = ?1",
            )?;
            let mut rows = st.query([session])?;
            match rows.next()? {
                Some(r) => Ok(Some(r.get::<_, i64>(0)?.max(0) as u64)),
                None => Ok(None),
            }
        })
    }
}

fn session_row(r: &Row<'_>, totals: bool) -> SessionRow {
    let text = |i| lenient_text(r, i);
    let int = |i| lenient_int(r, i);
    SessionRow {
        id: text(0).unwrap_or_default(),
        parent_id: text(1).filter(|p| !p.is_empty()),
        project_id: text(2),
        directory: text(3),
        title: text(4),
        version: text(5),
        time_created: int(6),
        time_updated: int(7),
        time_archived: int(8),
        totals: totals.then(|| SessionTotals {
            cost: lenient_f64(r, 9).unwrap_or(0.0),
            input: lenient_count(r, 10),
            output: lenient_count(r, 11),
            reasoning: lenient_count(r, 12),
            cache_read: lenient_count(r, 13),
            cache_write: lenient_count(r, 14),
        }),
    }
}

/// A cell read whatever SQLite type it holds (older schemas and hand
/// edits store numbers as text and the other way round).
pub(super) fn lenient_text(r: &Row<'_>, i: usize) -> Option<String> {
    match r.get_ref(i).ok()? {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

pub(super) fn lenient_f64(r: &Row<'_>, i: usize) -> Option<f64> {
    match r.get_ref(i).ok()? {
        ValueRef::Integer(n) => Some(n as f64),
        ValueRef::Real(f) if f.is_finite() => Some(f),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

pub(super) fn lenient_int(r: &Row<'_>, i: usize) -> Option<i64> {
    match r.get_ref(i).ok()? {
        ValueRef::Integer(n) => Some(n),
        ValueRef::Real(f) if f.is_finite() => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn lenient_count(r: &Row<'_>, i: usize) -> u64 {
    lenient_int(r, i).unwrap_or(0).max(0) as u64
}
