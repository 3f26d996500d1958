//! Keeping the PostgreSQL archive bounded: its size, its oldest sessions,
//! and deleting whole sessions (events, latest state and its index).

use crate::archive::engine::{ArchiveError, refuse_write};
use tokio_postgres::GenericClient;

use crate::archive::postgres::{PgArchive, classify};

/// The bytes of the rows the tables hold. Not the files' size: that
/// drops only on VACUUM FULL, and a cap measured against it would prune
/// again and again after a delete.
pub(in crate::archive) fn size(a: &mut PgArchive) -> Result<u64, ArchiveError> {
    let row =
        a.rt.block_on(a.client.query_one(
            "SELECT ((SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM event_blocks t)
                   + (SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM event_keys t)
                   + (SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM parts t)
                   + (SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM messages t)
                   + (SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM sessions t))::bigint",
            &[],
        ))
        .map_err(|e| classify(&a.place, &e))?;
    Ok(row.get::<_, i64>(0).max(0) as u64)
}

/// During an import, the word indexes' pending lists (GIN's fast
/// update) grow to 64 MB before this connection merges them into the
/// indexes, not 4 MB: the same words are merged once for many blocks
/// (an import of real sessions took a sixth less time). A merge done by
/// the write that fills the list held that write, and the whole import
/// behind it, for seconds; so another connection (`Merger`) merges them
/// beside the writes, every `MERGE_EVERY` batches, and the list rarely
/// fills. What is left is merged at the end, so searches do not read a
/// long list after it. A writer that may not merge them (not their
/// owner) leaves that to autovacuum, as before.
pub(in crate::archive) fn bulk(a: &mut PgArchive, on: bool) {
    if on {
        a.merger = Merger::open(a);
    } else if let Some(m) = a.merger.take() {
        // Its last merge done, the one below finds little left.
        if let Some(merging) = m.merging {
            let _ = a.rt.block_on(merging);
        }
    }
    let sql = if on {
        "SET gin_pending_list_limit = '64MB'".to_string()
    } else {
        format!("RESET gin_pending_list_limit; {MERGE_PENDING}")
    };
    if let Err(e) = a.rt.block_on(a.client.batch_execute(&sql)) {
        tracing::warn!("{}: the word indexes' pending lists: {e}", a.place);
    }
}

/// The word indexes' pending lists merged into them (each that exists).
const MERGE_PENDING: &str = "SELECT gin_clean_pending_list(i)
     FROM unnest(ARRAY[to_regclass('event_blocks_tsv'), to_regclass('parts_tsv'),
                       to_regclass('sessions_tsv')]) AS i
     WHERE i IS NOT NULL";

/// Batches written between two merges of the pending lists: about a
/// quarter of the 64 MB an import's blocks of real sessions fill.
const MERGE_EVERY: u32 = 8;

/// The pending lists' merges an import asks of a connection of their own.
pub(in crate::archive) struct Merger {
    client: std::sync::Arc<tokio_postgres::Client>,
    /// Batches written since the last merge was asked.
    batches: u32,
    /// The merge under way, if any.
    merging: Option<tokio::task::JoinHandle<()>>,
}

impl Merger {
    /// Another connection to `a`'s archive; none when it cannot be had
    /// (the write's own merges then do the work, as before).
    fn open(a: &PgArchive) -> Option<Merger> {
        if a.read_only.is_some() {
            return None;
        }
        let (config, tls) = a.again.clone();
        let (client, connection) = match a.rt.block_on(config.connect(tls)) {
            Ok(c) => c,
            Err(e) => {
                tracing::info!("{}: pending lists merged by the writes: {e}", a.place);
                return None;
            }
        };
        a.rt.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("archive merging connection: {e}");
            }
        });
        Some(Merger {
            client: std::sync::Arc::new(client),
            batches: 0,
            merging: None,
        })
    }
}

/// A batch was written: every `MERGE_EVERY`, the pending lists are merged
/// on the other connection, while the writes go on (the task runs as this
/// connection's work is awaited; the server merges meanwhile).
pub(in crate::archive) fn written(a: &mut PgArchive) {
    let Some(m) = a.merger.as_mut() else {
        return;
    };
    m.batches += 1;
    if m.batches < MERGE_EVERY || m.merging.as_ref().is_some_and(|t| !t.is_finished()) {
        return;
    }
    m.batches = 0;
    let client = m.client.clone();
    let place = a.place.clone();
    m.merging = Some(a.rt.spawn(async move {
        if let Err(e) = client.batch_execute(MERGE_PENDING).await {
            tracing::debug!("{place}: pending lists not merged beside the writes: {e}");
        }
    }));
}

pub(in crate::archive) fn oldest_sessions(
    a: &mut PgArchive,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<(String, i64)>, ArchiveError> {
    let limit = i64::from(limit);
    let rows =
        a.rt.block_on(a.client.query(
            "SELECT id, updated FROM sessions WHERE $1::bigint IS NULL OR updated < $1
             ORDER BY updated, id LIMIT $2",
            &[&before, &limit],
        ))
        .map_err(|e| classify(&a.place, &e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

pub(in crate::archive) fn unlisted_sessions(
    a: &mut PgArchive,
) -> Result<Vec<String>, ArchiveError> {
    let rows =
        a.rt.block_on(a.client.query(
            "SELECT DISTINCT session_id FROM event_blocks
             WHERE session_id NOT IN (SELECT id FROM sessions) ORDER BY session_id",
            &[],
        ))
        .map_err(|e| classify(&a.place, &e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

pub(in crate::archive) fn span(a: &mut PgArchive) -> Result<Option<(i64, i64)>, ArchiveError> {
    let row =
        a.rt.block_on(
            a.client
                .query_one("SELECT min(updated), max(updated) FROM sessions", &[]),
        )
        .map_err(|e| classify(&a.place, &e))?;
    let (oldest, newest): (Option<i64>, Option<i64>) = (row.get(0), row.get(1));
    Ok(oldest.zip(newest))
}

pub(in crate::archive) fn delete_sessions(
    a: &mut PgArchive,
    ids: &[String],
) -> Result<u64, ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    let version = a.version;
    let result = a.rt.block_on(async {
        if a.rehearsing {
            // Into the rehearsal's transaction.
            return delete_in(&a.client, ids, version).await;
        }
        let tx = a.client.transaction().await?;
        let gone = delete_in(&tx, ids, version).await?;
        tx.commit().await?;
        Ok(gone)
    });
    result.map_err(|e: tokio_postgres::Error| classify(&a.place, &e))
}

/// Whole sessions deleted through `db` (a transaction, or the client in a
/// rehearsal's): how many went.
async fn delete_in(
    db: &impl GenericClient,
    ids: &[String],
    version: i64,
) -> Result<u64, tokio_postgres::Error> {
    // Whose checkpoints and import marks may go (`forget_imports`).
    let files: Vec<String> = db
        .query(
            "SELECT DISTINCT file FROM sessions WHERE id = ANY($1) AND file IS NOT NULL",
            &[&ids],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    crate::archive::postgres::event_log::delete(db, ids).await?;
    let mut tables = vec!["parts", "messages"];
    if version >= crate::archive::postgres::redactions::SINCE {
        tables.push("redactions");
    }
    // What waited on people and on providers goes with its session.
    if version >= crate::archive::prompt_waits::SINCE {
        tables.push("prompts");
    }
    if version >= crate::archive::spend::SINCE {
        tables.push("retries");
    }
    for table in tables {
        db.execute(
            &format!("DELETE FROM {table} WHERE session_id = ANY($1)"),
            &[&ids],
        )
        .await?;
    }
    let gone = db
        .execute("DELETE FROM sessions WHERE id = ANY($1)", &[&ids])
        .await?;
    // As SQLite's `forget_imports`: a file or database none of whose
    // sessions is left may be imported again.
    if !files.is_empty() {
        db.execute(
            "DELETE FROM imports WHERE file = ANY($1)
             AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.file = imports.file)",
            &[&files],
        )
        .await?;
        db.execute(
            "DELETE FROM import_marks WHERE source = ANY($1)
             AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.file = import_marks.source)",
            &[&files],
        )
        .await?;
    }
    Ok(gone)
}

/// A rehearsal (`Engine::rehearse`): one transaction, rolled back at its
/// end.
pub(in crate::archive) fn rehearse(a: &mut PgArchive, on: bool) -> Result<(), ArchiveError> {
    if a.rehearsing == on {
        return Ok(());
    }
    if let (true, Some(why)) = (on, &a.read_only) {
        return Err(refuse_write(&a.place, why));
    }
    let sql = if on { "BEGIN" } else { "ROLLBACK" };
    a.rt.block_on(a.client.batch_execute(sql))
        .map_err(|e| classify(&a.place, &e))?;
    a.rehearsing = on;
    Ok(())
}

pub(in crate::archive) fn vacuum(a: &mut PgArchive) -> Result<(), ArchiveError> {
    if let Some(why) = &a.read_only {
        return Err(refuse_write(&a.place, why));
    }
    a.rt.block_on(
        a.client
            .batch_execute("VACUUM (ANALYZE) event_blocks, event_keys, parts, messages, sessions"),
    )
    .map_err(|e| classify(&a.place, &e))
}
