//! Keeping the SQLite archive bounded: its size, its oldest sessions, and
//! deleting whole sessions (events, latest state, index rows).

use rusqlite::{OptionalExtension, params};

use crate::archive::engine::{ArchiveError, refuse_write};
use crate::archive::sqlite::search::{PART_DOC_SQL, TITLE_DOC_SQL};
use crate::archive::sqlite::{SqliteArchive, classify};

/// The pages in use: the file less its free pages, so a delete shows at
/// once (the file itself shrinks only on VACUUM).
pub(in crate::archive) fn size(a: &mut SqliteArchive) -> Result<u64, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let pragma = |name: &str| -> Result<i64, ArchiveError> {
        a.conn
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .map_err(err)
    };
    let used = pragma("page_count")? - pragma("freelist_count")?;
    Ok((used.max(0) as u64) * pragma("page_size")?.max(0) as u64)
}

pub(in crate::archive) fn oldest_sessions(
    a: &mut SqliteArchive,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<(String, i64)>, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let mut stmt = a
        .conn
        .prepare(
            "SELECT id, updated FROM sessions WHERE ?1 IS NULL OR updated < ?1
             ORDER BY updated, id LIMIT ?2",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map(params![before, limit], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(err)
}

pub(in crate::archive) fn unlisted_sessions(
    a: &mut SqliteArchive,
) -> Result<Vec<String>, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let mut stmt = a
        .conn
        .prepare(
            "SELECT DISTINCT session_id FROM event_blocks
             WHERE session_id NOT IN (SELECT id FROM sessions) ORDER BY session_id",
        )
        .map_err(err)?;
    let rows = stmt.query_map([], |r| r.get(0)).map_err(err)?;
    rows.collect::<Result<Vec<String>, _>>().map_err(err)
}

pub(in crate::archive) fn span(a: &mut SqliteArchive) -> Result<Option<(i64, i64)>, ArchiveError> {
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let row: (Option<i64>, Option<i64>) = a
        .conn
        .query_row("SELECT min(updated), max(updated) FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(err)?;
    Ok(row.0.zip(row.1))
}

pub(in crate::archive) fn delete_sessions(
    a: &mut SqliteArchive,
    ids: &[String],
) -> Result<u64, ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    // A rehearsal's deletes go into its own transaction.
    let own = if a.rehearsing {
        None
    } else {
        Some(
            rusqlite::Transaction::new_unchecked(&a.conn, rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?,
        )
    };
    let tx: &rusqlite::Connection = own.as_deref().unwrap_or(&a.conn);
    let mut gone = 0;
    {
        // The index rows are keyed by the part's or the session's row and
        // time (`search`): found through the indexed tables, never
        // by scanning the index.
        let parts_docs = format!(
            "DELETE FROM search WHERE rowid IN (SELECT {PART_DOC_SQL} FROM parts WHERE session_id = ?1)"
        );
        let title_doc = format!(
            "DELETE FROM search WHERE rowid = (SELECT {TITLE_DOC_SQL} FROM sessions WHERE id = ?1)"
        );
        // While the index is built again, the new one's documents go too.
        let reindexing = crate::archive::sqlite::reindex::state(tx)
            .map_err(err)?
            .is_some();
        let next_docs = [&parts_docs, &title_doc]
            .map(|sql| sql.replacen("DELETE FROM search ", "DELETE FROM search_next ", 1));
        let mut sqls = vec![parts_docs.as_str(), title_doc.as_str()];
        if reindexing {
            sqls.extend(next_docs.iter().map(String::as_str));
        }
        sqls.extend([
            "DELETE FROM parts WHERE session_id = ?1",
            "DELETE FROM redactions WHERE session_id = ?1",
            "DELETE FROM messages WHERE session_id = ?1",
            // What waited on people and on providers goes with its session.
            "DELETE FROM prompts WHERE session_id = ?1",
            "DELETE FROM retries WHERE session_id = ?1",
        ]);
        let mut steps = sqls
            .into_iter()
            .map(|sql| tx.prepare(sql))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        let mut session = tx
            .prepare("DELETE FROM sessions WHERE id = ?1 RETURNING file")
            .map_err(err)?;
        let mut files = std::collections::BTreeSet::new();
        for id in ids {
            for step in &mut steps {
                step.execute([id]).map_err(err)?;
            }
            crate::archive::sqlite::event_log::delete(tx, id).map_err(err)?;
            let mut rows = session.query([id]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                gone += 1;
                if let Some(file) = row.get::<_, Option<String>>(0).map_err(err)? {
                    files.insert(file);
                }
            }
        }
        forget_imports(tx, &files).map_err(err)?;
    }
    if let Some(own) = own {
        own.commit().map_err(err)?;
    }
    Ok(gone)
}

/// A rehearsal (`Engine::rehearse`): one write transaction, rolled back
/// at its end.
pub(in crate::archive) fn rehearse(a: &mut SqliteArchive, on: bool) -> Result<(), ArchiveError> {
    if a.rehearsing == on {
        return Ok(());
    }
    if let (true, Some(why)) = (on, &a.read_only) {
        return Err(refuse_write(&a.place, why));
    }
    let sql = if on { "BEGIN IMMEDIATE" } else { "ROLLBACK" };
    a.conn
        .execute_batch(sql)
        .map_err(|e| classify(&a.place, &e))?;
    a.rehearsing = on;
    Ok(())
}

/// A file or opencode database none of whose sessions is left is no
/// longer "archived": its checkpoint (`resume`) and import mark
/// (`import_db`) go with its last session, so importing it again brings
/// it back rather than saying it is already in. One with sessions left
/// keeps them: its pruned sessions are older than those kept, and
/// importing them again would only have them pruned again.
fn forget_imports(
    tx: &rusqlite::Connection,
    files: &std::collections::BTreeSet<String>,
) -> Result<(), rusqlite::Error> {
    let mut left = tx.prepare("SELECT EXISTS (SELECT 1 FROM sessions WHERE file = ?1)")?;
    let mut checkpoint = tx.prepare("DELETE FROM imports WHERE file = ?1")?;
    let mut mark = tx.prepare("DELETE FROM import_marks WHERE source = ?1")?;
    for file in files {
        if !left.query_row([file], |r| r.get::<_, bool>(0))? {
            checkpoint.execute([file])?;
            mark.execute([file])?;
        }
    }
    Ok(())
}

/// A VACUUM where more than a twentieth of the file's pages are free.
pub(in crate::archive) fn reclaim(a: &mut SqliteArchive) -> Result<bool, ArchiveError> {
    if a.read_only.is_some() {
        return Ok(false);
    }
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let pages: i64 = a
        .conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .map_err(err)?;
    let free: i64 = a
        .conn
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .map_err(err)?;
    if free * 20 <= pages {
        return Ok(false);
    }
    vacuum(a)?;
    Ok(true)
}

pub(in crate::archive) fn vacuum(a: &mut SqliteArchive) -> Result<(), ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    a.conn.execute_batch("VACUUM").map_err(err)?;
    // The WAL holds the copy VACUUM wrote: fold it back and truncate it.
    let _: Option<i64> = a
        .conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .optional()
        .map_err(err)?;
    Ok(())
}
