//! PostgreSQL's pins (as SQLite's, `sqlite::pins`) and the team's policy:
//! one size cap and age limit for everyone's writers, set by whoever may
//! write the table (its owner, unless granted), not by each machine's
//! config.

use tokio_postgres::GenericClient;

use crate::archive::prune::Limits;

/// The schema that has them.
pub const SINCE: i64 = 14;

/// Migration 14's SQL.
pub const SQL: &str = "CREATE TABLE pins (
        session_id TEXT PRIMARY KEY,
        pinned_at BIGINT NOT NULL,
        host TEXT
    );
    CREATE TABLE archive_policy (
        id INT PRIMARY KEY CHECK (id = 1),
        max_mb BIGINT,
        max_age_days BIGINT,
        set_by TEXT NOT NULL,
        set_at BIGINT NOT NULL
    );";

pub(in crate::archive) async fn pins(
    c: &impl GenericClient,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT session_id FROM pins ORDER BY pinned_at, session_id",
            &[],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

pub(in crate::archive) async fn set(
    c: &impl GenericClient,
    id: &str,
    pinned: bool,
    now_ms: i64,
    host: &str,
) -> Result<bool, tokio_postgres::Error> {
    let changed = match pinned {
        true => {
            c.execute(
                "INSERT INTO pins (session_id, pinned_at, host) VALUES ($1, $2, $3)
                 ON CONFLICT (session_id) DO NOTHING",
                &[&id, &now_ms, &host],
            )
            .await?
        }
        false => {
            c.execute("DELETE FROM pins WHERE session_id = $1", &[&id])
                .await?
        }
    };
    if changed > 0 {
        // Readers read what is new, pins with it (`notify::parse`: no
        // session named).
        c.execute(
            "SELECT pg_notify($1, '{\"pins\":1}')",
            &[&crate::archive::postgres::notify::CHANNEL],
        )
        .await?;
    }
    Ok(changed > 0)
}

/// The team's limits, once someone set them.
pub(in crate::archive) async fn policy(
    c: &impl GenericClient,
) -> Result<Option<Limits>, tokio_postgres::Error> {
    let row = c
        .query_opt(
            "SELECT max_mb, max_age_days FROM archive_policy WHERE id = 1",
            &[],
        )
        .await?;
    Ok(row.map(|r| {
        let mb: Option<i64> = r.get(0);
        let days: Option<i64> = r.get(1);
        Limits::from_settings(
            Some(mb.unwrap_or(0).max(0) as u64),
            Some(days.unwrap_or(0).max(0) as u64),
        )
    }))
}

pub(in crate::archive) async fn set_policy(
    c: &impl GenericClient,
    limits: &Limits,
    by: &str,
    now_ms: i64,
) -> Result<(), tokio_postgres::Error> {
    let mb = limits.max_bytes.map(|b| (b / (1024 * 1024)) as i64);
    let days = limits.max_age_days.map(|d| d as i64);
    c.execute(
        "INSERT INTO archive_policy (id, max_mb, max_age_days, set_by, set_at)
         VALUES (1, $1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET max_mb = excluded.max_mb,
           max_age_days = excluded.max_age_days, set_by = excluded.set_by,
           set_at = excluded.set_at",
        &[&mb, &days, &by, &now_ms],
    )
    .await?;
    Ok(())
}
