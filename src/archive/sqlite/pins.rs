//! SQLite's pins (sessions a prune never takes) and migration 14.

use rusqlite::{Connection, params};

/// Migration 14's SQL.
pub const SQL: &str = "CREATE TABLE pins (
        session_id TEXT PRIMARY KEY,
        pinned_at INTEGER NOT NULL,
        host TEXT
    );";

pub(in crate::archive) fn pins(c: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = c.prepare("SELECT session_id FROM pins ORDER BY pinned_at, session_id")?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Pin or unpin `id`: whether anything changed.
pub(in crate::archive) fn set(
    c: &Connection,
    id: &str,
    pinned: bool,
    now_ms: i64,
    host: &str,
) -> rusqlite::Result<bool> {
    let changed = match pinned {
        true => c.execute(
            "INSERT INTO pins (session_id, pinned_at, host) VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id) DO NOTHING",
            params![id, now_ms, host],
        )?,
        false => c.execute("DELETE FROM pins WHERE session_id = ?1", [id])?,
    };
    Ok(changed > 0)
}
