//! PostgreSQL's migrations (`crate::archive::schema` says how they are run).

use crate::archive::postgres::migrate::Step;
use crate::archive::schema::Migration;

/// Rust steps run after their version's SQL.
pub const STEPS: &[(i64, Step)] = &[
    (6, crate::archive::postgres::event_log::move_to_blocks_step),
    (12, crate::archive::postgres::one_id::step),
];

/// Migration 6 (PostgreSQL): the same blocks as SQLite's. The old log's
/// rows are moved by `event_log::move_to_blocks`, its step.
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

/// The migrations, in order.
pub const MIGRATIONS: &[Migration] = &[
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
    (
        5,
        "imports",
        crate::archive::postgres::resume::POSTGRES_TABLE,
    ),
    (6, "event_blocks", POSTGRES_BLOCKS),
    (
        7,
        "index_in_rows",
        crate::archive::postgres::search::MIGRATION_7,
    ),
    // SQLite's index merges by sixteen: nothing changes here.
    (8, "sqlite_index_merges_by_sixteen", ""),
    (9, "parts_in_the_log", POSTGRES_PARTS_IN_THE_LOG),
    (
        10,
        "block_documents",
        crate::archive::postgres::blocks_search::MIGRATION_10,
    ),
    (
        11,
        "block_spans",
        crate::archive::postgres::blocks_search::MIGRATION_11,
    ),
    // One session, one id (`crate::archive::one_id`): the rows here, the
    // logs in its step.
    (
        12,
        "one_id_per_session",
        crate::archive::postgres::one_id::SQL,
    ),
    // What redaction took out of each part, message and title, by rule.
    (13, "redactions", crate::archive::postgres::redactions::SQL),
    // Sessions a prune never takes (and PostgreSQL's one policy).
    (14, "pins", crate::archive::postgres::pins::SQL),
    // Every answer to a prompt, on record.
    (15, "answers", crate::archive::postgres::answers::SQL),
    // A tool call's error in its row: outcomes counted without its JSON.
    (16, "tool_call_errors", crate::archive::tool_calls::SQL),
    // Every prompt seen asked and settled, timed: what waited on people.
    (17, "prompts", crate::archive::prompt_waits::SQL),
    // Every retry a session waited through; a message's cost in its row.
    (18, "spend", crate::archive::spend::SQL),
    // SQLite's index of words' first letters: nothing here.
    (19, "prefix_index", ""),
    // SQLite's index without positions: nothing changes here.
    (20, "index_without_positions", ""),
    // SQLite's index flushing a batch at once: nothing here.
    (21, "index_flushes_by_batch", ""),
    (22, "blocks_stored_as_they_are", POSTGRES_BLOCKS_AS_THEY_ARE),
    // SQLite's index merging more segments at a time: nothing here.
    (23, "index_merges_wider", ""),
];

/// Migration 22 (PostgreSQL): a block's events (compressed by ocview) and
/// its document (distinct words) are stored as they are. The server tried
/// to compress both with `pglz` on every insert and gave up on each (no
/// block of a real corpus was kept compressed): a fifth of its work in an
/// import, for nothing.
const POSTGRES_BLOCKS_AS_THEY_ARE: &str =
    "ALTER TABLE event_blocks ALTER COLUMN data SET STORAGE EXTERNAL,
        ALTER COLUMN tsv SET STORAGE EXTERNAL;";

/// Migration 9 (PostgreSQL): a part the log holds as it is keeps only its
/// place there (`logged`, as SQLite's since 6) and an empty `raw`; states
/// are told apart by their JSON's hash. Rows written before keep their
/// JSON and no hash: it is computed from their JSON where compared.
const POSTGRES_PARTS_IN_THE_LOG: &str =
    "ALTER TABLE parts ADD COLUMN logged BIGINT, ADD COLUMN hash BIGINT;";
