//! One batch written in the open transaction: the event log, then the
//! sessions, messages and parts (each upserted only when newer), then the
//! word index's documents out and in, in rowid order.

use std::borrow::Cow;
use std::collections::HashMap;

use rusqlite::{OptionalExtension, Transaction, params};

use super::PART_INSERT;
use crate::archive::rows::{Batch, PartRow, Prepared, Written};
use crate::archive::sqlite::document::document;
use crate::archive::sqlite::search::{part_doc, title_doc};

/// A document's rowid, its row's key, whether it is a title, and its text.
type Doc<'a> = (i64, i64, bool, Cow<'a, str>);

pub(super) fn batch(tx: &Transaction<'_>, batch: &Batch) -> rusqlite::Result<Written> {
    let mut written = Written::default();
    let (fresh, logged_at) =
        crate::archive::sqlite::event_log::write_events(tx, &batch.events, batch.packed.as_ref())?;
    written.events = fresh;
    // A document's rowid follows its row's time (`search`):
    // the one to take out is found by the time the row had. The
    // documents out and in are written at the end, in rowid order.
    let mut gone: Vec<i64> = Vec::new();
    let mut docs: Vec<Doc<'_>> = Vec::new();
    sessions(tx, batch, &mut gone, &mut docs)?;
    messages(tx, batch)?;
    written.parts = parts(tx, batch, &logged_at, &mut gone, &mut docs)?;
    index(tx, gone, docs)?;
    Ok(written)
}

/// What `parts` would make of a part's row, made ahead (`Engine::rows_ahead`).
pub(super) fn prepare(p: &mut PartRow) {
    p.prepared = Some(Prepared {
        document: if p.text.trim().is_empty() {
            String::new()
        } else {
            document(&p.text).into_owned()
        },
        hash: crate::archive::sqlite::event_log::part_hash(&p.raw),
    });
}

/// Sessions, with their titles' documents.
fn sessions<'a>(
    tx: &Transaction<'_>,
    batch: &'a Batch,
    gone: &mut Vec<i64>,
    docs: &mut Vec<Doc<'a>>,
) -> rusqlite::Result<()> {
    let o = &batch.origin;
    let mut session = tx
        .prepare(
            "INSERT INTO sessions (id, parent_id, title, directory, server, host, file, created, updated, raw)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id,
               title = excluded.title, directory = coalesce(excluded.directory, directory),
               server = coalesce(server, excluded.server), host = coalesce(host, excluded.host),
               file = coalesce(file, excluded.file), created = excluded.created,
               updated = excluded.updated, raw = excluded.raw
             WHERE excluded.updated > sessions.updated OR (excluded.updated = sessions.updated AND excluded.raw <> sessions.raw)
             RETURNING pk, updated",
        )
        ?;
    let mut old_title = tx.prepare("SELECT pk, updated FROM sessions WHERE id = ?1")?;
    for s in &batch.sessions {
        let old: Option<(i64, i64)> = old_title
            .query_row([&s.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let new: Option<(i64, i64)> = session
            .query_row(
                params![
                    s.id,
                    s.parent_id,
                    s.title,
                    s.directory,
                    s.server.as_ref().or(o.server.as_ref()),
                    o.host,
                    o.file,
                    s.created,
                    s.updated,
                    s.raw
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((pk, updated)) = new {
            if let Some((old_pk, old_updated)) = old {
                gone.push(title_doc(old_pk, old_updated));
            }
            docs.push((title_doc(pk, updated), pk, true, document(&s.title)));
        }
    }
    Ok(())
}

fn messages(tx: &Transaction<'_>, batch: &Batch) -> rusqlite::Result<()> {
    if batch.messages.is_empty() {
        return Ok(());
    }
    let mut message = tx.prepare(
        "INSERT INTO messages (id, session_id, role, model, agent, created, updated, raw,
               cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read,
               tokens_cache_write)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, role = excluded.role,
               model = excluded.model, agent = excluded.agent, created = excluded.created,
               updated = excluded.updated, raw = excluded.raw, cost = excluded.cost,
               tokens_input = excluded.tokens_input, tokens_output = excluded.tokens_output,
               tokens_reasoning = excluded.tokens_reasoning,
               tokens_cache_read = excluded.tokens_cache_read,
               tokens_cache_write = excluded.tokens_cache_write
             WHERE excluded.updated > messages.updated OR (excluded.updated = messages.updated AND excluded.raw <> messages.raw)",
    )?;
    for m in &batch.messages {
        let f = m.spend.as_ref();
        let t = |n: fn(&crate::source::opencode_db::usage::Figures) -> u64| {
            f.map(|f| n(f).min(i64::MAX as u64) as i64)
        };
        message.execute(params![
            m.id,
            m.session_id,
            m.role,
            m.model,
            m.agent,
            m.created,
            m.updated,
            m.raw,
            f.map(|f| f.cost),
            t(|f| f.input),
            t(|f| f.output),
            t(|f| f.reasoning),
            t(|f| f.cache_read),
            t(|f| f.cache_write),
        ])?;
    }
    Ok(())
}

/// Parts, with their texts' documents. How many rows changed.
fn parts<'a>(
    tx: &Transaction<'_>,
    batch: &'a Batch,
    logged_at: &HashMap<&str, i64>,
    gone: &mut Vec<i64>,
    docs: &mut Vec<Doc<'a>>,
) -> rusqlite::Result<u64> {
    // None: nothing prepared (a migration's step writes sessions alone,
    // at a schema whose parts may lack today's columns).
    if batch.parts.is_empty() {
        return Ok(0);
    }
    let mut written = 0;
    let mut part = tx
        .prepare(&format!(
            "{PART_INSERT}
             ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id,
               session_id = excluded.session_id, kind = excluded.kind, tool = excluded.tool,
               state = excluded.state, time = excluded.time, updated = excluded.updated,
               raw = excluded.raw, hash = excluded.hash, logged = excluded.logged,
               error = excluded.error
             WHERE excluded.updated > parts.updated OR (excluded.updated = parts.updated AND excluded.hash IS NOT parts.hash)
             RETURNING pk, time"
        ))
        ?;
    // A part the archive does not hold yet (an import's usual
    // case) is inserted in one step; only one it holds is looked
    // up first, for the document to take out. No RETURNING here:
    // SQLite makes a temporary table for each statement that has
    // one, a page to clear per part.
    let mut fresh_part = tx.prepare(&format!("{PART_INSERT} ON CONFLICT (id) DO NOTHING"))?;
    let mut old_part = tx.prepare("SELECT pk, time FROM parts WHERE id = ?1")?;
    for p in &batch.parts {
        // No second copy of what the log holds as it is.
        let logged = p
            .logged_as
            .as_deref()
            .and_then(|k| logged_at.get(k).copied());
        let raw = match logged {
            Some(_) => Vec::new(),
            None => crate::archive::sqlite::event_log::pack_part(&p.raw)?,
        };
        let hash = match &p.prepared {
            Some(made) => made.hash,
            None => crate::archive::sqlite::event_log::part_hash(&p.raw),
        };
        let values = params![
            p.id,
            p.message_id,
            p.session_id,
            p.kind,
            p.tool,
            p.state,
            p.time,
            p.updated,
            raw,
            hash,
            logged,
            p.error
        ];
        let pk_time = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?));
        let (old, new) = if fresh_part.execute(values)? == 1 {
            (None, Some((tx.last_insert_rowid(), p.time)))
        } else {
            let old: Option<(i64, i64)> = old_part.query_row([&p.id], pk_time).optional()?;
            let new = part.query_row(values, pk_time).optional()?;
            (old, new)
        };
        let Some((pk, time)) = new else { continue };
        written += 1;
        if let Some((old_pk, old_time)) = old {
            gone.push(part_doc(old_pk, old_time));
        }
        if p.text.trim().is_empty() {
            continue;
        }
        let text = match &p.prepared {
            Some(made) => Cow::Borrowed(made.document.as_str()),
            None => document(&p.text),
        };
        docs.push((part_doc(pk, time), pk, false, text));
    }
    Ok(written)
}

/// The documents out, then in, each in rowid order; while the index is
/// built again (`super::reindex`), in the new one too where it is past
/// their row.
fn index(tx: &Transaction<'_>, mut gone: Vec<i64>, mut docs: Vec<Doc<'_>>) -> rusqlite::Result<()> {
    let next = crate::archive::sqlite::reindex::state(tx)?;
    let tables: &[&str] = match next {
        Some(_) => &["search", "search_next"],
        None => &["search"],
    };
    // FTS5 writes what it holds as a new segment whenever a rowid
    // is not above the last one: in rowid order, a batch is one
    // segment rather than one for each session it touches.
    gone.sort_unstable();
    docs.sort_unstable_by_key(|d| d.0);
    for table in tables {
        // A document the new index does not hold yet is taken out of it
        // for nothing: FTS5 lets it be.
        let mut unindex = tx.prepare(&format!("DELETE FROM {table} WHERE rowid = ?1"))?;
        for doc in &gone {
            unindex.execute([doc])?;
        }
        let mut index = tx.prepare(&format!(
            "INSERT INTO {table} (rowid, body) VALUES (?1, ?2)"
        ))?;
        for (doc, pk, title, text) in &docs {
            if *table == "search" || next.is_some_and(|s| s.also_next(*pk, *title)) {
                index.execute(params![doc, text])?;
            }
        }
    }
    Ok(())
}
