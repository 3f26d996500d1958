//! SQLite's side of `crate::archive::resume`: the `imports` table and a
//! file's checkpoint in it.

use crate::archive::engine::ArchiveError;
use crate::archive::resume::{Checkpoint, FileMark};

/// Migration 5.
pub const SQLITE_TABLE: &str = "CREATE TABLE imports (
    file TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL,
    head TEXT NOT NULL,
    records INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    done INTEGER NOT NULL
);";

pub(in crate::archive) fn save(
    conn: &rusqlite::Connection,
    c: &Checkpoint,
) -> Result<(), rusqlite::Error> {
    conn.prepare(
        "INSERT INTO imports (file, size, mtime, head, records, bytes, done)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (file) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
           head = excluded.head, records = excluded.records, bytes = excluded.bytes,
           done = excluded.done",
    )?
    .execute(rusqlite::params![
        c.mark.file,
        c.mark.size,
        c.mark.mtime,
        c.mark.head,
        c.records,
        c.bytes,
        c.done
    ])
    .map(drop)
}

pub(in crate::archive) fn load(
    conn: &rusqlite::Connection,
    place: &str,
    file: &str,
) -> Result<Option<Checkpoint>, ArchiveError> {
    use rusqlite::OptionalExtension;
    let found = conn
        .query_row(
            "SELECT size, mtime, head, records, bytes, done FROM imports WHERE file = ?1",
            [file],
            |r| {
                Ok(Checkpoint {
                    mark: FileMark {
                        file: file.to_string(),
                        size: r.get(0)?,
                        mtime: r.get(1)?,
                        head: r.get(2)?,
                    },
                    records: r.get(3)?,
                    bytes: r.get(4)?,
                    done: r.get(5)?,
                })
            },
        )
        .optional();
    match found {
        Ok(c) => Ok(c),
        // An archive of an older schema opened read-only has no record.
        Err(e) if e.to_string().contains("no such table") => Ok(None),
        Err(e) => Err(crate::archive::sqlite::classify(place, &e)),
    }
}
