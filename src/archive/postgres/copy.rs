//! Writing a batch to PostgreSQL in bulk: each kind of row is streamed
//! with `COPY … FROM STDIN (FORMAT binary)` into a temporary staging table
//! of this connection, then moved into the shared tables by one
//! `INSERT … SELECT … ON CONFLICT` each. Many writers at once (a team, a
//! spool flushed twice) neither duplicate nor lose a row: events are keyed
//! by their key, states by their id with the newer state winning.

use std::pin::pin;

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Error, Transaction};

use crate::archive::postgres::blocks_search::{
    BLOCK_DOCUMENTS_SINCE, BLOCK_SPANS_SINCE, Documents,
};
use crate::archive::postgres::event_log::{LogError, Logged, MESSAGES_LOGGED_SINCE};
use crate::archive::postgres::search::tsvector_sql;
use crate::archive::postgres::text_hash::hash_text;
use crate::archive::query::indexable;
use crate::archive::rows::{Batch, PartRow, Written};

/// The staging tables, made once per connection; emptied at each commit.
/// Their long texts are kept as they are: compressing each (PostgreSQL's
/// `pglz`) only for the next statement to read it back was a fifth of
/// the server's work in an import. A part's or message's JSON comes with
/// its hash (`text_hash`), and not at all where its row keeps only its
/// place in the log.
pub(in crate::archive) const STAGING: &str = "
    CREATE TEMP TABLE IF NOT EXISTS in_keys (slot BIGINT, key TEXT) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS in_sessions (id TEXT, parent_id TEXT, title TEXT, directory TEXT,
        created BIGINT, updated BIGINT, raw TEXT, body TEXT, server TEXT) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS in_messages (id TEXT, session_id TEXT, role TEXT, model TEXT,
        agent TEXT, created BIGINT, updated BIGINT, raw TEXT, logged BIGINT, cost FLOAT8,
        tokens_input BIGINT, tokens_output BIGINT, tokens_reasoning BIGINT,
        tokens_cache_read BIGINT, tokens_cache_write BIGINT, hash BIGINT) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS in_parts (id TEXT, message_id TEXT, session_id TEXT, kind TEXT,
        tool TEXT, state TEXT, model TEXT, agent TEXT, time BIGINT, updated BIGINT, raw TEXT, body TEXT,
        logged BIGINT, in_block BOOLEAN, error TEXT, hash BIGINT) ON COMMIT DELETE ROWS;
    ALTER TABLE in_sessions ALTER raw SET STORAGE EXTERNAL, ALTER body SET STORAGE EXTERNAL;
    ALTER TABLE in_messages ALTER raw SET STORAGE EXTERNAL;
    ALTER TABLE in_parts ALTER raw SET STORAGE EXTERNAL, ALTER body SET STORAGE EXTERNAL;";

/// Messages into their table (schema 10): one the log holds as it is keeps
/// only its place there (`logged`) and an empty `raw`; states are told
/// apart by their JSON's hash. A message sent again unchanged (its parts
/// moved on) keeps the place it has.
const MESSAGES_UPSERT: &str =
    "INSERT INTO messages (id, session_id, role, model, agent, created, updated, raw, logged, hash)
     SELECT id, session_id, role, model, agent, created, updated,
            CASE WHEN logged IS NULL THEN raw ELSE '' END, logged, hash
     FROM in_messages ORDER BY id
     ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,
       role = excluded.role, model = excluded.model, agent = excluded.agent,
       created = excluded.created, updated = excluded.updated,
       raw = CASE WHEN excluded.logged IS NULL AND excluded.hash = messages.hash
                  THEN messages.raw ELSE excluded.raw END,
       logged = CASE WHEN excluded.logged IS NULL AND excluded.hash = messages.hash
                     THEN messages.logged ELSE excluded.logged END,
       hash = excluded.hash
     WHERE excluded.updated > messages.updated
        OR (excluded.updated = messages.updated
            AND excluded.hash <> coalesce(messages.hash, hashtextextended(messages.raw, 0)))";

/// Messages into an archive of schema 18: with their cost and tokens.
fn messages_upsert_v18() -> String {
    let columns = crate::archive::spend::COLUMNS.join(", ");
    let updates: Vec<String> = crate::archive::spend::COLUMNS
        .iter()
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    MESSAGES_UPSERT
        .replace("logged, hash)", &format!("logged, hash, {columns})"))
        .replace(
            "logged, hash\n     FROM in_messages",
            &format!("logged, hash, {columns}\n     FROM in_messages"),
        )
        .replace(
            "hash = excluded.hash\n",
            &format!("hash = excluded.hash, {}\n", updates.join(", ")),
        )
}

/// Messages into an archive of schema 9 (a writer that may not upgrade it).
const MESSAGES_UPSERT_V9: &str =
    "INSERT INTO messages (id, session_id, role, model, agent, created, updated, raw)
     SELECT id, session_id, role, model, agent, created, updated, raw FROM in_messages ORDER BY id
     ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,
       role = excluded.role, model = excluded.model, agent = excluded.agent,
       created = excluded.created, updated = excluded.updated, raw = excluded.raw
     WHERE excluded.updated > messages.updated
        OR (excluded.updated = messages.updated AND excluded.raw <> messages.raw)";

/// Text as PostgreSQL stores it: no NUL character.
pub(in crate::archive) fn pg_text(s: &str) -> String {
    s.replace('\0', "")
}

/// `pg_text`, copied only where it has a NUL.
fn pg_str(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        pg_text(s).into()
    } else {
        s.into()
    }
}

fn opt(s: &Option<String>) -> Option<String> {
    s.as_deref().map(pg_text)
}

/// A part's text as its own document takes it (empty when it has none).
pub(in crate::archive) fn index_text(p: &PartRow) -> String {
    if p.text.trim().is_empty() {
        String::new()
    } else {
        pg_text(&indexable(&p.text))
    }
}

/// Stream `rows` into `table` (its columns in `types`' order).
pub(in crate::archive) async fn copy(
    tx: &Transaction<'_>,
    table: &str,
    types: &[Type],
    rows: impl Iterator<Item = Vec<Box<dyn ToSql + Sync + Send>>>,
) -> Result<(), Error> {
    let sink = tx
        .copy_in(&format!("COPY {table} FROM STDIN (FORMAT binary)"))
        .await?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, types));
    for row in rows {
        let refs: Vec<&(dyn ToSql + Sync)> = row
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect();
        writer.as_mut().write(&refs).await?;
    }
    writer.finish().await?;
    Ok(())
}

pub(in crate::archive) type Row = Vec<Box<dyn ToSql + Sync + Send>>;

/// The batch, in the open transaction `tx`, as an archive of `version`
/// keeps it (since schema 10 the parts the log holds are indexed by their
/// blocks' documents, and messages it holds are kept as their place).
pub(in crate::archive) async fn write(
    tx: &Transaction<'_>,
    batch: &Batch,
    version: i64,
    words_here: bool,
) -> Result<Written, LogError> {
    let block_documents = version >= BLOCK_DOCUMENTS_SINCE;
    // Each part's text as the index takes it, but where its runs were made
    // ahead (`blocks_search::prepare`): those give its block's document, and
    // its text is made only if it keeps a document of its own (`write_parts`).
    let bodies: Vec<Option<String>> = batch
        .parts
        .iter()
        .map(|p| p.prepared.is_none().then(|| index_text(p)))
        .collect();
    let documents = block_documents.then(|| Documents {
        texts: batch
            .parts
            .iter()
            .zip(&bodies)
            .filter_map(|(p, body)| {
                let text = match body {
                    Some(body) => body.as_str(),
                    None => p.prepared.as_ref().map_or("", |m| &m.document),
                };
                (!text.is_empty()).then_some((p.logged_as.as_deref()?, (text, p.time)))
            })
            .collect(),
        spans: version >= BLOCK_SPANS_SINCE,
        words_here,
    });
    let logged = crate::archive::postgres::event_log::write_events(
        tx,
        &batch.events,
        true,
        documents.as_ref(),
        batch.packed.as_ref(),
    )
    .await?;
    let mut written = Written {
        events: logged.count,
        ..Written::default()
    };
    if !batch.sessions.is_empty() {
        write_sessions(tx, batch).await?;
    }
    if !batch.messages.is_empty() {
        write_messages(tx, batch, &logged, version).await?;
    }
    if !batch.parts.is_empty() {
        let errors = version >= crate::archive::tool_calls::SINCE;
        written.parts = write_parts(tx, batch, bodies, &logged, block_documents, errors).await?;
    }
    Ok(written)
}

/// The batch's sessions: copied into staging, then upserted (a session's
/// origin is the first writer's).
async fn write_sessions(tx: &Transaction<'_>, batch: &Batch) -> Result<(), LogError> {
    let rows = batch.sessions.iter().map(|s| -> Row {
        let title = pg_text(&s.title);
        let body = indexable(&title).into_owned();
        vec![
            Box::new(s.id.clone()),
            Box::new(s.parent_id.clone()),
            Box::new(title),
            Box::new(opt(&s.directory)),
            Box::new(s.created),
            Box::new(s.updated),
            Box::new(pg_text(&s.raw)),
            Box::new(body),
            // A fleet member's own server, over the batch's.
            Box::new(s.server.clone()),
        ]
    });
    let types = column_types("ttttnnttt");
    copy(tx, "in_sessions", &types, rows).await?;
    let o = &batch.origin;
    let file = opt(&o.file);
    // A session's origin is the first writer's: a teammate's import of
    // the same session does not take it over.
    let sql = format!(
        "INSERT INTO sessions (id, parent_id, title, directory, server, host, file, created, updated, raw, tsv)
         SELECT id, parent_id, title, directory, coalesce(server, $1), $2, $3, created, updated, raw, {}
         FROM in_sessions ORDER BY id
         ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id,
           title = excluded.title, directory = coalesce(excluded.directory, sessions.directory),
           server = coalesce(sessions.server, excluded.server),
           host = coalesce(sessions.host, excluded.host),
           file = coalesce(sessions.file, excluded.file), created = excluded.created,
           updated = excluded.updated, raw = excluded.raw, tsv = excluded.tsv
         WHERE excluded.updated > sessions.updated
            OR (excluded.updated = sessions.updated AND excluded.raw <> sessions.raw)",
        tsvector_sql("body")
    );
    tx.execute(&sql, &[&o.server, &o.host, &file]).await?;
    Ok(())
}

/// The batch's messages: copied into staging, then upserted.
async fn write_messages(
    tx: &Transaction<'_>,
    batch: &Batch,
    logged: &Logged<'_>,
    version: i64,
) -> Result<(), LogError> {
    let rows = batch.messages.iter().map(|m| -> Row {
        // No second copy of what the log holds as it is.
        let place = m
            .logged_as
            .as_deref()
            .and_then(|k| logged.at.get(k).copied());
        let raw = pg_str(&m.raw);
        let hash = hash_text(&raw);
        // The JSON is not sent where the row keeps only its place (before
        // schema 10 a message keeps its JSON).
        let sent = if place.is_some() && version >= MESSAGES_LOGGED_SINCE {
            String::new()
        } else {
            raw.into_owned()
        };
        vec![
            Box::new(m.id.clone()),
            Box::new(m.session_id.clone()),
            Box::new(m.role.clone()),
            Box::new(m.model.clone()),
            Box::new(m.agent.clone()),
            Box::new(m.created),
            Box::new(m.updated),
            Box::new(sent),
            Box::new(place),
            Box::new(m.spend.map(|f| f.cost)),
            Box::new(m.spend.map(|f| big(f.input))),
            Box::new(m.spend.map(|f| big(f.output))),
            Box::new(m.spend.map(|f| big(f.reasoning))),
            Box::new(m.spend.map(|f| big(f.cache_read))),
            Box::new(m.spend.map(|f| big(f.cache_write))),
            Box::new(hash),
        ]
    });
    let types = column_types("tttttnntnfnnnnnn");
    copy(tx, "in_messages", &types, rows).await?;
    let upsert = if version >= crate::archive::spend::SINCE {
        messages_upsert_v18()
    } else if version >= MESSAGES_LOGGED_SINCE {
        MESSAGES_UPSERT.to_string()
    } else {
        MESSAGES_UPSERT_V9.to_string()
    };
    tx.execute(&upsert, &[]).await?;
    Ok(())
}

/// The batch's parts with their index text (`bodies`, in order; made
/// here where it was not): copied into staging, then upserted. How many
/// rows changed. A part in its block's document needs none.
async fn write_parts(
    tx: &Transaction<'_>,
    batch: &Batch,
    bodies: Vec<Option<String>>,
    logged: &Logged<'_>,
    block_documents: bool,
    errors: bool,
) -> Result<u64, LogError> {
    let rows = batch.parts.iter().zip(bodies).map(|(p, body)| -> Row {
        // No second copy of what the log holds as it is.
        let key = p.logged_as.as_deref();
        let place = key.and_then(|k| logged.at.get(k).copied());
        let in_block = place.is_some() && key.is_some_and(|k| logged.in_block.contains(k));
        let body = match (in_block, body) {
            (true, _) => String::new(),
            (false, Some(body)) => body,
            (false, None) => index_text(p),
        };
        let raw = pg_str(&p.raw);
        let hash = hash_text(&raw);
        let sent = if place.is_some() {
            String::new()
        } else {
            raw.into_owned()
        };
        vec![
            Box::new(p.id.clone()),
            Box::new(p.message_id.clone()),
            Box::new(p.session_id.clone()),
            Box::new(p.kind.clone()),
            Box::new(p.tool.clone()),
            Box::new(p.state.clone()),
            Box::new(p.model.clone()),
            Box::new(p.agent.clone()),
            Box::new(p.time),
            Box::new(p.updated),
            Box::new(sent),
            Box::new(body),
            Box::new(place),
            Box::new(in_block),
            Box::new(p.error.clone()),
            Box::new(hash),
        ]
    });
    let types = column_types("ttttttttnnttnbtn");
    copy(tx, "in_parts", &types, rows).await?;
    // A part's document is in its own row, made with it, or in its
    // block's (`in_block`): a part with no text has none. A part the
    // log holds as it is keeps only its place there (`logged`); two
    // states are told apart by their JSON's hash (a row from before
    // schema 9 has its JSON, no hash). Since schema 10 a part's model
    // and agent are its message's, not kept again.
    let (model, set_model) = if block_documents {
        ("", "")
    } else {
        (
            " model, agent,",
            " model = excluded.model, agent = excluded.agent,",
        )
    };
    // A tool call's error since schema 16.
    let (error, set_error) = if errors {
        (" error,", " error = excluded.error,")
    } else {
        ("", "")
    };
    let sql = format!(
        "INSERT INTO parts (id, message_id, session_id, kind, tool, state,{model}{error} time,
                            updated, raw, logged, hash, tsv)
         SELECT id, message_id, session_id, kind, tool, state,{model}{error} time, updated,
                CASE WHEN logged IS NULL THEN raw ELSE '' END, logged,
                hash, CASE WHEN body <> '' AND NOT in_block THEN {} END
         FROM in_parts ORDER BY id
         ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id,
           session_id = excluded.session_id, kind = excluded.kind,
           tool = excluded.tool, state = excluded.state,{set_model}{set_error}
           time = excluded.time, updated = excluded.updated,
           raw = excluded.raw, logged = excluded.logged, hash = excluded.hash,
           tsv = excluded.tsv
         WHERE excluded.updated > parts.updated
            OR (excluded.updated = parts.updated
                AND excluded.hash <> coalesce(parts.hash, hashtextextended(parts.raw, 0)))",
        tsvector_sql("body")
    );
    Ok(tx.execute(&sql, &[]).await?)
}

/// A staging table's column types, one letter each: `t` text, `n` a
/// 64-bit integer, `b` a boolean.
/// A count as PostgreSQL's BIGINT.
fn big(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

fn column_types(kinds: &str) -> Vec<Type> {
    kinds
        .chars()
        .map(|k| match k {
            'n' => Type::INT8,
            'f' => Type::FLOAT8,
            'b' => Type::BOOL,
            _ => Type::TEXT,
        })
        .collect()
}
