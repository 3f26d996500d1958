//! SQLite's step of schema 12, one session one id (`crate::archive::one_id`
//! says why): after its SQL gave messages, parts and parents their own
//! session ids, each scoped session's row is written again under its own
//! id (newer state wins, the first origin stays, its title's document
//! follows) and its log's blocks are rewritten in place, their keys
//! claimed again under the session's own id.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::archive::blocks;
use crate::archive::one_id::{own_event, own_session_json};
use crate::archive::rows::{Batch, Origin, SessionRow};
use crate::archive::sqlite::event_log::{CLAIM_SQL, HOLDER_SQL, claim_slot};
use crate::archive::sqlite::search::TITLE_DOC_SQL;
use crate::model::store::fleet::bare;

/// Migration 12's SQL (SQLite): the rows that only name a session.
pub const SQL: &str =
    "UPDATE messages SET session_id = substr(session_id, 1, instr(session_id, '@') - 1)
        WHERE instr(session_id, '@') > 0;
    UPDATE parts SET session_id = substr(session_id, 1, instr(session_id, '@') - 1)
        WHERE instr(session_id, '@') > 0;
    UPDATE sessions SET parent_id = substr(parent_id, 1, instr(parent_id, '@') - 1)
        WHERE instr(parent_id, '@') > 0;";

/// Migration 12's step.
pub(in crate::archive) fn step(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    sessions(tx)?;
    logs(tx)
}

/// Each scoped session's row, out and in again under its own id.
fn sessions(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let scoped: Vec<(i64, SessionRow, Origin)> = tx
        .prepare(
            "SELECT pk, id, parent_id, title, directory, server, host, file, created, updated, raw
             FROM sessions WHERE instr(id, '@') > 0 ORDER BY pk",
        )?
        .query_map([], |r| {
            let raw: String = r.get(10)?;
            let row = SessionRow {
                id: bare(&r.get::<_, String>(1)?).to_string(),
                parent_id: r.get(2)?,
                title: r.get(3)?,
                directory: r.get(4)?,
                server: r.get(5)?,
                created: r.get(8)?,
                updated: r.get(9)?,
                raw: own_session_json(&raw).unwrap_or(raw),
            };
            let origin = Origin {
                server: None,
                host: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                file: r.get(7)?,
            };
            Ok((r.get(0)?, row, origin))
        })?
        .collect::<Result<_, _>>()?;
    let mut unindex = tx.prepare(&format!(
        "DELETE FROM search WHERE rowid = (SELECT {TITLE_DOC_SQL} FROM sessions WHERE pk = ?1)"
    ))?;
    let mut remove = tx.prepare("DELETE FROM sessions WHERE pk = ?1")?;
    for (pk, row, origin) in scoped {
        unindex.execute([pk])?;
        remove.execute([pk])?;
        let batch = Batch {
            origin,
            events: Vec::new(),
            sessions: vec![row],
            messages: Vec::new(),
            parts: Vec::new(),
            ..Batch::default()
        };
        crate::archive::sqlite::write::batch(tx, &batch)?;
    }
    Ok(())
}

/// Each block of a scoped session's log, its events and keys made again
/// under the session's own id; a hundred blocks at a time.
fn logs(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let mut next = tx.prepare(
        "SELECT pk, session_id, slots, data FROM event_blocks
         WHERE pk > ?1 AND instr(session_id, '@') > 0 ORDER BY pk LIMIT 100",
    )?;
    let mut key_of = tx.prepare("SELECT key FROM event_keys WHERE slot = ?1")?;
    let mut free = tx.prepare("DELETE FROM event_keys WHERE slot = ?1")?;
    let mut claim = tx.prepare(CLAIM_SQL)?;
    let mut holder = tx.prepare(HOLDER_SQL)?;
    let mut rewrite =
        tx.prepare("UPDATE event_blocks SET session_id = ?2, slots = ?3, data = ?4 WHERE pk = ?1")?;
    let mut after = i64::MIN;
    loop {
        let found: Vec<(i64, String, Vec<u8>, Vec<u8>)> = next
            .query_map([after], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        let Some(last) = found.last() else { break };
        after = last.0;
        for (pk, session_id, slots, data) in found {
            let own = bare(&session_id);
            let lines = blocks::unpack(&data).map_err(damaged)?;
            let mut claimed = Vec::with_capacity(lines.len());
            let mut events = Vec::with_capacity(lines.len());
            let slots = blocks::slots_of(&slots);
            for (i, line) in lines.iter().enumerate() {
                let Some(&slot) = slots.get(i) else {
                    events.push(own_event("", line).1);
                    continue;
                };
                let key: Option<String> = key_of.query_row([slot], |r| r.get(0)).optional()?;
                free.execute([slot])?;
                let (key, json) = own_event(key.as_deref().unwrap_or_default(), line);
                if !key.is_empty() {
                    let first = blocks::slot(own, &key);
                    claimed.extend(claim_slot(&mut claim, &mut holder, &key, first)?);
                }
                events.push(json);
            }
            let packed = blocks::pack(events.iter().map(String::as_str)).map_err(damaged)?;
            rewrite.execute(params![
                pk,
                own,
                blocks::slots_blob(claimed.into_iter()),
                packed
            ])?;
        }
    }
    Ok(())
}

fn damaged(e: String) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(e.into())
}
