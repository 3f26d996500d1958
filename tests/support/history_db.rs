//! Databases as opencode 1.18.33 makes them, for the history tests: the
//! schema it created (`fixtures/opencode-1.18.33/database-schema.sql`) and
//! one way to put a project, session, message or part in, as it writes
//! them (`data` without the ids; a message's and part's `time_updated`
//! equal to its creation).

use std::path::Path;

use rusqlite::{Connection, params};

/// A new database at `path` with opencode's schema (WAL, as opencode keeps
/// it, when `wal`).
pub fn create(path: &Path, wal: bool) -> Connection {
    let c = Connection::open(path).unwrap();
    if wal {
        c.execute_batch("PRAGMA journal_mode=WAL").unwrap();
    }
    c.execute_batch(super::usage_db::SCHEMA).unwrap();
    c
}

pub fn project(c: &Connection, id: &str, worktree: &str, t: i64) {
    c.execute(
        "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES (?1, ?2, ?3, ?3, '[]')",
        params![id, worktree, t],
    )
    .unwrap();
}

/// A session; `totals`: its stored cost and input/output tokens.
pub fn session(
    c: &Connection,
    id: &str,
    project: &str,
    parent: Option<&str>,
    title: &str,
    t: i64,
    totals: Option<(f64, i64, i64)>,
) {
    let (cost, input, output) = totals.unwrap_or((0.0, 0, 0));
    c.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, cost, tokens_input, tokens_output, time_created, time_updated)
         VALUES (?1, ?2, ?3, 's', '/work/alpha', ?4, '1.18.33', ?5, ?6, ?7, ?8, ?8)",
        params![id, project, parent, title, cost, input, output, t],
    )
    .unwrap();
}

pub fn message(c: &Connection, id: &str, session: &str, t: i64, data: &str) {
    c.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
        params![id, session, t, data],
    )
    .unwrap();
}

pub fn part(c: &Connection, id: &str, message: &str, session: &str, t: i64, data: &str) {
    c.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        params![id, message, session, t, data],
    )
    .unwrap();
}
