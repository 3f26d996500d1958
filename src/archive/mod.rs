//! The archive: every session ocview sees, from every server and file,
//! kept and searchable. One interface (`engine::Engine`), two engines:
//! SQLite (the default, a private file) and PostgreSQL (a team's).
//!
//! Events go in as the bus events they are (`encode`), keyed so that the
//! same one twice is one row; the latest state of sessions, messages and
//! parts sits beside the log (`collect` reads it from a store of its own)
//! with a full-text index over it. Writing happens off the UI's thread
//! (`writer`), as does reading (`reader`).

pub mod blocks;
pub mod bounded;
pub mod collect;
mod collect_rows;
pub mod db_follow;
mod distinct;
pub mod encode;
mod encode_prompt;
pub mod engine;
pub mod export;
pub mod import;
pub mod import_db;
mod import_read;
pub mod keeper;
pub mod limits;
pub mod list_reader;
pub mod listing;
pub mod migrate;
mod one_id;
pub mod origin;
pub mod place;
pub mod postgres;
pub mod progress;
pub mod prompt_waits;
pub mod prune;
pub mod prune_log;
pub mod query;
mod recording_clock;
pub mod redacted;
pub mod resume;
pub mod rows;
pub mod schema;
pub mod snapshot;
pub mod snippet;
pub mod spend;
pub mod spool;
pub mod sqlite;
mod stream_rows;
pub mod tool_calls;
pub mod words;
pub mod writer;

pub use collect_rows::cap_indexed;
pub use engine::{ArchiveError, Engine, ImportMark, Trouble};
pub use place::Setting;
pub use prune::Limits;
pub use query::{Hit, Query, Searched};
pub use rows::Origin;

/// The wall clock, in ms since 1970.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::{migrate, postgres, schema, sqlite};

    /// Every version up to `LATEST` on both engines, in order, named as
    /// refinery wants; others append theirs.
    #[test]
    fn both_lists_hold_every_version_up_to_latest() {
        for list in [sqlite::schema::MIGRATIONS, postgres::schema::MIGRATIONS] {
            let versions: Vec<i64> = list.iter().map(|m| m.0).collect();
            assert_eq!(versions, (1..=schema::LATEST).collect::<Vec<_>>());
            let names: Vec<String> = migrate::refinery_list(list)
                .unwrap()
                .iter()
                .map(|m| m.to_string())
                .collect();
            assert!(names.iter().all(|n| n.starts_with('V')), "{names:?}");
        }
        for (v, _) in sqlite::schema::STEPS {
            assert!(*v <= schema::LATEST);
        }
        for (v, _) in postgres::schema::STEPS {
            assert!(*v <= schema::LATEST);
        }
    }
}
