//! PostgreSQL's record of what was redacted (`crate::archive::redacted`),
//! as SQLite's (`sqlite::redactions`).

use tokio_postgres::{GenericClient, Transaction};

use crate::archive::rows::Found;

/// The schema that has the table.
pub const SINCE: i64 = 13;

/// Migration 13's SQL.
pub const SQL: &str = "CREATE TABLE redactions (
        item TEXT NOT NULL,
        rule TEXT NOT NULL,
        session_id TEXT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (item, rule)
    );
    CREATE INDEX redactions_by_session ON redactions(session_id);";

pub(in crate::archive) async fn save(
    tx: &Transaction<'_>,
    found: &[Found],
) -> Result<(), tokio_postgres::Error> {
    if found.is_empty() {
        return Ok(());
    }
    let st = tx
        .prepare(
            "INSERT INTO redactions (item, rule, session_id, count) VALUES ($1, $2, $3, $4)
             ON CONFLICT (item, rule) DO UPDATE SET count = excluded.count",
        )
        .await?;
    for f in found {
        tx.execute(&st, &[&f.item, &f.rule, &f.session_id, &(f.count as i64)])
            .await?;
    }
    Ok(())
}

/// A session's redactions by rule (all sessions' with `None`), most first.
pub(in crate::archive) async fn by_rule(
    c: &impl GenericClient,
    session_id: Option<&str>,
) -> Result<Vec<(String, u64)>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT rule, sum(count)::bigint FROM redactions
             WHERE $1::text IS NULL OR session_id = $1 GROUP BY rule ORDER BY 2 DESC, 1",
            &[&session_id],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
        .collect())
}
