//! PostgreSQL's side of `crate::archive::spend`, as SQLite's.

use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Transaction};

use crate::archive::engine::ArchiveError;
use crate::archive::postgres::PgArchive;
use crate::archive::postgres::search::query;
use crate::archive::spend::{
    DaySpend, Dialect, FailedSteps, PRICES_SQL, PriceRow, Retry, RetryRow, SINCE, SessionSpend,
    Spending, logged_retries, price_upsert_sql, spend_of, upsert_sql,
};
use crate::archive::tool_calls::CallFilter;
use crate::source::opencode_db::usage::Figures;

pub(super) async fn save(
    tx: &Transaction<'_>,
    retries: &[RetryRow],
    prices: &[PriceRow],
) -> Result<(), tokio_postgres::Error> {
    if !retries.is_empty() {
        let put = tx.prepare(&upsert_sql(|i| format!("${i}"))).await?;
        for r in retries {
            tx.execute(
                &put,
                &[&r.session_id, &r.next, &r.attempt, &r.at, &r.message],
            )
            .await?;
        }
    }
    if !prices.is_empty() {
        let put = tx.prepare(&price_upsert_sql(|i| format!("${i}"))).await?;
        for p in prices {
            let c = &p.prices;
            tx.execute(
                &put,
                &[
                    &p.model,
                    &c.input,
                    &c.output,
                    &c.cache_read,
                    &c.cache_write,
                    &p.seen,
                ],
            )
            .await?;
        }
    }
    Ok(())
}

fn figures(r: &Row, from: usize) -> Figures {
    let n = |i: usize| r.get::<_, f64>(from + i).max(0.0) as u64;
    Figures {
        cost: r.get(from),
        input: n(1),
        output: n(2),
        reasoning: n(3),
        cache_read: n(4),
        cache_write: n(5),
    }
}

fn count(r: &Row, i: usize) -> u64 {
    r.get::<_, i64>(i).max(0) as u64
}

/// Figures of messages written before schema 18, read from their JSON
/// (the row's, or the log's) once and kept in their rows, a few thousand
/// at a time. A reader who may not write leaves them.
fn fill(a: &mut PgArchive) -> Result<(), ArchiveError> {
    // Before the figures: the retries' pass is kept once, the figures'
    // end it (their rows are no longer unread).
    keep_logged_retries(a)?;
    let logged = crate::archive::postgres::event_log::message_logged_column(a.version, "logged");
    let sql = format!(
        "SELECT id, raw, {logged} FROM messages
         WHERE role = 'assistant' AND cost IS NULL LIMIT 5000"
    );
    loop {
        let rows = query(a, &sql, &[])?;
        if rows.is_empty() {
            return Ok(());
        }
        let raws = crate::archive::postgres::tool_calls::raws_of(a, &rows)?;
        let mut ids: Vec<&str> = Vec::with_capacity(rows.len());
        let mut figures: [Vec<f64>; 6] = Default::default();
        for (r, raw) in rows.iter().zip(&raws) {
            let f = spend_of(raw);
            ids.push(r.get(0));
            for (column, value) in figures.iter_mut().zip([
                f.cost,
                f.input as f64,
                f.output as f64,
                f.reasoning as f64,
                f.cache_read as f64,
                f.cache_write as f64,
            ]) {
                column.push(value);
            }
        }
        let [cost, input, output, reasoning, cache_read, cache_write] = &figures;
        a.rt.block_on(a.client.execute(
            "UPDATE messages m SET cost = u.cost, tokens_input = u.i::bigint,
               tokens_output = u.o::bigint, tokens_reasoning = u.r::bigint,
               tokens_cache_read = u.cr::bigint, tokens_cache_write = u.cw::bigint
             FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[],
                         $6::float8[], $7::float8[]) AS u(id, cost, i, o, r, cr, cw)
             WHERE m.id = u.id AND m.cost IS NULL",
            &[
                &ids,
                cost,
                input,
                output,
                reasoning,
                cache_read,
                cache_write,
            ],
        ))
        .map_err(|e| crate::archive::postgres::classify(&a.place, &e))?;
    }
}

/// The retries in the logs of sessions whose messages are still to be
/// read (written before schema 18, when no table kept them), a few
/// hundred sessions at a time.
fn keep_logged_retries(a: &mut PgArchive) -> Result<(), ArchiveError> {
    let sessions: Vec<String> = query(
        a,
        "SELECT DISTINCT session_id FROM messages WHERE role = 'assistant' AND cost IS NULL",
        &[],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect();
    for some in sessions.chunks(200) {
        let rows = query(
            a,
            "SELECT session_id, time, data FROM event_blocks WHERE session_id = ANY($1)",
            &[Box::new(some.to_vec())],
        )?;
        let found: Vec<RetryRow> = rows
            .iter()
            .flat_map(|r| {
                // A damaged block gives none; the rest are read.
                let events = crate::archive::blocks::unpack(r.get(2)).unwrap_or_default();
                logged_retries(r.get(0), r.get(1), &events)
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        a.rt.block_on(async {
            let tx = a.client.transaction().await?;
            save(&tx, &found, &[]).await?;
            tx.commit().await
        })
        .map_err(|e| crate::archive::postgres::classify(&a.place, &e))?;
    }
    Ok(())
}

pub(super) fn spending(
    a: &mut PgArchive,
    f: &CallFilter,
    day_offset_ms: i64,
) -> Result<Spending, ArchiveError> {
    let d = Dialect::Postgres;
    if a.version < SINCE {
        return Err(ArchiveError::new(
            crate::archive::engine::Trouble::ReadOnly,
            &a.place,
            "this archive keeps no cost figures yet: open it once with a role that may upgrade it",
        ));
    }
    if a.read_only.is_none() {
        fill(a)?;
    }
    let unread = query(
        a,
        "SELECT count(*) FROM messages WHERE role = 'assistant' AND cost IS NULL",
        &[],
    )?;
    let unread: i64 = unread.first().map_or(0, |r| r.get(0));
    if unread > 0 {
        return Err(ArchiveError::new(
            crate::archive::engine::Trouble::ReadOnly,
            &a.place,
            crate::archive::spend::unread_message(unread),
        ));
    }
    let args = || -> Vec<Box<dyn ToSql + Sync + Send>> {
        vec![
            Box::new(f.since),
            Box::new(f.until),
            Box::new(f.project.clone()),
            Box::new(f.machine.clone()),
            Box::new(f.model.clone()),
        ]
    };
    let mut with_offset = args();
    with_offset.push(Box::new(day_offset_ms));
    let by_model_day = query(a, &d.by_model_day_sql(), &with_offset)?
        .iter()
        .map(|r| DaySpend {
            model: r.get(0),
            day: r.get(1),
            messages: count(r, 2),
            figures: figures(r, 3),
        })
        .collect();
    let costliest = query(a, &d.costliest_sql(), &args())?
        .iter()
        .map(|r| SessionSpend {
            session_id: r.get(0),
            title: r.get(1),
            project: r.get(2),
            messages: count(r, 3),
            figures: figures(r, 4),
            server: r.get(10),
            host: r.get(11),
            file: r.get(12),
        })
        .collect();
    let failed_steps = query(a, &d.failed_steps_sql(), &args())?
        .iter()
        .map(|r| FailedSteps {
            model: r.get(0),
            steps: count(r, 1),
            cost: r.get(2),
        })
        .collect();
    let mut four = args();
    four.truncate(4);
    let retries = query(a, &d.retries_sql(), &four)?
        .iter()
        .map(|r| Retry {
            session_id: r.get(0),
            project: r.get(1),
            model: r.get(2),
            attempt: r.get(3),
            at: r.get(4),
            next: r.get(5),
            message: r.get(6),
        })
        .collect();
    let prices = query(a, PRICES_SQL, &[])?
        .iter()
        .map(|r| {
            (
                r.get(0),
                crate::model::entity::context::Prices {
                    input: r.get(1),
                    output: r.get(2),
                    cache_read: r.get(3),
                    cache_write: r.get(4),
                },
            )
        })
        .collect();
    Ok(Spending {
        by_model_day,
        costliest,
        failed_steps,
        retries,
        prices,
    })
}
