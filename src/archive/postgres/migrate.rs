//! PostgreSQL's side of `crate::archive::migrate`: refinery's async driver on a
//! transaction that holds the advisory lock all migrations take turns on,
//! so two processes (two machines) opening a new archive at once migrate
//! it once. `ocview_schema`, the legacy marker, is kept in step for an
//! older ocview.

use refinery_core::traits::r#async::{AsyncMigrate, AsyncQuery, AsyncTransaction};
use refinery_core::{Migration, Target};
use tokio_postgres::GenericClient;

use std::future::Future;
use std::pin::Pin;

use crate::archive::migrate::{
    HISTORY, MigrateError, Ran, applied, plan, refinery_list, runner, version,
};
use crate::archive::schema;

/// A Rust step of a PostgreSQL migration, run after its SQL.
pub type Step = for<'a> fn(
    &'a tokio_postgres::Transaction<'a>,
) -> Pin<
    Box<dyn Future<Output = Result<(), MigrateError<tokio_postgres::Error>>> + Send + 'a>,
>;

/// Migrations of two processes at once take turns on this lock.
const MIGRATION_LOCK: i64 = 0x6f63_7669_6577; // "ocview"

/// (The version refinery recorded, if its table exists; the legacy
/// `ocview_schema`'s, 0 without it.)
pub async fn versions<C: GenericClient>(
    c: &C,
) -> Result<(Option<i64>, i64), tokio_postgres::Error> {
    let row = c
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL, to_regclass('ocview_schema') IS NOT NULL",
            &[&HISTORY],
        )
        .await?;
    let (has_history, has_legacy): (bool, bool) = (row.get(0), row.get(1));
    let recorded = if has_history {
        let q = format!("SELECT coalesce(max(version), 0)::bigint FROM {HISTORY}");
        Some(c.query_one(&q, &[]).await?.get(0))
    } else {
        None
    };
    let legacy = if has_legacy {
        c.query_one("SELECT coalesce(max(version), 0) FROM ocview_schema", &[])
            .await?
            .get(0)
    } else {
        0
    };
    Ok((recorded, legacy))
}

/// Bring a PostgreSQL archive to the list's last version (as
/// `sqlite::migrate::run` does SQLite's), in one transaction.
pub async fn run(
    client: &mut tokio_postgres::Client,
    list: &[schema::Migration],
    steps: &[(i64, Step)],
) -> Result<Ran, MigrateError<tokio_postgres::Error>> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let (recorded, legacy) = versions(&tx).await?;
    let plan = plan(list, recorded, legacy);
    if let Some(v) = plan.newer {
        return Ok(Ran::Newer(v));
    }
    let migrations = refinery_list(list).map_err(MigrateError::History)?;
    let mut driver = PgDriver(&tx);
    if let Some(v) = plan.adopt {
        runner(&migrations, Target::FakeVersion(version(v)))
            .run_async(&mut driver)
            .await
            .map_err(MigrateError::History)?;
    }
    for v in plan.run {
        runner(&migrations, Target::Version(version(v)))
            .run_async(&mut driver)
            .await
            .map_err(MigrateError::History)?;
        for (_, step) in steps.iter().filter(|(at, _)| *at == v) {
            step(&tx).await?;
        }
    }
    if legacy != plan.latest {
        tx.batch_execute("CREATE TABLE IF NOT EXISTS ocview_schema (version BIGINT NOT NULL)")
            .await?;
        tx.execute(
            "INSERT INTO ocview_schema (version) VALUES ($1)",
            &[&plan.latest],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Ran::Current)
}

/// refinery's async driver on a transaction ocview holds.
struct PgDriver<'t, 'c>(&'t tokio_postgres::Transaction<'c>);

impl AsyncTransaction for PgDriver<'_, '_> {
    type Error = tokio_postgres::Error;

    async fn execute<'a, T: Iterator<Item = &'a str> + Send + 'a>(
        &'a mut self,
        queries: T,
    ) -> Result<usize, Self::Error> {
        let mut count = 0;
        for query in queries {
            self.0.batch_execute(query).await?;
            count += 1;
        }
        Ok(count)
    }
}

impl AsyncQuery<Vec<Migration>> for PgDriver<'_, '_> {
    async fn query<'a>(&'a mut self, query: &'a str) -> Result<Vec<Migration>, Self::Error> {
        let rows = self.0.query(query, &[]).await?;
        rows.iter()
            .map(|r| {
                Ok(applied(
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                ))
            })
            .collect()
    }
}

impl AsyncMigrate for PgDriver<'_, '_> {}
