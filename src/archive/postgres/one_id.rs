//! PostgreSQL's side of schema 12, one session one id
//! (`crate::archive::one_id` says why): its SQL merges each scoped
//! session's row into its own id (newer state wins, the first origin
//! stays) and gives messages, parts and parents their own session ids; its
//! step rewrites the scoped sessions' log blocks in place, their keys
//! claimed again under the session's own id.

use tokio_postgres::Transaction;

use crate::archive::blocks;
use crate::archive::migrate::MigrateError;
use crate::archive::one_id::own_event;
use crate::archive::postgres::event_log::probe;
use crate::model::store::fleet::bare;

/// Migration 12's SQL (PostgreSQL). Two servers' copies of one session
/// (servers sharing opencode's storage) give the newer.
pub const SQL: &str = "UPDATE messages SET session_id = split_part(session_id, '@', 1)
        WHERE strpos(session_id, '@') > 0;
    UPDATE parts SET session_id = split_part(session_id, '@', 1)
        WHERE strpos(session_id, '@') > 0;
    UPDATE sessions SET parent_id = split_part(parent_id, '@', 1)
        WHERE strpos(parent_id, '@') > 0;
    INSERT INTO sessions (id, parent_id, title, directory, server, host, file, created, updated, raw, tsv)
        SELECT DISTINCT ON (split_part(id, '@', 1)) split_part(id, '@', 1), parent_id, title,
               directory, server, host, file, created, updated,
               CASE WHEN raw LIKE '{\"id\":%' THEN regexp_replace(raw, '^\\{\"id\":\"([^\"@]*)@[^\"]*\"', '{\"id\":\"\\1\"') ELSE raw END,
               tsv
        FROM sessions WHERE strpos(id, '@') > 0
        ORDER BY split_part(id, '@', 1), updated DESC
    ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id,
        title = excluded.title, directory = coalesce(excluded.directory, sessions.directory),
        server = coalesce(sessions.server, excluded.server),
        host = coalesce(sessions.host, excluded.host),
        file = coalesce(sessions.file, excluded.file), created = excluded.created,
        updated = excluded.updated, raw = excluded.raw, tsv = excluded.tsv
        WHERE excluded.updated > sessions.updated
           OR (excluded.updated = sessions.updated AND excluded.raw <> sessions.raw);
    DELETE FROM sessions WHERE strpos(id, '@') > 0;";

type StepResult = Result<(), MigrateError<tokio_postgres::Error>>;

/// Migration 12's step.
pub(in crate::archive) fn step<'a>(
    tx: &'a Transaction<'a>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = StepResult> + Send + 'a>> {
    Box::pin(logs(tx))
}

/// Each block of a scoped session's log, its events and keys made again
/// under the session's own id; a hundred blocks at a time.
async fn logs(tx: &Transaction<'_>) -> StepResult {
    let mut after = i64::MIN;
    loop {
        let found = tx
            .query(
                "SELECT pk, session_id, slots, data FROM event_blocks
                 WHERE pk > $1 AND strpos(session_id, '@') > 0 ORDER BY pk LIMIT 100",
                &[&after],
            )
            .await?;
        let Some(last) = found.last() else { break };
        after = last.get(0);
        for row in &found {
            let pk: i64 = row.get(0);
            let session_id: &str = row.get(1);
            let own = bare(session_id);
            let lines = blocks::unpack(row.get(3)).map_err(MigrateError::Step)?;
            let slots = blocks::slots_of(row.get(2));
            let mut claimed = Vec::with_capacity(lines.len());
            let mut events = Vec::with_capacity(lines.len());
            for (i, line) in lines.iter().enumerate() {
                let Some(&slot) = slots.get(i) else {
                    events.push(own_event("", line).1);
                    continue;
                };
                let key: Option<String> = tx
                    .query_opt(
                        "DELETE FROM event_keys WHERE slot = $1 RETURNING key",
                        &[&slot],
                    )
                    .await?
                    .map(|r| r.get(0));
                let (key, json) = own_event(key.as_deref().unwrap_or_default(), line);
                if !key.is_empty() {
                    let first = blocks::slot(own, &key);
                    claimed.extend(probe(tx, &key, first).await?);
                }
                events.push(json);
            }
            let packed =
                blocks::pack(events.iter().map(String::as_str)).map_err(MigrateError::Step)?;
            tx.execute(
                "UPDATE event_blocks SET session_id = $2, slots = $3, data = $4 WHERE pk = $1",
                &[&pk, &own, &blocks::slots_blob(claimed.into_iter()), &packed],
            )
            .await?;
        }
    }
    Ok(())
}
