//! SQLite's migrations (`crate::archive::schema` says how they are run).

use crate::archive::schema::Migration;
use crate::archive::sqlite::migrate::Step;

/// Rust steps run after their version's SQL.
pub const STEPS: &[(i64, Step)] = &[
    (6, crate::archive::sqlite::event_log::move_to_blocks),
    (12, crate::archive::sqlite::one_id::step),
    (19, crate::archive::sqlite::reindex::step),
    (20, crate::archive::sqlite::reindex::step),
    (21, crate::archive::sqlite::reindex::flush_by_batch),
    (23, crate::archive::sqlite::reindex::merge_wider),
];

/// The migrations, in order.
pub const MIGRATIONS: &[Migration] = &[
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
    // and its rowids follow time, newest last (`search`): a word
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
    (5, "imports", crate::archive::sqlite::resume::SQLITE_TABLE),
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
    // One session, one id: a fleet's sessions were kept under the fleet's
    // ids (`crate::archive::one_id`); its step moves the sessions and logs.
    (
        12,
        "one_id_per_session",
        crate::archive::sqlite::one_id::SQL,
    ),
    // What redaction took out of each part, message and title, by rule.
    (13, "redactions", crate::archive::sqlite::redactions::SQL),
    // Sessions a prune never takes (and PostgreSQL's one policy).
    (14, "pins", crate::archive::sqlite::pins::SQL),
    // Every answer to a prompt, on record.
    (15, "answers", crate::archive::sqlite::answers::SQL),
    // A tool call's error in its row: outcomes counted without its JSON.
    (16, "tool_call_errors", crate::archive::tool_calls::SQL),
    // Every prompt seen asked and settled, timed: what waited on people.
    (17, "prompts", crate::archive::prompt_waits::SQL),
    // Every retry a session waited through; a message's cost in its row.
    (18, "spend", crate::archive::spend::SQL),
    // The word index again, with every word's first three letters indexed
    // (`super::reindex`).
    (19, "prefix_index", crate::archive::sqlite::reindex::SQL),
    // The word index once more, without positions (`super::reindex`).
    (
        20,
        "index_without_positions",
        crate::archive::sqlite::reindex::SQL_20,
    ),
    // The word index writes a batch as one segment, not one a megabyte
    // (`reindex::flush_by_batch`).
    (21, "index_flushes_by_batch", ""),
    // PostgreSQL's blocks stored without its compression: nothing here.
    (22, "blocks_stored_as_they_are", ""),
    // The word index merges its segments sixty-four at a time
    // (`reindex::merge_wider`).
    (23, "index_merges_wider", ""),
];

/// Migration 6 (SQLite): the event log in compressed blocks with its keys
/// in a lean table (`super::blocks`); a part's JSON is a reference into the
/// log (`logged`) when the log holds it as it is, else compressed, and
/// compared by its hash. The old log's rows and the parts'
/// JSON are moved by `event_log::move_to_blocks`, its step.
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
