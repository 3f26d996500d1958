//! The archive's schema, versioned: each engine keeps its migrations in
//! order (`sqlite::schema`, `postgres::schema`), as `(version, name, SQL)`. refinery (the migration crate) runs them, through
//! `super::migrate`: it records each in the table `ocview_schema_history`
//! with its checksum and refuses an archive whose history differs from
//! these lists. A migration that also needs Rust (moving data) names a
//! step in its engine's `STEPS`, run right after its SQL in
//! the same transaction. Both lists hold every version up to `LATEST`.
//!
//! Archives from before refinery kept their version in `PRAGMA
//! user_version` (SQLite) or the table `ocview_schema` (PostgreSQL); the
//! first open records those versions in refinery's table without running
//! them again. Both markers are still kept in step, so an older ocview
//! sees a newer archive as newer. An archive at a version above `LATEST`
//! was written by a newer ocview: it is opened read-only, never migrated
//! down.

/// The schema this ocview writes.
pub const LATEST: i64 = 23;

/// The last version an ocview before refinery wrote: an archive left by
/// that runner is at this version or below.
pub const LAST_BEFORE_REFINERY: i64 = 5;

/// One migration: its version, its name (refinery's `V{version}__{name}`)
/// and the SQL that reaches it. The name and SQL are part of refinery's
/// checksum: never change a released one.
pub type Migration = (i64, &'static str, &'static str);

/// What an archive written by a newer ocview says.
pub fn newer(version: i64) -> String {
    format!("written by a newer ocview (schema {version}, this one knows {LATEST}): read-only")
}
