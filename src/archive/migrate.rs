//! Running the archive's migrations (`super::schema`; each engine's list in its `schema.rs`) with refinery.
//!
//! refinery decides what runs: it keeps the history table
//! `ocview_schema_history`, checks that every migration recorded there
//! still has its name and checksum, and gives the SQL still to run and the
//! row recording each. ocview drives it through refinery's driver traits
//! (`Migrate` here, `AsyncMigrate` in `postgres::migrate`), inside
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

use refinery_core::{Migration, Runner, Target};

use crate::archive::schema;

/// refinery's history table, named for ocview: a team's PostgreSQL
/// database may hold other programs' refinery tables.
pub const HISTORY: &str = "ocview_schema_history";

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
pub(in crate::archive) struct Plan {
    /// Record the list's versions up to this one as applied, running nothing.
    pub adopt: Option<i64>,
    /// Then run these, in order.
    pub run: Vec<i64>,
    /// The archive is newer than the list: do nothing.
    pub newer: Option<i64>,
    /// The list's last version.
    pub latest: i64,
}

pub(in crate::archive) fn plan(
    list: &[schema::Migration],
    recorded: Option<i64>,
    legacy: i64,
) -> Plan {
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
pub(in crate::archive) fn runner(list: &[Migration], target: Target) -> Runner {
    let mut runner = Runner::new(list).set_target(target).set_grouped(true);
    runner.set_migration_table_name(HISTORY);
    runner
}

/// refinery's target for a version (its versions are `i32`).
pub(in crate::archive) fn version(v: i64) -> refinery_core::SchemaVersion {
    v.clamp(0, i32::MAX as i64) as refinery_core::SchemaVersion
}

/// A recorded row as refinery reads it back. A damaged checksum reads as
/// 0, which refinery then reports as a divergent migration.
pub(in crate::archive) fn applied(
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
