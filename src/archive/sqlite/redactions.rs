//! SQLite's record of what was redacted (`crate::archive::redacted`): per
//! part, message and title, each rule's count; a session's are summed.

use rusqlite::{Connection, Transaction, params};

use crate::archive::rows::Found;

/// Migration 13's SQL (the same table on PostgreSQL).
pub const SQL: &str = "CREATE TABLE redactions (
        item TEXT NOT NULL,
        rule TEXT NOT NULL,
        session_id TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (item, rule)
    );
    CREATE INDEX redactions_by_session ON redactions(session_id);";

/// What a batch's redaction found, each item's count replacing the one an
/// older state of it had.
pub(in crate::archive) fn save(tx: &Transaction<'_>, found: &[Found]) -> rusqlite::Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    let mut put = tx.prepare(
        "INSERT INTO redactions (item, rule, session_id, count) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (item, rule) DO UPDATE SET count = excluded.count",
    )?;
    for f in found {
        put.execute(params![f.item, f.rule, f.session_id, f.count as i64])?;
    }
    Ok(())
}

/// A session's redactions by rule (all sessions' with `None`), most first.
pub(in crate::archive) fn by_rule(
    c: &Connection,
    session_id: Option<&str>,
) -> rusqlite::Result<Vec<(String, u64)>> {
    let mut st = c.prepare(
        "SELECT rule, sum(count) FROM redactions WHERE ?1 IS NULL OR session_id = ?1
         GROUP BY rule ORDER BY 2 DESC, 1",
    )?;
    let rows = st.query_map([session_id], |r| {
        Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
    })?;
    rows.collect()
}
