//! SQLite's counts of tool calls by model, tool and outcome, and the failed
//! calls of one model and tool (`crate::archive::tool_calls`).

use rusqlite::{Connection, params};

use crate::archive::engine::ArchiveError;
use crate::archive::sqlite::event_log::PartReader;
use crate::archive::sqlite::{SqliteArchive, classify};
use crate::archive::tool_calls::{
    CallCount, CallFilter, FAILED_SQL, FailedCall, OUTCOME_SQL, Outcome, error_of,
};

/// The tool calls a filter admits (its five values are `?1`…`?5`).
const CALLS: &str = "FROM parts p
     LEFT JOIN messages m ON m.id = p.message_id
     LEFT JOIN sessions s ON s.id = p.session_id
     WHERE p.kind = 'tool'
       AND (?1 IS NULL OR p.time >= ?1) AND (?2 IS NULL OR p.time < ?2)
       AND (?3 IS NULL OR s.directory = ?3) AND (?4 IS NULL OR s.host = ?4)
       AND (?5 IS NULL OR coalesce(m.model, '?') = ?5)";

pub(in crate::archive) fn counts(
    a: &mut SqliteArchive,
    f: &CallFilter,
) -> Result<Vec<CallCount>, ArchiveError> {
    // Counting goes on without them (a role that may read but not
    // write, a writer holding the lock): they count as `error` then.
    if let Err(e) = fill_errors(a) {
        tracing::info!("archive: tool call errors not read: {e}");
    }
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let sql = format!(
        "SELECT coalesce(m.model, '?'), coalesce(p.tool, '?'), {OUTCOME_SQL}, count(*)
         {CALLS} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    );
    let mut stmt = a.conn.prepare(&sql).map_err(err)?;
    let rows = stmt
        .query_map(
            params![f.since, f.until, f.project, f.machine, f.model],
            |r| {
                let outcome: String = r.get(2)?;
                Ok(CallCount {
                    model: r.get(0)?,
                    tool: r.get(1)?,
                    outcome: Outcome::from_name(&outcome).unwrap_or(Outcome::Unfinished),
                    calls: r.get::<_, i64>(3)?.max(0) as u64,
                })
            },
        )
        .map_err(err)?;
    rows.collect::<Result<_, _>>().map_err(err)
}

pub(in crate::archive) fn failed(
    a: &mut SqliteArchive,
    f: &CallFilter,
    model: &str,
    tool: &str,
    limit: u32,
) -> Result<Vec<FailedCall>, ArchiveError> {
    // Counting goes on without them (a role that may read but not
    // write, a writer holding the lock): they count as `error` then.
    if let Err(e) = fill_errors(a) {
        tracing::info!("archive: tool call errors not read: {e}");
    }
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let sql = format!(
        "SELECT p.session_id, p.message_id, p.id, p.time, {OUTCOME_SQL} AS outcome,
                coalesce(p.error, ''), coalesce(s.title, ''), s.server, s.host, s.file
         {CALLS} AND coalesce(m.model, '?') = ?6 AND coalesce(p.tool, '?') = ?7
           AND outcome IN {FAILED_SQL}
         ORDER BY p.time DESC, p.id DESC LIMIT ?8"
    );
    let mut stmt = a.conn.prepare(&sql).map_err(err)?;
    let rows = stmt
        .query_map(
            params![
                f.since, f.until, f.project, f.machine, f.model, model, tool, limit
            ],
            |r| {
                let outcome: String = r.get(4)?;
                Ok(FailedCall {
                    session_id: r.get(0)?,
                    message_id: r.get(1)?,
                    part_id: r.get(2)?,
                    time: r.get(3)?,
                    outcome: Outcome::from_name(&outcome).unwrap_or(Outcome::Error),
                    error: r.get(5)?,
                    title: r.get(6)?,
                    server: r.get(7)?,
                    host: r.get(8)?,
                    file: r.get(9)?,
                })
            },
        )
        .map_err(err)?;
    rows.collect::<Result<_, _>>().map_err(err)
}

/// The errors of failed calls written before schema 16, read from their
/// JSON once and kept in their rows ('' when the JSON says none). A
/// read-only archive is left as it is: its old errors count as `error`.
fn fill_errors(a: &mut SqliteArchive) -> Result<(), ArchiveError> {
    if a.read_only.is_some() {
        return Ok(());
    }
    let place = a.place.clone();
    let err = |e: rusqlite::Error| classify(&place, &e);
    // Read first (the partial index holds only these rows): no write
    // transaction when there is nothing to fill, as after the first time.
    let found = unread(&a.conn).map_err(err)?;
    if found.is_empty() {
        return Ok(());
    }
    let tx =
        rusqlite::Transaction::new_unchecked(&a.conn, rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
    {
        let mut keep = tx
            .prepare("UPDATE parts SET error = ?2 WHERE pk = ?1 AND error IS NULL")
            .map_err(err)?;
        for (pk, error) in found {
            keep.execute(params![pk, error]).map_err(err)?;
        }
    }
    tx.commit().map_err(err)
}

/// The failed calls whose error their row does not keep yet, with it.
fn unread(conn: &Connection) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare(
        "SELECT pk, raw, logged FROM parts
         WHERE kind = 'tool' AND error IS NULL AND (state = 'error' OR tool = 'invalid')",
    )?;
    let mut reader = PartReader::default();
    let mut found: Vec<(i64, String)> = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let raw = reader.raw(conn, r.get_ref(1)?, r.get(2)?)?;
        let error = serde_json::from_str::<serde_json::Value>(&raw)
            .ok()
            .and_then(|v| error_of(&v))
            .unwrap_or_default();
        found.push((r.get(0)?, error));
    }
    Ok(found)
}

pub(in crate::archive) fn prompt_waits(
    a: &mut SqliteArchive,
    f: &CallFilter,
) -> Result<Vec<crate::archive::prompt_waits::PromptWait>, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let sql = crate::archive::prompt_waits::waits_sql(|i| format!("?{i}"), false);
    let mut stmt = a.conn.prepare(&sql).map_err(err)?;
    let rows = stmt
        .query_map(params![f.since, f.until, f.project, f.machine], |r| {
            Ok(crate::archive::prompt_waits::PromptWait {
                request_id: r.get(0)?,
                session_id: r.get(1)?,
                title: r.get(2)?,
                project: r.get(3)?,
                kind: r.get(4)?,
                what: r.get(5)?,
                asked: r.get(6)?,
                settled: r.get(7)?,
                reply: r.get(8)?,
                by: r.get(9)?,
                machine: r.get(10)?,
                server: r.get(11)?,
                host: r.get(12)?,
                file: r.get(13)?,
            })
        })
        .map_err(err)?;
    rows.collect::<Result<_, _>>().map_err(err)
}
