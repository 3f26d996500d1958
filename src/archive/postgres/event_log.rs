//! PostgreSQL's side of the event log in blocks (`super::blocks`), the
//! same blocks as SQLite's (bytea): writing a batch's events through COPY,
//! reading a session's log back, freeing a session's keys, and migration
//! 6's move of the one-row-per-event log into blocks.
//!
//! Many writers at once stay exact: a key's slot is claimed by an
//! `INSERT … ON CONFLICT DO NOTHING`, which waits for another writer's
//! claim of the same slot to commit or roll back; the claims go in slot
//! order, so two writers never wait on each other in a circle.

use std::collections::{HashMap, HashSet};

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, GenericClient, Transaction};

use crate::archive::blocks;
use crate::archive::engine::{ArchiveError, Trouble};
use crate::archive::postgres::blocks_search::Documents;
use crate::archive::postgres::classify;
use crate::archive::rows::EventRow;

pub(in crate::archive) fn damaged(place: &str, e: String) -> ArchiveError {
    ArchiveError::new(Trouble::Corrupt, place, e)
}

/// What writing the log met: the server's error (kept whole, for its
/// code), or a block that could not be made.
#[derive(Debug)]
pub(in crate::archive) enum LogError {
    Db(tokio_postgres::Error),
    Block(String),
}

impl From<tokio_postgres::Error> for LogError {
    fn from(e: tokio_postgres::Error) -> Self {
        LogError::Db(e)
    }
}

impl LogError {
    pub(in crate::archive) fn said(self, place: &str) -> ArchiveError {
        match self {
            LogError::Db(e) => classify(place, &e),
            LogError::Block(e) => ArchiveError::new(Trouble::Failed, place, e),
        }
    }
}

/// Claim one slot for `key` after the first try failed: the next free slot,
/// or none when `key` is there already.
pub(in crate::archive) async fn probe(
    tx: &impl GenericClient,
    key: &str,
    mut slot: i64,
) -> Result<Option<i64>, tokio_postgres::Error> {
    loop {
        let claimed = tx
            .execute(
                "INSERT INTO event_keys (slot, key) VALUES ($1, $2) ON CONFLICT (slot) DO NOTHING",
                &[&slot, &key],
            )
            .await?;
        if claimed == 1 {
            return Ok(Some(slot));
        }
        let held: String = tx
            .query_one("SELECT key FROM event_keys WHERE slot = $1", &[&slot])
            .await?
            .get(0);
        if held == key {
            return Ok(None);
        }
        slot = blocks::next_slot(slot);
    }
}

/// What the log's new events say: how many, where each is (by key,
/// `blocks::logged_at`), and the keys whose part's text is in its block's
/// document.
pub(in crate::archive) struct Logged<'a> {
    pub count: u64,
    pub at: HashMap<&'a str, i64>,
    pub in_block: HashSet<&'a str>,
}

/// Log the events new to the archive, in the open transaction. With
/// `documents` (schema 10), each block is written with the document of the
/// parts it holds.
pub(in crate::archive) async fn write_events<'a>(
    tx: &Transaction<'_>,
    events: &'a [EventRow],
    bulk: bool,
    documents: Option<&Documents<'_>>,
    packed: Option<&crate::archive::rows::Packed>,
) -> Result<Logged<'a>, LogError> {
    let mut logged = Logged {
        count: 0,
        at: HashMap::new(),
        in_block: HashSet::new(),
    };
    if events.is_empty() {
        return Ok(logged);
    }
    let slots: Vec<i64> = events
        .iter()
        .map(|e| blocks::slot(&e.session_id, &e.key))
        .collect();
    let fresh = claim_slots(tx, events, &slots, bulk).await?;
    let packed = crate::archive::rows::Packed::of_all(packed, events.len(), fresh.len());
    let groups = blocks::group(&fresh, packed).map_err(LogError::Block)?;
    let spans = documents.is_some_and(|d| d.spans);
    let insert = tx
        .prepare(&match documents {
            // The block's words made here are the last argument.
            Some(_) => format!(
                "INSERT INTO event_blocks (session_id, time, count, todo, slots, data, tsv, newest{})
                 VALUES ($1, $2, $3, $4, $5, $6, {}, $8{}) RETURNING pk",
                if spans { ", oldest" } else { "" },
                crate::archive::postgres::lexemes::block_tsvector(if spans { 10 } else { 9 }),
                if spans { ", $9" } else { "" },
            ),
            None => "INSERT INTO event_blocks (session_id, time, count, todo, slots, data)
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING pk"
                .to_string(),
        })
        .await?;
    // Each block's document first, then every insert sent at once: the
    // server works through them back to back, not one round trip each.
    let made: Vec<Option<crate::archive::postgres::blocks_search::BlockDocument>> = groups
        .iter()
        .map(|b| {
            documents.map(|documents| {
                crate::archive::postgres::blocks_search::document(
                    &b.keys,
                    documents,
                    &mut logged.in_block,
                )
            })
        })
        .collect();
    let words: Vec<Vec<&str>> = made
        .iter()
        .map(|d| {
            d.as_ref()
                .and_then(|d| d.words.as_ref())
                .map_or_else(Vec::new, |s| s.words())
        })
        .collect();
    let args: Vec<Vec<&(dyn ToSql + Sync)>> = groups
        .iter()
        .zip(made.iter().zip(&words))
        .map(|(b, (d, words))| {
            let mut args: Vec<&(dyn ToSql + Sync)> =
                vec![&b.session_id, &b.time, &b.count, &b.todo, &b.slots, &b.data];
            if let Some(d) = d {
                args.extend([&d.text as &(dyn ToSql + Sync), &d.newest]);
                if spans {
                    args.push(&d.oldest);
                }
                args.push(words);
            }
            args
        })
        .collect();
    let rows =
        futures_util::future::try_join_all(args.iter().map(|a| tx.query_one(&insert, a))).await?;
    for (b, row) in groups.iter().zip(rows) {
        let pk: i64 = row.get(0);
        for (i, key) in b.keys.iter().enumerate() {
            logged.at.insert(*key, blocks::logged_at(pk, i));
        }
    }
    logged.count = fresh.len() as u64;
    Ok(logged)
}

/// The events new to the archive, each with its slot: those whose key no
/// event before holds. In `bulk`, the slots are claimed in one statement;
/// the ones it did not claim are a duplicate or (rarely) another key's,
/// probed one by one, as every slot is otherwise.
async fn claim_slots<'a>(
    tx: &Transaction<'_>,
    events: &'a [EventRow],
    slots: &[i64],
    bulk: bool,
) -> Result<Vec<(&'a EventRow, i64)>, LogError> {
    let mut fresh: Vec<(&'a EventRow, i64)> = Vec::with_capacity(events.len());
    if bulk {
        let mut order: Vec<usize> = (0..events.len()).collect();
        order.sort_by_key(|&i| slots[i]);
        let rows = order
            .iter()
            .map(|&i| -> crate::archive::postgres::copy::Row {
                vec![Box::new(slots[i]), Box::new(events[i].key.clone())]
            });
        crate::archive::postgres::copy::copy(tx, "in_keys", &[Type::INT8, Type::TEXT], rows)
            .await?;
        let claimed: HashSet<i64> = tx
            .query(
                "INSERT INTO event_keys (slot, key) SELECT slot, key FROM in_keys ORDER BY slot
                 ON CONFLICT (slot) DO NOTHING RETURNING slot",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut claimed = claimed;
        for (e, &slot) in events.iter().zip(slots) {
            // A slot claimed by this batch goes to its first event.
            if claimed.remove(&slot) {
                fresh.push((e, slot));
            } else if let Some(slot) = probe(tx, &e.key, slot).await? {
                fresh.push((e, slot));
            }
        }
    } else {
        for (e, &slot) in events.iter().zip(slots) {
            if let Some(slot) = probe(tx, &e.key, slot).await? {
                fresh.push((e, slot));
            }
        }
    }
    Ok(fresh)
}

/// The schema whose parts point into the log (`logged`).
const LOGGED_SINCE: i64 = 9;

/// What a query reads as the part's place in the log, `column` of the
/// parts table, in an archive of `version` (before 9: none).
pub(in crate::archive) fn logged_column(version: i64, column: &'static str) -> &'static str {
    if version >= LOGGED_SINCE {
        column
    } else {
        "NULL::bigint"
    }
}

/// The schema whose messages may point into the log too.
pub(in crate::archive) const MESSAGES_LOGGED_SINCE: i64 = 10;

/// What a query reads as a message's place in the log, `column` of the
/// messages table, in an archive of `version` (before 10: none).
pub(in crate::archive) fn message_logged_column(
    version: i64,
    column: &'static str,
) -> &'static str {
    if version >= MESSAGES_LOGGED_SINCE {
        column
    } else {
        "NULL::bigint"
    }
}

/// The JSON of the parts and messages the log holds as they are, by their
/// `logged` places: each block they are in read and unpacked once.
pub(in crate::archive) async fn logged_items(
    client: &impl GenericClient,
    place: &str,
    places: impl Iterator<Item = i64>,
) -> Result<HashMap<i64, String>, ArchiveError> {
    let places: Vec<i64> = places.collect();
    let mut wanted: Vec<i64> = places
        .iter()
        .map(|&at| blocks::logged_place(at).0)
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let unpacked = unpacked_blocks(client, place, wanted).await?;
    let mut out = HashMap::with_capacity(places.len());
    for at in places {
        let (block, index) = blocks::logged_place(at);
        let item = unpacked
            .get(&block)
            .and_then(|events| events.get(index))
            .and_then(|event| blocks::item_of_event(event))
            .ok_or_else(|| damaged(place, "a place in the log holds no part or message".into()))?;
        out.insert(at, item);
    }
    Ok(out)
}

/// The events of the blocks `pks`, unpacked, by block.
pub(in crate::archive) async fn unpacked_blocks(
    client: &impl GenericClient,
    place: &str,
    pks: Vec<i64>,
) -> Result<HashMap<i64, Vec<String>>, ArchiveError> {
    if pks.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = client
        .query(
            "SELECT pk, data FROM event_blocks WHERE pk = ANY($1)",
            &[&pks],
        )
        .await
        .map_err(|e| classify(place, &e))?;
    let mut unpacked = HashMap::with_capacity(rows.len());
    for r in rows {
        let events = blocks::unpack(r.get::<_, &[u8]>(1)).map_err(|e| damaged(place, e))?;
        unpacked.insert(r.get(0), events);
    }
    Ok(unpacked)
}

/// A session's log, in the order it was written.
pub(in crate::archive) async fn events(
    client: &Client,
    place: &str,
    session_id: &str,
) -> Result<Vec<String>, ArchiveError> {
    let rows = client
        .query(
            "SELECT data FROM event_blocks WHERE session_id = $1 ORDER BY pk",
            &[&session_id],
        )
        .await
        .map_err(|e| classify(place, &e))?;
    let mut out = Vec::new();
    for r in rows {
        out.extend(blocks::unpack(r.get::<_, &[u8]>(0)).map_err(|e| damaged(place, e))?);
    }
    Ok(out)
}

/// The last `todo.updated` of a session's log, if any.
pub(in crate::archive) async fn last_todo(
    client: &Client,
    place: &str,
    session_id: &str,
) -> Result<Option<String>, ArchiveError> {
    let row = client
        .query_opt(
            "SELECT data, todo FROM event_blocks WHERE session_id = $1 AND todo IS NOT NULL
             ORDER BY pk DESC LIMIT 1",
            &[&session_id],
        )
        .await
        .map_err(|e| classify(place, &e))?;
    let Some(row) = row else { return Ok(None) };
    let mut events = blocks::unpack(row.get::<_, &[u8]>(0)).map_err(|e| damaged(place, e))?;
    let todo = usize::try_from(row.get::<_, i64>(1)).unwrap_or(usize::MAX);
    Ok((todo < events.len()).then(|| events.swap_remove(todo)))
}

/// Sessions' logs gone: their blocks and the keys they claimed.
pub(in crate::archive) async fn delete(
    tx: &impl tokio_postgres::GenericClient,
    ids: &[String],
) -> Result<(), tokio_postgres::Error> {
    let rows = tx
        .query(
            "DELETE FROM event_blocks WHERE session_id = ANY($1) RETURNING slots",
            &[&ids],
        )
        .await?;
    let slots: Vec<i64> = rows
        .iter()
        .flat_map(|r| blocks::slots_of(r.get::<_, &[u8]>(0)))
        .collect();
    tx.execute("DELETE FROM event_keys WHERE slot = ANY($1)", &[&slots])
        .await?;
    Ok(())
}

/// Migration 6's data: the old log, session by session in its order, into
/// blocks of at most 256 events; then the old log goes. Runs in the
/// migration's transaction, after migration 6's SQL.
/// `move_to_blocks` as migration 6's step (`schema::STEPS`).
pub(in crate::archive) fn move_to_blocks_step<'a>(
    tx: &'a Transaction<'a>,
) -> std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<(), crate::archive::migrate::MigrateError<tokio_postgres::Error>>,
            > + Send
            + 'a,
    >,
> {
    Box::pin(async move {
        move_to_blocks(tx).await.map_err(|e| match e {
            LogError::Db(e) => crate::archive::migrate::MigrateError::Db(e),
            LogError::Block(why) => crate::archive::migrate::MigrateError::Step(why),
        })
    })
}

pub(in crate::archive) async fn move_to_blocks(tx: &Transaction<'_>) -> Result<(), LogError> {
    let had_log: bool = tx
        .query_one("SELECT to_regclass('events') IS NOT NULL", &[])
        .await?
        .get(0);
    if !had_log {
        return Ok(());
    }
    let sessions: Vec<String> = tx
        .query("SELECT DISTINCT session_id FROM events", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for session in sessions {
        let rows = tx
            .query(
                "SELECT key, session_id, time, json FROM events WHERE session_id = $1 ORDER BY pk",
                &[&session],
            )
            .await?;
        let events: Vec<EventRow> = rows
            .iter()
            .map(|r| EventRow {
                key: r.get(0),
                session_id: r.get(1),
                time_ms: r.get(2),
                json: r.get(3),
            })
            .collect();
        for chunk in events.chunks(256) {
            write_events(tx, chunk, false, None, None).await?;
        }
    }
    tx.batch_execute("DROP TABLE events").await?;
    Ok(())
}
