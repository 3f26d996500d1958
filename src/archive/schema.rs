//! The archive's schema, versioned: each engine's migrations in order, as
//! `(version, name, SQL)`. refinery (the migration crate) runs them, through
//! `super::migrate`: it records each in the table `ocview_schema_history`
//! with its checksum and refuses an archive whose history differs from
//! these lists. A migration that also needs Rust (moving data) names a
//! step in `SQLITE_STEPS` / `POSTGRES_STEPS`, run right after its SQL in
//! the same transaction. Both lists hold every version up to `LATEST`.
//!
//! Archives from before refinery kept their version in `PRAGMA
//! user_version` (SQLite) or the table `ocview_schema` (PostgreSQL); the
//! first open records those versions in refinery's table without running
//! them again. Both markers are still kept in step, so an older ocview
//! sees a newer archive as newer. An archive at a version above `LATEST`
//! was written by a newer ocview: it is opened read-only, never migrated
//! down.

use super::migrate::{PgStep, SqliteStep};

/// The schema this ocview writes.
pub const LATEST: i64 = 11;

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

/// SQLite: Rust steps run after their version's SQL.
pub const SQLITE_STEPS: &[(i64, SqliteStep)] = &[(6, super::sqlite_log::move_to_blocks)];

/// PostgreSQL: Rust steps run after their version's SQL.
pub const POSTGRES_STEPS: &[(i64, PgStep)] = &[(6, super::postgres_log::move_to_blocks_step)];

/// SQLite's migrations.
pub const SQLITE: &[Migration] = &[
    (
        1,
        "archive",
        "CREATE TABLE sessions (
        pk INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        title TEXT NOT NULL,
        directory TEXT,
        server TEXT,
        host TEXT,
        file TEXT,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        model TEXT,
        agent TEXT,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id, id);
    CREATE TABLE parts (
        pk INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        message_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        tool TEXT,
        state TEXT,
        time INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE INDEX parts_by_message ON parts(session_id, message_id, id);
    CREATE TABLE events (
        pk INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        time INTEGER NOT NULL,
        json TEXT NOT NULL
    );
    CREATE INDEX events_by_session ON events(session_id, pk);
    CREATE VIRTUAL TABLE search USING fts5(
        body, session_id UNINDEXED, message_id UNINDEXED, part_id UNINDEXED,
        kind UNINDEXED, time UNINDEXED, tool UNINDEXED, state UNINDEXED,
        model UNINDEXED, agent UNINDEXED, tokenize = 'unicode61'
    );",
    ),
    // Pruning finds the oldest sessions without reading them all.
    (
        2,
        "sessions_by_updated",
        "CREATE INDEX sessions_by_updated ON sessions(updated);",
    ),
    // The index keeps no copy of the text (it is in the parts' raw JSON),
    // and its rowids follow time, newest last (`sqlite_search`): a word
    // found everywhere is listed newest first without sorting every match.
    (
        3,
        "contentless_search",
        "CREATE VIRTUAL TABLE search_v3 USING fts5(
        body, content = '', contentless_delete = 1, tokenize = 'unicode61'
    );
    INSERT INTO search_v3 (rowid, body)
        SELECT CASE WHEN f.rowid < 0
                    THEN ((max(s.updated, 0) / 1000) << 30) | (((-f.rowid) & 536870911) << 1) | 1
                    ELSE ((max(p.time, 0) / 1000) << 30) | ((f.rowid & 536870911) << 1) END,
               f.body
        FROM search f
        LEFT JOIN parts p ON p.pk = f.rowid
        LEFT JOIN sessions s ON s.pk = -f.rowid
        WHERE p.pk IS NOT NULL OR s.pk IS NOT NULL;
    DROP TABLE search;
    ALTER TABLE search_v3 RENAME TO search;",
    ),
    // How far each opencode database was imported (`import_db`).
    (
        4,
        "import_marks",
        "CREATE TABLE import_marks (
        source TEXT PRIMARY KEY,
        updated INTEGER NOT NULL,
        rowid_max INTEGER NOT NULL
    );",
    ),
    (5, "imports", super::resume::SQLITE_TABLE),
    (6, "event_blocks", SQLITE_BLOCKS),
    // PostgreSQL's index without its text: nothing changes here.
    (7, "postgres_index_in_rows", ""),
    // The index merges its segments sixteen at a time, not four: about
    // half the merging over a large import (fewer levels), for a few more
    // segments a query reads (each a quick lookup per word).
    (
        8,
        "index_merges_by_sixteen",
        "INSERT INTO search (search, rank) VALUES ('automerge', 16);",
    ),
    // A session's parts are found by the session alone (opening one sorts
    // its few hundred rows): the index of three text columns was the
    // archive's largest, and each part's insert wrote it.
    (
        9,
        "parts_by_session",
        "DROP INDEX IF EXISTS parts_by_message;
         CREATE INDEX parts_by_session ON parts(session_id);",
    ),
    // PostgreSQL's documents of the parts the log holds: nothing here.
    (10, "postgres_block_documents", ""),
    // PostgreSQL's blocks keep their oldest part's time: nothing here.
    (11, "postgres_block_spans", ""),
];

/// Migration 6 (SQLite): the event log in compressed blocks with its keys
/// in a lean table (`super::blocks`); a part's JSON is a reference into the
/// log (`logged`) when the log holds it as it is, else compressed, and
/// compared by its hash. The old log's rows and the parts'
/// JSON are moved by `sqlite_log::move_to_blocks`, its step.
const SQLITE_BLOCKS: &str = "CREATE TABLE event_keys (slot INTEGER PRIMARY KEY, key TEXT NOT NULL);
    CREATE TABLE event_blocks (
        pk INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        time INTEGER NOT NULL,
        count INTEGER NOT NULL,
        todo INTEGER,
        slots BLOB NOT NULL,
        data BLOB NOT NULL
    );
    CREATE INDEX event_blocks_by_session ON event_blocks(session_id, pk);
    ALTER TABLE parts ADD COLUMN hash INTEGER;
    ALTER TABLE parts ADD COLUMN logged INTEGER;";

/// Migration 6 (PostgreSQL): the same blocks as SQLite's. The old log's
/// rows are moved by `postgres_log::move_to_blocks`, its step.
const POSTGRES_BLOCKS: &str =
    "CREATE TABLE event_keys (slot BIGINT PRIMARY KEY, key TEXT NOT NULL);
    CREATE TABLE event_blocks (
        pk BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        time BIGINT NOT NULL,
        count BIGINT NOT NULL,
        todo BIGINT,
        slots BYTEA NOT NULL,
        data BYTEA NOT NULL
    );
    CREATE INDEX event_blocks_by_session ON event_blocks(session_id, pk);";

/// PostgreSQL's migrations.
pub const POSTGRES: &[Migration] = &[
    (
        1,
        "archive",
        "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        title TEXT NOT NULL,
        directory TEXT,
        server TEXT,
        host TEXT,
        file TEXT,
        created BIGINT NOT NULL,
        updated BIGINT NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        model TEXT,
        agent TEXT,
        created BIGINT NOT NULL,
        updated BIGINT NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id, id);
    CREATE TABLE parts (
        id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        tool TEXT,
        state TEXT,
        time BIGINT NOT NULL,
        updated BIGINT NOT NULL,
        raw TEXT NOT NULL
    );
    CREATE INDEX parts_by_message ON parts(session_id, message_id, id);
    CREATE TABLE events (
        pk BIGSERIAL PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        time BIGINT NOT NULL,
        json TEXT NOT NULL
    );
    CREATE INDEX events_by_session ON events(session_id, pk);
    CREATE TABLE search (
        doc TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id TEXT,
        part_id TEXT,
        kind TEXT NOT NULL,
        time BIGINT NOT NULL,
        tool TEXT,
        state TEXT,
        model TEXT,
        agent TEXT,
        body TEXT NOT NULL,
        tsv TSVECTOR GENERATED ALWAYS AS
            (to_tsvector('simple', translate(body, './-_:@', '      '))) STORED
    );
    -- Paths and names are found by their pieces, as FTS5 finds them.
    CREATE INDEX search_tsv ON search USING GIN (tsv);
    CREATE INDEX search_time ON search (time DESC);",
    ),
    // Pruning finds the oldest sessions, and a session's index rows,
    // without reading them all.
    (
        2,
        "sessions_by_updated",
        "CREATE INDEX sessions_by_updated ON sessions(updated);
         CREATE INDEX search_by_session ON search(session_id);",
    ),
    // SQLite's version 3 rebuilt its index; this one needed nothing (and
    // archives from before refinery went from 2 to 4).
    (3, "contentless_search", ""),
    // How far each opencode database was imported (`import_db`).
    (
        4,
        "import_marks",
        "CREATE TABLE import_marks (
        source TEXT PRIMARY KEY,
        updated BIGINT NOT NULL,
        rowid_max BIGINT NOT NULL
    );",
    ),
    (5, "imports", super::resume::POSTGRES_TABLE),
    (6, "event_blocks", POSTGRES_BLOCKS),
    (7, "index_in_rows", super::postgres_search::MIGRATION_7),
    // SQLite's index merges by sixteen: nothing changes here.
    (8, "sqlite_index_merges_by_sixteen", ""),
    (9, "parts_in_the_log", POSTGRES_PARTS_IN_THE_LOG),
    (
        10,
        "block_documents",
        super::postgres_blocks_search::MIGRATION_10,
    ),
    (
        11,
        "block_spans",
        super::postgres_blocks_search::MIGRATION_11,
    ),
];

/// Migration 9 (PostgreSQL): a part the log holds as it is keeps only its
/// place there (`logged`, as SQLite's since 6) and an empty `raw`; states
/// are told apart by their JSON's hash. Rows written before keep their
/// JSON and no hash: it is computed from their JSON where compared.
const POSTGRES_PARTS_IN_THE_LOG: &str =
    "ALTER TABLE parts ADD COLUMN logged BIGINT, ADD COLUMN hash BIGINT;";
