//! `attach --dump-when-idle` page by page: the same transcript as the dump
//! of a store holding every message (`dump::write_live`), without ever
//! holding a whole session. The store holds the sessions, their statuses,
//! errors and prompts; each session's pages go to one scratch file
//! ([`Spool`]) with a small index, whose sums give the totals the tree at
//! the top shows; then each session is written a turn at a time, read back
//! from the scratch file.

use std::io::Write;

use super::dump;
use super::server_export::{self, Entry, ExportError, read_message, scratch};
use super::spool::Spool;
use crate::model::entity::totals::Usage;
use crate::model::wire::sanitize;
use crate::model::{Message, NoObserver, Part, Session, Store};
use crate::source::IngestStats;
use crate::source::decode::apply::{Record, apply_record};
use crate::source::decode::record::Decoded;
use crate::source::live::{Client, snapshot};

/// Write the transcript of `store` (synced from `client` without messages)
/// and `stats` to `out`, each piece sanitised as it goes.
pub async fn write(
    client: &Client,
    store: &mut Store,
    stats: &mut IngestStats,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let ids: Vec<(String, bool)> = store
        .sessions()
        .iter()
        .map(|s| (s.info.id.clone(), s.placeholder))
        .collect();
    // Every session's messages first: the tree at the top shows totals
    // summed from them where a session's record has none.
    let mut spool = Spool::new().map_err(scratch)?;
    let mut indexes: Vec<Option<Vec<Entry>>> = Vec::with_capacity(ids.len());
    for (id, placeholder) in &ids {
        // A session only named by an event is not the server's to page.
        if *placeholder {
            indexes.push(None);
            continue;
        }
        indexes.push(Some(
            server_export::spool_pages(client, id, &mut spool).await?,
        ));
        load_todos(client, store, stats, id).await;
    }
    let sums: std::collections::HashMap<&str, Usage> = ids
        .iter()
        .zip(&indexes)
        .filter_map(|((id, _), index)| Some((id.as_str(), sum(index.as_ref()?))))
        .collect();
    let mut text = String::new();
    dump::head(&mut text, store, &|s| match sums.get(s.id()) {
        Some(sum) => s.totals_with(*sum),
        None => s.totals(),
    });
    emit(out, &mut text)?;
    for (session, index) in store.sessions().iter().zip(&indexes) {
        dump::session_start(&mut text, session);
        match index {
            Some(entries) => {
                turns(&mut spool, session, entries, &mut text, out)?;
                let diffs = entries.iter().flat_map(|e| &e.diffs);
                dump::session_end(&mut text, store, session, diffs);
            }
            None => {
                for (n, turn) in session.turns().iter().enumerate() {
                    dump::turn_block(&mut text, session, n, turn.messages(), false);
                }
                let diffs = session.messages.iter().flat_map(|m| &m.info.diffs);
                dump::session_end(&mut text, store, session, diffs);
            }
        }
        emit(out, &mut text)?;
    }
    dump::tail(&mut text, store, stats);
    emit(out, &mut text)?;
    out.flush()?;
    Ok(())
}

/// `text`, sanitised, to `out`; `text` left empty. Every piece ends a line.
fn emit(out: &mut dyn Write, text: &mut String) -> Result<(), ExportError> {
    out.write_all(sanitize::block(text).as_bytes())?;
    text.clear();
    Ok(())
}

fn sum(entries: &[Entry]) -> Usage {
    let mut sum = Usage::default();
    for e in entries {
        sum += e.usage;
    }
    sum
}

/// A session's turns, each read back from the scratch file and written
/// before the next is read.
fn turns(
    spool: &mut Spool,
    session: &Session,
    entries: &[Entry],
    text: &mut String,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let mut kept = kept_parts(session, entries);
    for (n, turn) in server_export::turns(entries).iter().enumerate() {
        let mut read = |i: usize| -> Result<Message, ExportError> {
            let mut m = read_message(spool, &entries[i])?;
            for (_, slot) in kept.iter_mut().filter(|(at, _)| *at == i) {
                if let Some(p) = slot.take()
                    && let Err(pi) = m.part_index(&p.id)
                {
                    m.parts.insert(pi, p);
                }
            }
            Ok(m)
        };
        let user = turn.user.map(&mut read).transpose()?;
        let assistants = turn
            .assistants
            .iter()
            .map(|&i| read(i))
            .collect::<Result<Vec<_>, _>>()?;
        dump::turn_block(text, session, n, user.iter().chain(&assistants), false);
        emit(out, text)?;
    }
    Ok(())
}

/// The stream-only parts of `session`'s messages in the store (a todo list
/// streamed while the dump waited), each with
/// the entry it goes into, as `Store::finalize_session` places them: its
/// own message if the server has it, else the nearest earlier one.
fn kept_parts(session: &Session, entries: &[Entry]) -> Vec<(usize, Option<Part>)> {
    if entries.is_empty() {
        return Vec::new();
    }
    let mut kept = Vec::new();
    for m in &session.messages {
        for p in m.parts.iter().filter(|p| p.is_stream_only()) {
            let at = match entries.binary_search_by(|e| e.id.as_str().cmp(&p.message_id)) {
                Ok(i) => i,
                Err(0) => 0,
                Err(i) => i - 1,
            };
            kept.push((at, Some(p.clone())));
        }
    }
    kept
}

/// A session's todos into the store and its counts, as the live source
/// loads them for a whole-session dump (a failure leaves them out, as it
/// does there).
async fn load_todos(client: &Client, store: &mut Store, stats: &mut IngestStats, session: &str) {
    match client.todos(session).await {
        Ok(todos) => {
            let props = serde_json::json!({"sessionID": session, "todos": todos});
            if let Some(env) = snapshot::event("todo.updated", props) {
                let record = Record {
                    line: 0,
                    repaired: None,
                    item: Ok(Decoded::Event(env)),
                };
                apply_record(record, store, &mut NoObserver, stats);
            }
        }
        Err(e) => tracing::warn!("todos of {session}: {e}"),
    }
}
