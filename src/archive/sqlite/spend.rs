//! SQLite's side of `crate::archive::spend`: keeping retries, and reading
//! what the messages cost.

use rusqlite::{Connection, Row, Transaction, params};

use crate::archive::engine::{ArchiveError, Trouble};
use crate::archive::spend::{
    COLUMNS, DaySpend, Dialect, FailedSteps, PRICES_SQL, PriceRow, Retry, RetryRow, SessionSpend,
    Spending, logged_retries, price_upsert_sql, upsert_sql,
};
use crate::archive::sqlite::{SqliteArchive, classify};
use crate::archive::tool_calls::CallFilter;
use crate::source::opencode_db::usage::Figures;

pub(super) fn save(
    tx: &Transaction<'_>,
    retries: &[RetryRow],
    prices: &[PriceRow],
) -> rusqlite::Result<()> {
    if !retries.is_empty() {
        let mut put = tx.prepare(&upsert_sql(|i| format!("?{i}")))?;
        for r in retries {
            put.execute(params![r.session_id, r.next, r.attempt, r.at, r.message])?;
        }
    }
    if !prices.is_empty() {
        let mut put = tx.prepare(&price_upsert_sql(|i| format!("?{i}")))?;
        for p in prices {
            let c = &p.prices;
            put.execute(params![
                p.model,
                c.input,
                c.output,
                c.cache_read,
                c.cache_write,
                p.seen
            ])?;
        }
    }
    Ok(())
}

/// The figures at columns `from..from + 6` (cost, then the five tokens).
fn figures(r: &Row<'_>, from: usize) -> rusqlite::Result<Figures> {
    let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, f64>(from + i)?.max(0.0) as u64) };
    Ok(Figures {
        cost: r.get(from)?,
        input: n(1)?,
        output: n(2)?,
        reasoning: n(3)?,
        cache_read: n(4)?,
        cache_write: n(5)?,
    })
}

fn count(r: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, i64>(i)?.max(0) as u64)
}

pub(super) fn spending(
    a: &mut SqliteArchive,
    f: &CallFilter,
    day_offset_ms: i64,
) -> Result<Spending, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let kept: bool = a
        .conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'retries'",
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    if !kept {
        return Err(ArchiveError::new(
            Trouble::ReadOnly,
            &a.place,
            "this archive keeps no cost figures yet: open it once with a writable ocview to upgrade it",
        ));
    }
    if a.read_only.is_none() {
        fill(&a.conn).map_err(err)?;
    }
    let unread = unread(&a.conn).map_err(err)?;
    if unread > 0 {
        return Err(ArchiveError::new(
            crate::archive::engine::Trouble::ReadOnly,
            &a.place,
            crate::archive::spend::unread_message(unread),
        ));
    }
    read(&a.conn, f, day_offset_ms).map_err(err)
}

/// Assistant messages whose row does not keep its figures yet.
fn unread(c: &Connection) -> rusqlite::Result<i64> {
    c.query_row(
        "SELECT count(*) FROM messages WHERE role = 'assistant' AND cost IS NULL",
        [],
        |r| r.get(0),
    )
}

/// Figures of messages written before schema 18, read from their JSON (an
/// SQLite row always holds it) once and kept in their rows; their
/// sessions' retries, read from the log, with them.
fn fill(c: &Connection) -> rusqlite::Result<()> {
    if unread(c)? == 0 {
        return Ok(());
    }
    let tx = c.unchecked_transaction()?;
    save(&tx, &logged_retries_of_unread(&tx)?, &[])?;
    let number = |path: &str| {
        format!("coalesce(CASE WHEN json_valid(raw) THEN json_extract(raw, '$.{path}') END, 0)")
    };
    let sets: Vec<String> = COLUMNS
        .iter()
        .zip([
            "cost",
            "tokens.input",
            "tokens.output",
            "tokens.reasoning",
            "tokens.cache.read",
            "tokens.cache.write",
        ])
        .map(|(column, path)| format!("{column} = {}", number(path)))
        .collect();
    tx.execute(
        &format!(
            "UPDATE messages SET {} WHERE role = 'assistant' AND cost IS NULL",
            sets.join(", ")
        ),
        [],
    )?;
    tx.commit()
}

/// The retries in the logs of sessions whose messages are still to be
/// read: written before schema 18, when no table kept them.
fn logged_retries_of_unread(c: &Connection) -> rusqlite::Result<Vec<RetryRow>> {
    let mut blocks = c.prepare(
        "SELECT session_id, time, data FROM event_blocks WHERE session_id IN
           (SELECT DISTINCT session_id FROM messages WHERE role = 'assistant' AND cost IS NULL)",
    )?;
    let mut rows = blocks.query([])?;
    let mut found = Vec::new();
    while let Some(r) = rows.next()? {
        let session_id: String = r.get(0)?;
        let data = r.get_ref(2)?.as_blob().unwrap_or_default();
        // A damaged block gives none; the rest are read.
        if let Ok(events) = crate::archive::blocks::unpack(data) {
            found.extend(logged_retries(&session_id, r.get(1)?, &events));
        }
    }
    Ok(found)
}

fn read(c: &Connection, f: &CallFilter, day_offset_ms: i64) -> rusqlite::Result<Spending> {
    let d = Dialect::Sqlite;
    let args = params![f.since, f.until, f.project, f.machine, f.model];
    let by_model_day = c
        .prepare(&d.by_model_day_sql())?
        .query_map(
            params![
                f.since,
                f.until,
                f.project,
                f.machine,
                f.model,
                day_offset_ms
            ],
            |r| {
                Ok(DaySpend {
                    model: r.get(0)?,
                    day: r.get(1)?,
                    messages: count(r, 2)?,
                    figures: figures(r, 3)?,
                })
            },
        )?
        .collect::<rusqlite::Result<_>>()?;
    let costliest = c
        .prepare(&d.costliest_sql())?
        .query_map(args, |r| {
            Ok(SessionSpend {
                session_id: r.get(0)?,
                title: r.get(1)?,
                project: r.get(2)?,
                messages: count(r, 3)?,
                figures: figures(r, 4)?,
                server: r.get(10)?,
                host: r.get(11)?,
                file: r.get(12)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let failed_steps = c
        .prepare(&d.failed_steps_sql())?
        .query_map(args, |r| {
            Ok(FailedSteps {
                model: r.get(0)?,
                steps: count(r, 1)?,
                cost: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let retries = c
        .prepare(&d.retries_sql())?
        .query_map(params![f.since, f.until, f.project, f.machine], |r| {
            Ok(Retry {
                session_id: r.get(0)?,
                project: r.get(1)?,
                model: r.get(2)?,
                attempt: r.get(3)?,
                at: r.get(4)?,
                next: r.get(5)?,
                message: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let prices = c
        .prepare(PRICES_SQL)?
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                crate::model::entity::context::Prices {
                    input: r.get(1)?,
                    output: r.get(2)?,
                    cache_read: r.get(3)?,
                    cache_write: r.get(4)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Spending {
        by_model_day,
        costliest,
        failed_steps,
        retries,
        prices,
    })
}
