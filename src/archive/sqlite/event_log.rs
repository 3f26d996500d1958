//! SQLite's side of the event log in blocks (`super::blocks`) and of the
//! parts' compressed JSON: writing a batch's events, reading a session's
//! log back, freeing a session's keys, and migration 6, which moves an
//! archive of the one-row-per-event layout into this one.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::archive::blocks;
use crate::archive::rows::EventRow;

/// The error of a block that cannot be read, as SQLite's own kind.
fn damaged(e: String) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(e.into())
}

/// Log the events new to the archive: each claims its key's slot, the new
/// ones are written as one block per session. How many were new, and where
/// each new one is (by key).
pub(in crate::archive) fn write_events<'a>(
    tx: &Transaction<'_>,
    events: &'a [EventRow],
    packed: Option<&crate::archive::rows::Packed>,
) -> rusqlite::Result<(u64, HashMap<&'a str, i64>)> {
    let mut at = HashMap::new();
    if events.is_empty() {
        return Ok((0, at));
    }
    let mut claim = tx.prepare(CLAIM_SQL)?;
    let mut holder = tx.prepare(HOLDER_SQL)?;
    let mut fresh: Vec<(&EventRow, i64)> = Vec::with_capacity(events.len());
    for e in events {
        let first = blocks::slot(&e.session_id, &e.key);
        if let Some(slot) = claim_slot(&mut claim, &mut holder, &e.key, first)? {
            fresh.push((e, slot));
        }
    }
    let mut block = tx.prepare(
        "INSERT INTO event_blocks (session_id, time, count, todo, slots, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let packed = crate::archive::rows::Packed::of_all(packed, events.len(), fresh.len());
    let groups = blocks::group(&fresh, packed).map_err(damaged)?;
    for b in &groups {
        block.execute(params![
            b.session_id,
            b.time,
            b.count,
            b.todo,
            b.slots,
            b.data
        ])?;
        let pk = tx.last_insert_rowid();
        for (i, key) in b.keys.iter().enumerate() {
            at.insert(*key, blocks::logged_at(pk, i));
        }
    }
    Ok((fresh.len() as u64, at))
}

/// The slot `key` claims, from its first try `slot` (`claim` and `holder`
/// as `write_events` prepares them): `None` when the key is there already.
pub(in crate::archive) fn claim_slot(
    claim: &mut rusqlite::Statement<'_>,
    holder: &mut rusqlite::Statement<'_>,
    key: &str,
    mut slot: i64,
) -> rusqlite::Result<Option<i64>> {
    loop {
        if claim.execute(params![slot, key])? == 1 {
            return Ok(Some(slot));
        }
        let held: String = holder.query_row([slot], |r| r.get(0))?;
        if held == key {
            return Ok(None);
        }
        slot = blocks::next_slot(slot);
    }
}

/// The statements `claim_slot` runs.
pub(in crate::archive) const CLAIM_SQL: &str =
    "INSERT INTO event_keys (slot, key) VALUES (?1, ?2) ON CONFLICT (slot) DO NOTHING";
pub(in crate::archive) const HOLDER_SQL: &str = "SELECT key FROM event_keys WHERE slot = ?1";

/// Reads parts' JSON, from their rows or from the log, each block
/// unpacked once.
#[derive(Default)]
pub(in crate::archive) struct PartReader {
    /// Blocks read so far: decompressed, with where each event is (a hit
    /// reads one event of its block; the others stay bytes).
    blocks: HashMap<i64, (Vec<u8>, Vec<std::ops::Range<usize>>)>,
}

impl PartReader {
    /// A part's JSON: from the log (`logged`), compressed (a blob, since
    /// schema 6), or text (before).
    pub(in crate::archive) fn raw(
        &mut self,
        conn: &Connection,
        raw: ValueRef<'_>,
        logged: Option<i64>,
    ) -> rusqlite::Result<String> {
        let Some(at) = logged else {
            return part_raw(raw);
        };
        let (block, index) = blocks::logged_place(at);
        let (bytes, spans) = match self.blocks.entry(block) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let data: Vec<u8> = conn.query_row(
                    "SELECT data FROM event_blocks WHERE pk = ?1",
                    [block],
                    |r| r.get(0),
                )?;
                let bytes = blocks::decompress(&data).map_err(damaged)?;
                let spans = blocks::spans(&bytes).map_err(damaged)?;
                v.insert((bytes, spans))
            }
        };
        let span = spans
            .get(index)
            .cloned()
            .ok_or_else(|| damaged("a part's place in the log is gone".into()))?;
        let event = blocks::event_at(bytes, span).map_err(damaged)?;
        blocks::part_of_event(&event).ok_or_else(|| damaged("a logged part is not a part".into()))
    }
}

/// A session's log, in the order it was written.
pub(in crate::archive) fn events(
    conn: &Connection,
    session_id: &str,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT data FROM event_blocks WHERE session_id = ?1 ORDER BY pk")?;
    let mut rows = stmt.query([session_id])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let data = row.get_ref(0)?.as_blob()?;
        out.extend(blocks::unpack(data).map_err(damaged)?);
    }
    Ok(out)
}

/// The last `todo.updated` of a session's log, if any.
pub(in crate::archive) fn last_todo(
    conn: &Connection,
    session_id: &str,
) -> rusqlite::Result<Option<String>> {
    let found: Option<(Vec<u8>, i64)> = conn
        .query_row(
            "SELECT data, todo FROM event_blocks WHERE session_id = ?1 AND todo IS NOT NULL
             ORDER BY pk DESC LIMIT 1",
            [session_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((data, todo)) = found else {
        return Ok(None);
    };
    let mut events = blocks::unpack(&data).map_err(damaged)?;
    let todo = usize::try_from(todo).unwrap_or(usize::MAX);
    Ok((todo < events.len()).then(|| events.swap_remove(todo)))
}

/// A session's log gone: its blocks and the keys they claimed.
pub(in crate::archive) fn delete(
    tx: &rusqlite::Connection,
    session_id: &str,
) -> rusqlite::Result<()> {
    let mut slots = tx.prepare("SELECT slots FROM event_blocks WHERE session_id = ?1")?;
    let mut free = tx.prepare("DELETE FROM event_keys WHERE slot = ?1")?;
    let claimed: Vec<Vec<u8>> = slots
        .query_map([session_id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for slot in claimed.iter().flat_map(|b| blocks::slots_of(b)) {
        free.execute([slot])?;
    }
    tx.prepare("DELETE FROM event_blocks WHERE session_id = ?1")?
        .execute([session_id])?;
    Ok(())
}

/// A part's JSON as kept: compressed (a blob) since schema 6, text before.
pub(in crate::archive) fn part_raw(v: ValueRef<'_>) -> rusqlite::Result<String> {
    match v {
        ValueRef::Blob(b) => {
            let raw = blocks::decompress(b).map_err(damaged)?;
            String::from_utf8(raw).map_err(|e| damaged(e.to_string()))
        }
        ValueRef::Text(t) => Ok(String::from_utf8_lossy(t).into_owned()),
        _ => Ok(String::new()),
    }
}

/// What tells two states of a part apart (the kept JSON may be a
/// reference into the log).
pub(in crate::archive) fn part_hash(raw: &str) -> i64 {
    // Eight bytes at a time: an import hashes every part's JSON once, and
    // FNV's byte at a time was a tenth of its reading stage. A part kept
    // under the older hash is written once more, the same.
    crate::archive::encode::quick_hash(raw.as_bytes()) as i64
}

/// A part's JSON as it is kept.
pub(in crate::archive) fn pack_part(raw: &str) -> rusqlite::Result<Vec<u8>> {
    blocks::compress(raw.as_bytes()).map_err(damaged)
}

/// How many of the old log's events go in one block when it is moved.
const MOVED_BLOCK: usize = 256;

/// Migration 6's data: the old one-row-per-event log into blocks (each
/// session's events in their order, a block per `MOVED_BLOCK`), its keys
/// into `event_keys`, the parts' JSON compressed; then the old log goes.
/// Runs in the migration's transaction, after migration 6's SQL.
pub(in crate::archive) fn move_to_blocks(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let had_log: bool = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'events'",
        [],
        |r| Ok(r.get::<_, i64>(0)? > 0),
    )?;
    if had_log {
        let mut old =
            tx.prepare("SELECT key, session_id, time, json FROM events ORDER BY session_id, pk")?;
        let mut rows = old.query([])?;
        let mut pending: Vec<EventRow> = Vec::new();
        while let Some(r) = rows.next()? {
            let e = EventRow {
                key: r.get(0)?,
                session_id: r.get(1)?,
                time_ms: r.get(2)?,
                json: r.get(3)?,
            };
            let other_session = pending
                .first()
                .is_some_and(|p| p.session_id != e.session_id);
            if other_session || pending.len() >= MOVED_BLOCK {
                write_events(tx, &pending, None)?;
                pending.clear();
            }
            pending.push(e);
        }
        write_events(tx, &pending, None)?;
        drop(rows);
        drop(old);
        tx.execute_batch("DROP TABLE events;")?;
    }
    // A thousand parts at a time: an archive's parts never sit in memory.
    let mut next = tx.prepare(
        "SELECT pk, raw FROM parts WHERE pk > ?1 AND typeof(raw) = 'text' ORDER BY pk LIMIT 1000",
    )?;
    let mut pack = tx.prepare("UPDATE parts SET raw = ?2, hash = ?3 WHERE pk = ?1")?;
    let mut after = i64::MIN;
    loop {
        let texts: Vec<(i64, String)> = next
            .query_map([after], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let Some(last) = texts.last() else { break };
        after = last.0;
        for (pk, raw) in &texts {
            pack.execute(params![pk, pack_part(raw)?, part_hash(raw)])?;
        }
    }
    Ok(())
}
