//! PostgreSQL's counts of tool calls by model, tool and outcome, and the
//! failed calls of one model and tool (`crate::archive::tool_calls`), as
//! SQLite's.

use tokio_postgres::types::ToSql;

use crate::archive::engine::ArchiveError;
use crate::archive::postgres::search::query;
use crate::archive::postgres::{PgArchive, classify};
use crate::archive::tool_calls::{
    CallCount, CallFilter, FAILED_SQL, FailedCall, OUTCOME_SQL, Outcome, SINCE, error_of,
};

/// The tool calls a filter admits (its five values are `$1`…`$5`).
const CALLS: &str = "FROM parts p
     LEFT JOIN messages m ON m.id = p.message_id
     LEFT JOIN sessions s ON s.id = p.session_id
     WHERE p.kind = 'tool'
       AND ($1::bigint IS NULL OR p.time >= $1) AND ($2::bigint IS NULL OR p.time < $2)
       AND ($3::text IS NULL OR s.directory = $3) AND ($4::text IS NULL OR s.host = $4)
       AND ($5::text IS NULL OR coalesce(m.model, '?') = $5)";

/// The outcome in SQL, for an archive of this schema (before 16 no row
/// keeps its error: a failed call is an `error`).
fn outcome_sql(a: &PgArchive) -> String {
    if a.version >= SINCE {
        OUTCOME_SQL.to_string()
    } else {
        OUTCOME_SQL.replace("p.error", "NULL::text")
    }
}

fn filter_args(f: &CallFilter) -> Vec<Box<dyn ToSql + Sync + Send>> {
    vec![
        Box::new(f.since),
        Box::new(f.until),
        Box::new(f.project.clone()),
        Box::new(f.machine.clone()),
        Box::new(f.model.clone()),
    ]
}

pub(in crate::archive) fn counts(
    a: &mut PgArchive,
    f: &CallFilter,
) -> Result<Vec<CallCount>, ArchiveError> {
    // Counting goes on without them (a role that may read but not
    // write, a writer holding the lock): they count as `error` then.
    if let Err(e) = fill_errors(a) {
        tracing::info!("archive: tool call errors not read: {e}");
    }
    let sql = format!(
        "SELECT coalesce(m.model, '?'), coalesce(p.tool, '?'), {}, count(*)
         {CALLS} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        outcome_sql(a)
    );
    let rows = query(a, &sql, &filter_args(f))?;
    Ok(rows
        .iter()
        .map(|r| CallCount {
            model: r.get(0),
            tool: r.get(1),
            outcome: Outcome::from_name(r.get(2)).unwrap_or(Outcome::Unfinished),
            calls: r.get::<_, i64>(3).max(0) as u64,
        })
        .collect())
}

pub(in crate::archive) fn failed(
    a: &mut PgArchive,
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
    let error = if a.version >= SINCE {
        "coalesce(p.error, '')"
    } else {
        "''"
    };
    let sql = format!(
        "SELECT * FROM (
           SELECT p.session_id, p.message_id, p.id, p.time, {} AS outcome, {error} AS error,
                  coalesce(s.title, '') AS title, s.server, s.host, s.file
           {CALLS} AND coalesce(m.model, '?') = $6 AND coalesce(p.tool, '?') = $7) c
         WHERE c.outcome IN {FAILED_SQL}
         ORDER BY c.time DESC, c.id DESC LIMIT $8",
        outcome_sql(a)
    );
    let mut args = filter_args(f);
    args.push(Box::new(model.to_string()));
    args.push(Box::new(tool.to_string()));
    args.push(Box::new(i64::from(limit)));
    let rows = query(a, &sql, &args)?;
    Ok(rows
        .iter()
        .map(|r| FailedCall {
            session_id: r.get(0),
            message_id: r.get(1),
            part_id: r.get(2),
            time: r.get(3),
            outcome: Outcome::from_name(r.get(4)).unwrap_or(Outcome::Error),
            error: r.get(5),
            title: r.get(6),
            server: r.get(7),
            host: r.get(8),
            file: r.get(9),
        })
        .collect())
}

/// The errors of failed calls written before schema 16, read from their
/// JSON (the row's, or the log's) once and kept in their rows ('' when
/// the JSON says none). A reader who may not write leaves them: its old
/// errors count as `error`.
fn fill_errors(a: &mut PgArchive) -> Result<(), ArchiveError> {
    if a.read_only.is_some() || a.version < SINCE {
        return Ok(());
    }
    let logged = crate::archive::postgres::event_log::logged_column(a.version, "p.logged");
    let sql = format!(
        "SELECT p.id, p.raw, {logged} FROM parts p
         WHERE p.kind = 'tool' AND p.error IS NULL AND (p.state = 'error' OR p.tool = 'invalid')"
    );
    let rows = query(a, &sql, &[])?;
    if rows.is_empty() {
        return Ok(());
    }
    let raws = raws_of(a, &rows)?;
    let found: Vec<(String, String)> = rows
        .iter()
        .zip(&raws)
        .map(|(r, raw)| {
            let error = serde_json::from_str::<serde_json::Value>(raw)
                .ok()
                .and_then(|v| error_of(&v))
                .unwrap_or_default();
            (r.get(0), error)
        })
        .collect();
    let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    let errors: Vec<&str> = found.iter().map(|(_, e)| e.as_str()).collect();
    a.rt.block_on(a.client.execute(
        "UPDATE parts p SET error = u.error
         FROM unnest($1::text[], $2::text[]) AS u(id, error)
         WHERE p.id = u.id AND p.error IS NULL",
        &[&ids, &errors],
    ))
    .map_err(|e| classify(&a.place, &e))?;
    Ok(())
}

/// The JSON of rows read with it at column 1 and its place in the log at
/// column 2: the row's own, or the log's (each block read once); empty
/// where neither holds it.
pub(in crate::archive) fn raws_of(
    a: &mut PgArchive,
    rows: &[tokio_postgres::Row],
) -> Result<Vec<String>, ArchiveError> {
    let from_log =
        a.rt.block_on(crate::archive::postgres::event_log::logged_items(
            &a.client,
            &a.place,
            rows.iter().filter_map(|r| r.get::<_, Option<i64>>(2)),
        ))?;
    Ok(rows
        .iter()
        .map(|r| match r.get::<_, Option<i64>>(2) {
            Some(at) => from_log.get(&at).cloned().unwrap_or_default(),
            None => r.get::<_, String>(1),
        })
        .collect())
}

pub(in crate::archive) fn prompt_waits(
    a: &mut PgArchive,
    f: &CallFilter,
) -> Result<Vec<crate::archive::prompt_waits::PromptWait>, ArchiveError> {
    // An archive from before prompts were kept (a reader who may not
    // upgrade it) has none to say.
    if a.version < crate::archive::prompt_waits::SINCE {
        return Ok(Vec::new());
    }
    let sql = crate::archive::prompt_waits::waits_sql(|i| format!("${i}"), true);
    let mut args = filter_args(f);
    args.truncate(4);
    let rows = query(a, &sql, &args)?;
    Ok(rows
        .iter()
        .map(|r| crate::archive::prompt_waits::PromptWait {
            request_id: r.get(0),
            session_id: r.get(1),
            title: r.get(2),
            project: r.get(3),
            kind: r.get(4),
            what: r.get(5),
            asked: r.get(6),
            settled: r.get(7),
            reply: r.get(8),
            by: r.get(9),
            machine: r.get(10),
            server: r.get(11),
            host: r.get(12),
            file: r.get(13),
        })
        .collect())
}
