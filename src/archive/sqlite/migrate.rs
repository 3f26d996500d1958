//! SQLite's side of `crate::archive::migrate`: refinery's sync driver on
//! a transaction ocview holds, and the run under the write lock.

use refinery_core::traits::sync::{Migrate, Query, Transaction};
use refinery_core::{Migration, Target};
use rusqlite::TransactionBehavior;

use crate::archive::migrate::{
    HISTORY, MigrateError, Ran, applied, plan, refinery_list, runner, version,
};
use crate::archive::schema;

/// A Rust step of an SQLite migration, run after its SQL.
pub type Step = fn(&rusqlite::Transaction) -> rusqlite::Result<()>;

/// SQLite: (the version refinery recorded, if its table exists; `user_version`).
pub fn versions(c: &rusqlite::Connection) -> rusqlite::Result<(Option<i64>, i64)> {
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
pub fn run(
    conn: &mut rusqlite::Connection,
    list: &[schema::Migration],
    steps: &[(i64, Step)],
) -> Result<Ran, MigrateError<rusqlite::Error>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (recorded, legacy) = versions(&tx)?;
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
