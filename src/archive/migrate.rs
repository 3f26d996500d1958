//! Running the archive's migrations (`super::schema`) with refinery.
//!
//! refinery decides what runs: it keeps the history table
//! `ocview_schema_history`, checks that every migration recorded there
//! still has its name and checksum, and gives the SQL still to run and the
//! row recording each. ocview drives it through refinery's driver traits
//! (`Migrate` here, `AsyncMigrate` in `super::migrate_postgres`), inside
//! one transaction that first takes the archive's write lock (SQLite's
//! `BEGIN IMMEDIATE`, PostgreSQL's advisory lock). So openers at once take
//! turns and each migration runs exactly once; a crash leaves the archive
//! as it was; a Rust step runs right after its SQL, in that transaction.
//! (refinery's own rusqlite driver commits a migration apart from its
//! history row, and could not share its transaction with a Rust step.)
//!
//! Archives from before refinery ("legacy": `PRAGMA user_version`, the
//! table `ocview_schema`) are adopted: their versions are recorded as
//! applied (refinery's `Fake` target, which writes the same checksums)
//! and only the later ones run.

use std::future::Future;
use std::pin::Pin;

use refinery_core::traits::sync::{Migrate, Query, Transaction};
use refinery_core::{Migration, Runner, Target};
use rusqlite::TransactionBehavior;

use super::schema;

/// refinery's history table, named for ocview: a team's PostgreSQL
/// database may hold other programs' refinery tables.
pub const HISTORY: &str = "ocview_schema_history";

/// A Rust step of an SQLite migration, run after its SQL.
pub type SqliteStep = fn(&rusqlite::Transaction) -> rusqlite::Result<()>;

/// A Rust step of a PostgreSQL migration, run after its SQL.
pub type PgStep = for<'a> fn(
    &'a tokio_postgres::Transaction<'a>,
) -> Pin<
    Box<dyn Future<Output = Result<(), MigrateError<tokio_postgres::Error>>> + Send + 'a>,
>;

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ran {
    /// The archive is at the last version of the list.
    Current,
    /// A newer ocview wrote it (its version, above the list's): nothing ran.
    Newer(i64),
}

/// Why a run failed: the database, or refinery refusing the history.
#[derive(Debug)]
pub enum MigrateError<E> {
    Db(E),
    History(refinery_core::Error),
    /// A Rust step failed other than in the database (its reason).
    Step(String),
}

impl<E: std::error::Error + 'static> MigrateError<E> {
    /// The database's own error, also when refinery met it.
    pub fn db(&self) -> Option<&E> {
        match self {
            MigrateError::Db(e) => Some(e),
            MigrateError::History(e) => match e.kind() {
                refinery_core::error::Kind::Connection(_, source) => source.downcast_ref(),
                _ => None,
            },
            MigrateError::Step(_) => None,
        }
    }
}

impl<E: std::fmt::Display> std::fmt::Display for MigrateError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MigrateError::Db(e) => e.fmt(f),
            MigrateError::History(e) => write!(f, "schema history: {e}"),
            MigrateError::Step(why) => write!(f, "moving the data: {why}"),
        }
    }
}

impl<E> From<E> for MigrateError<E> {
    fn from(e: E) -> Self {
        MigrateError::Db(e)
    }
}

/// What a run does, from the version refinery recorded (`None`: no
/// history table) and the legacy marker.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Record the list's versions up to this one as applied, running nothing.
    pub adopt: Option<i64>,
    /// Then run these, in order.
    pub run: Vec<i64>,
    /// The archive is newer than the list: do nothing.
    pub newer: Option<i64>,
    /// The list's last version.
    pub latest: i64,
}

pub(super) fn plan(list: &[schema::Migration], recorded: Option<i64>, legacy: i64) -> Plan {
    let latest = list.last().map_or(0, |m| m.0);
    let now = recorded.unwrap_or(0).max(legacy);
    Plan {
        adopt: (legacy > recorded.unwrap_or(0)).then_some(legacy),
        run: list.iter().map(|m| m.0).filter(|v| *v > now).collect(),
        newer: (now > latest).then_some(now),
        latest,
    }
}

/// The list as refinery's migrations (`V{version}__{name}`).
pub fn refinery_list(list: &[schema::Migration]) -> Result<Vec<Migration>, refinery_core::Error> {
    list.iter()
        .map(|(v, name, sql)| Migration::unapplied(&format!("V{v}__{name}"), sql))
        .collect()
}

/// refinery's runner over `list`, up to `target`, on ocview's table.
pub(super) fn runner(list: &[Migration], target: Target) -> Runner {
    let mut runner = Runner::new(list).set_target(target).set_grouped(true);
    runner.set_migration_table_name(HISTORY);
    runner
}

/// refinery's target for a version (its versions are `i32`).
pub(super) fn version(v: i64) -> refinery_core::SchemaVersion {
    v.clamp(0, i32::MAX as i64) as refinery_core::SchemaVersion
}

/// A recorded row as refinery reads it back. A damaged checksum reads as
/// 0, which refinery then reports as a divergent migration.
pub(super) fn applied(
    version: i32,
    name: Option<String>,
    on: Option<String>,
    checksum: Option<String>,
) -> Migration {
    let on = on
        .and_then(|s| {
            time::OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339).ok()
        })
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let checksum = checksum.and_then(|c| c.parse().ok()).unwrap_or(0);
    Migration::applied(version, name.unwrap_or_default(), on, checksum)
}

/// SQLite: (the version refinery recorded, if its table exists; `user_version`).
pub fn sqlite_versions(c: &rusqlite::Connection) -> rusqlite::Result<(Option<i64>, i64)> {
    let has_history: bool = c.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [HISTORY],
        |r| r.get(0),
    )?;
    let recorded = if has_history {
        Some(c.query_row(
            &format!("SELECT coalesce(max(version), 0) FROM {HISTORY}"),
            [],
            |r| r.get(0),
        )?)
    } else {
        None
    };
    let legacy = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok((recorded, legacy))
}

/// Bring an SQLite archive to the list's last version: under the write
/// lock, read where it is again (another opener may have migrated), adopt
/// a legacy archive, run what is left with each version's Rust step, keep
/// `user_version` in step, commit once.
pub fn run_sqlite(
    conn: &mut rusqlite::Connection,
    list: &[schema::Migration],
    steps: &[(i64, SqliteStep)],
) -> Result<Ran, MigrateError<rusqlite::Error>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (recorded, legacy) = sqlite_versions(&tx)?;
    let plan = plan(list, recorded, legacy);
    if let Some(v) = plan.newer {
        return Ok(Ran::Newer(v));
    }
    let migrations = refinery_list(list).map_err(MigrateError::History)?;
    let mut driver = SqliteDriver(&tx);
    if let Some(v) = plan.adopt {
        runner(&migrations, Target::FakeVersion(version(v)))
            .run(&mut driver)
            .map_err(MigrateError::History)?;
    }
    for v in plan.run {
        runner(&migrations, Target::Version(version(v)))
            .run(&mut driver)
            .map_err(MigrateError::History)?;
        for (_, step) in steps.iter().filter(|(at, _)| *at == v) {
            step(&tx)?;
        }
    }
    if legacy != plan.latest {
        tx.pragma_update(None, "user_version", plan.latest)?;
    }
    tx.commit()?;
    Ok(Ran::Current)
}

/// refinery's sync driver on a transaction ocview holds.
struct SqliteDriver<'t, 'c>(&'t rusqlite::Transaction<'c>);

impl Transaction for SqliteDriver<'_, '_> {
    type Error = rusqlite::Error;

    fn execute<'a, T: Iterator<Item = &'a str>>(&mut self, queries: T) -> rusqlite::Result<usize> {
        let mut count = 0;
        for query in queries {
            self.0.execute_batch(query)?;
            count += 1;
        }
        Ok(count)
    }
}

impl Query<Vec<Migration>> for SqliteDriver<'_, '_> {
    fn query(&mut self, query: &str) -> rusqlite::Result<Vec<Migration>> {
        let mut stmt = self.0.prepare(query)?;
        let rows = stmt.query_map([], |r| {
            Ok(applied(r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect()
    }
}

impl Migrate for SqliteDriver<'_, '_> {}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
