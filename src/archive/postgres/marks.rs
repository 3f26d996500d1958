//! How far each opencode database was imported, in the PostgreSQL archive.

use crate::archive::engine::{ArchiveError, ImportMark, refuse_write};
use crate::archive::postgres::{PgArchive, classify};

pub(in crate::archive) fn import_mark(
    a: &mut PgArchive,
    source: &str,
) -> Result<Option<ImportMark>, ArchiveError> {
    let row =
        a.rt.block_on(a.client.query_opt(
            "SELECT updated, rowid_max FROM import_marks WHERE source = $1",
            &[&source],
        ))
        .map_err(|e| classify(&a.place, &e))?;
    Ok(row.map(|r| ImportMark {
        updated: r.get(0),
        rowid_max: r.get(1),
    }))
}

pub(in crate::archive) fn set_import_mark(
    a: &mut PgArchive,
    source: &str,
    mark: ImportMark,
) -> Result<(), ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    a.rt.block_on(a.client.execute(
        "INSERT INTO import_marks (source, updated, rowid_max) VALUES ($1, $2, $3)
         ON CONFLICT (source) DO UPDATE SET updated = excluded.updated,
           rowid_max = excluded.rowid_max",
        &[&source, &mark.updated, &mark.rowid_max],
    ))
    .map(drop)
    .map_err(|e| classify(&a.place, &e))
}
