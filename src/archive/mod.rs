//! The archive: every session ocview sees, from every server and file,
//! kept and searchable. One interface (`engine::Engine`), two engines:
//! SQLite (the default, a private file) and PostgreSQL (a team's).
//!
//! Events go in as the bus events they are (`encode`), keyed so that the
//! same one twice is one row; the latest state of sessions, messages and
//! parts sits beside the log (`collect` reads it from a store of its own)
//! with a full-text index over it. Writing happens off the UI's thread
//! (`writer`), as does reading (`reader`).

mod block_words;
pub mod blocks;
pub mod collect;
mod collect_rows;
pub mod db_follow;
pub mod encode;
mod encode_prompt;
pub mod engine;
pub mod export;
pub mod import;
pub mod import_db;
pub mod keeper;
pub mod list_reader;
pub mod listing;
pub mod migrate;
pub mod migrate_postgres;
pub mod notify;
mod pg_copy;
pub mod pgpass;
pub mod place;
pub mod postgres;
mod postgres_blocks_search;
mod postgres_log;
mod postgres_marks;
mod postgres_search;
mod postgres_upkeep;
pub mod progress;
pub mod prune;
pub mod query;
pub mod resume;
pub mod rows;
pub mod schema;
pub mod snapshot;
pub mod snippet;
pub mod spool;
pub mod sqlite;
mod sqlite_log;
mod sqlite_marks;
mod sqlite_search;
mod sqlite_upkeep;
mod stream_rows;
pub mod writer;

pub use engine::{ArchiveError, Engine, ImportMark, Trouble};
pub use place::Setting;
pub use prune::Limits;
pub use query::{Hit, Query};
pub use rows::Origin;
