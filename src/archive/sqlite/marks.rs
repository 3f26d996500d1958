//! How far each opencode database was imported, in the SQLite archive.

use rusqlite::{OptionalExtension, params};

use crate::archive::engine::{ArchiveError, ImportMark, refuse_write};
use crate::archive::sqlite::{SqliteArchive, classify};

pub(in crate::archive) fn import_mark(
    a: &mut SqliteArchive,
    source: &str,
) -> Result<Option<ImportMark>, ArchiveError> {
    a.conn
        .query_row(
            "SELECT updated, rowid_max FROM import_marks WHERE source = ?1",
            [source],
            |r| {
                Ok(ImportMark {
                    updated: r.get(0)?,
                    rowid_max: r.get(1)?,
                })
            },
        )
        .optional()
        .map_err(|e| classify(&a.place, &e))
}

pub(in crate::archive) fn set_import_mark(
    a: &mut SqliteArchive,
    source: &str,
    mark: ImportMark,
) -> Result<(), ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    a.conn
        .execute(
            "INSERT INTO import_marks (source, updated, rowid_max) VALUES (?1, ?2, ?3)
             ON CONFLICT (source) DO UPDATE SET updated = excluded.updated,
               rowid_max = excluded.rowid_max",
            params![source, mark.updated, mark.rowid_max],
        )
        .map(drop)
        .map_err(|e| classify(&a.place, &e))
}
