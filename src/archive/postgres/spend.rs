//! PostgreSQL's side of `crate::archive::spend`, as SQLite's.

use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Transaction};

use crate::archive::engine::ArchiveError;
use crate::archive::postgres::PgArchive;
use crate::archive::postgres::search::query;
use crate::archive::spend::{
    DaySpend, Dialect, FailedSteps, Retry, RetryRow, SINCE, SessionSpend, Spending, upsert_sql,
};
use crate::archive::tool_calls::CallFilter;
use crate::source::opencode_db::usage::Figures;

pub(super) async fn save(
    tx: &Transaction<'_>,
    retries: &[RetryRow],
) -> Result<(), tokio_postgres::Error> {
    if retries.is_empty() {
        return Ok(());
    }
    let put = tx.prepare(&upsert_sql(|i| format!("${i}"))).await?;
    for r in retries {
        tx.execute(
            &put,
            &[&r.session_id, &r.next, &r.attempt, &r.at, &r.message],
        )
        .await?;
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

pub(super) fn spending(
    a: &mut PgArchive,
    f: &CallFilter,
    day_offset_ms: i64,
) -> Result<Spending, ArchiveError> {
    let d = Dialect::Postgres;
    // A message the event log holds as it is keeps only its place there
    // (an empty row): its cost is not in the row, and a sum without it
    // would mislead. Said rather than summed.
    let logged = query(
        a,
        "SELECT count(*) FROM messages WHERE role = 'assistant' AND logged IS NOT NULL",
        &[],
    )?;
    let logged: i64 = logged.first().map_or(0, |r| r.get(0));
    if logged > 0 {
        return Err(ArchiveError::new(
            crate::archive::engine::Trouble::Failed,
            &a.place,
            format!(
                "cost figures are not read from a PostgreSQL archive yet: {logged} assistant messages are kept only in its event log"
            ),
        ));
    }
    // Before 18 (a reader who may not upgrade it) there is no safe reader
    // of JSON and no retries: the JSON is cast as it is.
    let kept = a.version >= SINCE;
    let sql = |s: String| match kept {
        true => s,
        false => s.replace("ocview_json(m.raw)", "(m.raw::jsonb)"),
    };
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
    let by_model_day = query(a, &sql(d.by_model_day_sql()), &with_offset)?
        .iter()
        .map(|r| DaySpend {
            model: r.get(0),
            day: r.get(1),
            messages: count(r, 2),
            figures: figures(r, 3),
        })
        .collect();
    let costliest = query(a, &sql(d.costliest_sql()), &args())?
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
    let failed_steps = query(a, &sql(d.failed_steps_sql()), &args())?
        .iter()
        .map(|r| FailedSteps {
            model: r.get(0),
            steps: count(r, 1),
            cost: r.get(2),
        })
        .collect();
    let retries = match kept {
        false => Vec::new(),
        true => {
            let mut four = args();
            four.truncate(4);
            query(a, &d.retries_sql(), &four)?
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
                .collect()
        }
    };
    Ok(Spending {
        by_model_day,
        costliest,
        failed_steps,
        retries,
    })
}
