//! The team's engine: a PostgreSQL database (tokio-postgres, TLS through
//! rustls when the server offers it), searched through a `tsvector` column
//! with a GIN index (`search`). Calls block on a runtime of the engine's
//! own, so the engine lives on a thread of its own like the SQLite one.
//!
//! Its rooms: bulk writes through COPY (`copy`), the event log in blocks
//! (`event_log`) and the search over them (`blocks_search`, with the words
//! a block may hold in `block_words`), other writers heard through
//! LISTEN/NOTIFY (`notify`), the URL's rules (`url`) and the password file
//! (`pgpass`), import marks (`marks`), size and vacuum (`upkeep`), its
//! migrations and their runner (`schema`, `migrate`), file imports'
//! checkpoints (`resume`); the session list's pages are read by its `Engine` methods here.
//!
//! The password never comes from the command line: `passfile=` in the URL,
//! `$PGPASSWORD`, `$PGPASSFILE` or `~/.pgpass` (as libpq reads them).

mod answers;
pub(in crate::archive) mod block_words;
pub(in crate::archive) mod blocks_search;
pub(in crate::archive) mod connect;
pub(in crate::archive) mod copy;
pub(in crate::archive) mod event_log;
pub mod lexemes;
pub(in crate::archive) mod marks;
pub mod migrate;
pub mod notify;
mod one_id;
pub mod pgpass;
pub(in crate::archive) mod pins;
pub(in crate::archive) mod redactions;
pub mod resume;
pub mod schema;
pub(in crate::archive) mod search;
mod spend;
pub mod text_hash;
pub mod tls;
mod tool_calls;
pub(in crate::archive) mod upkeep;
pub mod url;

pub(in crate::archive) use connect::{ASKS_FOR_A_PASSWORD, Connect, config, with_why};

use tokio_postgres::Client;
use tokio_postgres::error::SqlState;

use crate::archive::engine::{ArchiveError, Counts, Engine, ImportMark, Trouble, refuse_write};
use crate::archive::listing::{COLUMNS, ListCursor, ListedSession};
use crate::archive::migrate::Ran;
use crate::archive::postgres::event_log::LogError;
use crate::archive::postgres::url::redact;
use crate::archive::query::Query;
use crate::archive::rows::{Batch, Written};

pub struct PgArchive {
    pub(in crate::archive) rt: tokio::runtime::Runtime,
    pub(in crate::archive) client: Client,
    pub(in crate::archive) place: String,
    pub(in crate::archive) read_only: Option<String>,
    /// Whether this connection's staging tables exist (`copy`).
    pub(in crate::archive) staging_ready: bool,
    /// In a rehearsal (`Engine::rehearse`): deletes go into its
    /// transaction, never one of their own.
    pub(in crate::archive) rehearsing: bool,
    /// The schema the archive is at: below `crate::archive::schema::LATEST` only for a
    /// user who may not upgrade it (`search` reads both).
    pub(in crate::archive) version: i64,
    /// Whether the server makes a block's plain words as ocview does
    /// (`lexemes`), asked before the first write.
    pub(in crate::archive) words_here: Option<bool>,
    /// How to open another connection to the same archive (`upkeep::Merger`).
    pub(in crate::archive) again: (
        tokio_postgres::Config,
        tokio_postgres_rustls::MakeRustlsConnect,
    ),
    /// During an import: the connection that merges the word indexes'
    /// pending lists beside the writes (`upkeep::bulk`).
    pub(in crate::archive) merger: Option<crate::archive::postgres::upkeep::Merger>,
}

impl PgArchive {
    pub fn open(url: &str) -> Result<PgArchive, ArchiveError> {
        let place = redact(url);
        let fail = |trouble, m: String| ArchiveError::new(trouble, &place, m);
        let Connect {
            config,
            tls,
            no_password,
        } = config(url)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(Trouble::Failed, e.to_string()))?;
        let again = (config.clone(), tls.clone());
        let (client, connection) = rt
            .block_on(config.connect(tls))
            .map_err(|e| with_why(classify(&place, &e), no_password.as_deref()))?;
        rt.spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!("archive connection: {e}");
            }
        });
        let mut archive = PgArchive {
            rt,
            client,
            place,
            read_only: None,
            staging_ready: false,
            rehearsing: false,
            version: crate::archive::schema::LATEST,
            words_here: None,
            again,
            merger: None,
        };
        archive.prepare()?;
        Ok(archive)
    }

    fn prepare(&mut self) -> Result<(), ArchiveError> {
        let place = self.place.clone();
        let err = |e: tokio_postgres::Error| classify(&place, &e);
        let (recorded, legacy) = match self.rt.block_on(migrate::versions(&self.client)) {
            Ok(v) => v,
            // A reader not granted refinery's table: the legacy marker says.
            Err(e) if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => {
                (None, self.legacy_version().map_err(err)?)
            }
            Err(e) => return Err(err(e)),
        };
        let version = recorded.unwrap_or(0).max(legacy);
        if version > crate::archive::schema::LATEST {
            self.read_only = Some(crate::archive::schema::newer(version));
            return Ok(());
        }
        if recorded.unwrap_or(0) < crate::archive::schema::LATEST {
            let ran = self.rt.block_on(migrate::run(
                &mut self.client,
                schema::MIGRATIONS,
                schema::STEPS,
            ));
            match ran {
                Ok(Ran::Current) => {}
                Ok(Ran::Newer(v)) => {
                    self.read_only = Some(crate::archive::schema::newer(v));
                    return Ok(());
                }
                // A reader of an archive some version old reads it as it is.
                Err(e)
                    if version > 0
                        && e.db().and_then(|d| d.code())
                            == Some(&SqlState::INSUFFICIENT_PRIVILEGE) =>
                {
                    self.version = version;
                }
                Err(e) => {
                    return Err(match e.db() {
                        Some(db) => classify(&place, db),
                        None => ArchiveError::new(Trouble::Failed, &place, e.to_string()),
                    });
                }
            }
        }
        let may_write: bool = self
            .rt
            .block_on(self.client.query_one(
                "SELECT has_table_privilege(current_user, 'sessions', 'INSERT')",
                &[],
            ))
            .map_err(err)?
            .get(0);
        if !may_write {
            let user: String = self
                .rt
                .block_on(self.client.query_one("SELECT current_user::text", &[]))
                .map_err(err)?
                .get(0);
            self.read_only = Some(format!(
                "the database user {} may only read: search and replay work, nothing is written",
                crate::model::wire::sanitize::line(&user)
            ));
        }
        Ok(())
    }

    /// The batch in one transaction, as an archive of `self.version` keeps it.
    fn write_at_version(
        &mut self,
        batch: &Batch,
        found: &[crate::archive::rows::Found],
    ) -> Result<Written, LogError> {
        let version = self.version;
        let words_here = match self.words_here {
            Some(agrees) => agrees,
            None => {
                let agrees = self
                    .rt
                    .block_on(crate::archive::postgres::lexemes::server_agrees(
                        &self.client,
                    ));
                *self.words_here.insert(agrees)
            }
        };
        self.rt.block_on(async {
            let tx = self.client.transaction().await?;
            let written =
                crate::archive::postgres::copy::write(&tx, batch, version, words_here).await?;
            if version >= crate::archive::postgres::redactions::SINCE {
                crate::archive::postgres::redactions::save(&tx, found).await?;
            }
            if version >= answers::SINCE {
                answers::save(&tx, &batch.answers).await?;
            }
            if version >= crate::archive::prompt_waits::SINCE && !batch.prompts.is_empty() {
                let put = tx
                    .prepare(&crate::archive::prompt_waits::upsert_sql(|i| {
                        format!("${i}")
                    }))
                    .await?;
                for p in &batch.prompts {
                    tx.execute(
                        &put,
                        &[
                            &p.request_id,
                            &p.session_id,
                            &p.kind,
                            &p.what,
                            &p.asked,
                            &p.settled,
                            &p.reply,
                        ],
                    )
                    .await?;
                }
            }
            if version >= crate::archive::spend::SINCE {
                spend::save(&tx, &batch.retries, &batch.prices).await?;
            }
            // Delivered when the transaction commits, and only then.
            crate::archive::postgres::notify::announce(&tx, batch).await?;
            if let Some(c) = &batch.checkpoint {
                crate::archive::postgres::resume::save(&tx, c).await?;
            }
            tx.commit().await?;
            Ok(written)
        })
    }

    /// The legacy marker's version alone (0 without it).
    fn legacy_version(&mut self) -> Result<i64, tokio_postgres::Error> {
        self.rt.block_on(async {
            let exists: bool = self
                .client
                .query_one("SELECT to_regclass('ocview_schema') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(0);
            }
            let q = "SELECT coalesce(max(version), 0) FROM ocview_schema";
            Ok(self.client.query_one(q, &[]).await?.get(0))
        })
    }
}

/// Whether a statement failed for a column or table the archive no longer
/// has, or does not have yet: its schema moved on since it was read.
fn schema_moved(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(&SqlState::UNDEFINED_COLUMN) | Some(&SqlState::UNDEFINED_TABLE)
    )
}

pub(in crate::archive) fn classify(place: &str, e: &tokio_postgres::Error) -> ArchiveError {
    // A certificate refused stays refused until a setting changes.
    if let Some(why) = tls::explain(e) {
        return ArchiveError::new(Trouble::Failed, place, why);
    }
    // Asked for a password and none was given: waiting will not bring one.
    let missing = std::iter::successors(Some(e as &dyn std::error::Error), |e| e.source())
        .any(|e| e.to_string().contains("password missing"));
    if e.code().is_none() && missing {
        return ArchiveError::new(
            Trouble::Failed,
            place,
            format!(
                "{ASKS_FOR_A_PASSWORD}: put it in ~/.pgpass (or $PGPASSFILE, or passfile= \
                 in the URL) or in $PGPASSWORD"
            ),
        );
    }
    let (trouble, what) = match e.code() {
        _ if e.is_closed() => (Trouble::Unreachable, "cannot be reached"),
        // A refused password or user is said at once, not retried: it
        // stays refused until someone changes it.
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            (Trouble::Failed, "login refused")
        }
        // The server going down, starting up, or the connection lost: it
        // may come back (the writer spools meanwhile).
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || c.code().starts_with("08") =>
        {
            (Trouble::Unreachable, "cannot be reached")
        }
        // Two writers crossing: the same batch again succeeds.
        Some(c)
            if *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::T_R_SERIALIZATION_FAILURE =>
        {
            (Trouble::Locked, "busy")
        }
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => (Trouble::ReadOnly, "not allowed"),
        Some(c) if *c == SqlState::READ_ONLY_SQL_TRANSACTION => {
            (Trouble::ReadOnly, "the server is read-only")
        }
        Some(c) if *c == SqlState::DISK_FULL => (Trouble::Full, "the server's disk is full"),
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => (Trouble::Locked, "locked"),
        Some(_) => (Trouble::Failed, "failed"),
        None => (Trouble::Unreachable, "cannot be reached"),
    };
    let detail = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    };
    ArchiveError::new(trouble, place, format!("{what}: {detail}"))
}

impl Engine for PgArchive {
    fn shared(&self) -> bool {
        true
    }

    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let (updated, id) = match after {
            Some(c) => (Some(c.updated), c.id.clone()),
            None => (None, String::new()),
        };
        let limit = i64::from(limit);
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT {COLUMNS} FROM sessions
                     WHERE $1::bigint IS NULL OR (updated, id) < ($1, $2)
                     ORDER BY updated DESC, id DESC LIMIT $3"
                ),
                &[&updated, &id, &limit],
            ))
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError> {
        let limit = i64::from(limit);
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT {COLUMNS} FROM sessions WHERE updated >= $1
                     ORDER BY updated DESC, id DESC LIMIT $2"
                ),
                &[&since, &limit],
            ))
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(rows.iter().map(pg_row).collect())
    }

    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError> {
        let row = self
            .rt
            .block_on(self.client.query_opt(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"),
                &[&id],
            ))
            .map_err(|e| crate::archive::postgres::classify(&self.place, &e))?;
        Ok(row.as_ref().map(pg_row))
    }

    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        Ok(None)
    }

    fn answers(
        &mut self,
        filter: &crate::archive::engine::AnswerFilter,
    ) -> Result<Vec<crate::archive::rows::AnswerRow>, ArchiveError> {
        if self.version < answers::SINCE {
            return Ok(Vec::new());
        }
        let place = self.place.clone();
        (self.rt.block_on(answers::list(&self.client, filter))).map_err(|e| classify(&place, &e))
    }

    fn pins(&mut self) -> Result<Vec<String>, ArchiveError> {
        if self.version < pins::SINCE {
            return Ok(Vec::new());
        }
        let place = self.place.clone();
        (self.rt.block_on(pins::pins(&self.client))).map_err(|e| classify(&place, &e))
    }

    fn set_pin(&mut self, id: &str, pinned: bool, host: &str) -> Result<bool, ArchiveError> {
        if let Some(why) = &self.read_only {
            return Err(refuse_write(&self.place, why));
        }
        let (place, now) = (self.place.clone(), crate::archive::now_ms());
        (self
            .rt
            .block_on(pins::set(&self.client, id, pinned, now, host)))
        .map_err(|e| classify(&place, &e))
    }

    /// A team archive is pruned by its policy alone: none set, none.
    fn policy(&mut self) -> Result<Option<crate::archive::prune::Limits>, ArchiveError> {
        if self.version < pins::SINCE {
            return Ok(Some(crate::archive::prune::Limits::NONE));
        }
        let place = self.place.clone();
        let set = self.rt.block_on(pins::policy(&self.client));
        let set = set.map_err(|e| classify(&place, &e))?;
        Ok(Some(set.unwrap_or(crate::archive::prune::Limits::NONE)))
    }

    fn set_policy(
        &mut self,
        limits: &crate::archive::prune::Limits,
        by: &str,
    ) -> Result<(), ArchiveError> {
        let (place, now) = (self.place.clone(), crate::archive::now_ms());
        let set = self
            .rt
            .block_on(pins::set_policy(&self.client, limits, by, now));
        set.map_err(|e| match e.code() {
            Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => ArchiveError::new(
                Trouble::ReadOnly,
                &place,
                "only who may write the archive's policy (its owner, unless granted) sets it",
            ),
            _ => classify(&place, &e),
        })
    }

    fn redactions(&mut self, session_id: Option<&str>) -> Result<Vec<(String, u64)>, ArchiveError> {
        if self.version < crate::archive::postgres::redactions::SINCE {
            return Ok(Vec::new());
        }
        let place = self.place.clone();
        self.rt
            .block_on(crate::archive::postgres::redactions::by_rule(
                &self.client,
                session_id,
            ))
            .map_err(|e| classify(&place, &e))
    }

    fn place(&self) -> &str {
        &self.place
    }

    fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    fn bulk(&mut self, on: bool) {
        crate::archive::postgres::upkeep::bulk(self, on);
    }

    fn rows_ahead(&self) -> Option<fn(&mut crate::archive::rows::PartRow)> {
        Some(crate::archive::postgres::blocks_search::prepare)
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, ArchiveError> {
        if let Some(why) = &self.read_only {
            return Err(refuse_write(&self.place, why));
        }
        let place = self.place.clone();
        let err = |e: tokio_postgres::Error| classify(&place, &e);
        if !self.staging_ready {
            self.rt
                .block_on(
                    self.client
                        .batch_execute(crate::archive::postgres::copy::STAGING),
                )
                .map_err(err)?;
            self.staging_ready = true;
        }
        // What leaves the machine is redacted unless the config says `off`.
        let redacts = crate::redact::policy().redacts(true);
        let (batch, found) = crate::archive::redacted::for_engine(batch, redacts);
        let batch = &*batch;
        let found = &found[..];
        match self.write_at_version(batch, found) {
            // Upgraded under this writer by another ocview (this one may
            // not change the schema): written again as the schema is now.
            Err(LogError::Db(e)) if schema_moved(&e) => {
                let was = self.version;
                self.version = crate::archive::schema::LATEST;
                self.prepare()?;
                if self.version == was {
                    return Err(classify(&place, &e));
                }
                if let Some(why) = &self.read_only {
                    return Err(refuse_write(&place, why));
                }
                self.write_at_version(batch, found)
                    .map_err(|e| e.said(&place))
            }
            written => {
                if written.is_ok() {
                    crate::archive::postgres::upkeep::written(self);
                }
                written.map_err(|e| e.said(&place))
            }
        }
    }

    fn checkpoint(
        &mut self,
        file: &str,
    ) -> Result<Option<crate::archive::resume::Checkpoint>, ArchiveError> {
        let place = self.place.clone();
        self.rt
            .block_on(crate::archive::postgres::resume::load(&self.client, file))
            .map_err(|e| classify(&place, &e))
    }

    fn find(&mut self, q: &Query) -> Result<crate::archive::query::Searched, ArchiveError> {
        // Its blocks are read until the newest hits are settled.
        Ok(crate::archive::query::Searched {
            hits: crate::archive::postgres::search::search(self, q)?,
            unchecked_before: None,
        })
    }

    fn events(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError> {
        self.rt
            .block_on(crate::archive::postgres::event_log::events(
                &self.client,
                &self.place,
                session_id,
            ))
    }

    fn snapshot(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError> {
        let place = self.place.clone();
        let err = |e: tokio_postgres::Error| classify(&place, &e);
        let info = self
            .rt
            .block_on(
                self.client
                    .query_opt("SELECT raw FROM sessions WHERE id = $1", &[&session_id]),
            )
            .map_err(err)?;
        let Some(info) = info else {
            return Ok(Vec::new());
        };
        let mut out = vec![crate::archive::snapshot::session_event(info.get(0))];
        // A part or message the log holds as it is is read from its block.
        let logged = crate::archive::postgres::event_log::logged_column(self.version, "logged");
        let message_logged =
            crate::archive::postgres::event_log::message_logged_column(self.version, "logged");
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT k, o, raw, logged FROM (
                       SELECT 'm' AS k, id AS o, raw, {message_logged} AS logged
                       FROM messages WHERE session_id = $1
                       UNION ALL SELECT 'p', message_id || ' ' || id, raw, {logged}
                       FROM parts WHERE session_id = $1
                     ) items ORDER BY o COLLATE \"C\", k"
                ),
                &[&session_id],
            ))
            .map_err(err)?;
        let from_log = self
            .rt
            .block_on(crate::archive::postgres::event_log::logged_items(
                &self.client,
                &place,
                rows.iter().filter_map(|r| r.get::<_, Option<i64>>(3)),
            ))?;
        for r in &rows {
            let raw = match r.get::<_, Option<i64>>(3) {
                Some(at) => from_log.get(&at).map_or("", String::as_str),
                None => r.get(2),
            };
            out.push(crate::archive::snapshot::item_event(
                r.get(0),
                session_id,
                raw,
            ));
        }
        let todos = self
            .rt
            .block_on(crate::archive::postgres::event_log::last_todo(
                &self.client,
                &place,
                session_id,
            ))?;
        out.extend(todos.and_then(|t| crate::archive::snapshot::todo_event(session_id, &t)));
        Ok(out)
    }

    fn find_sessions(&mut self, id: &str) -> Result<Vec<String>, ArchiveError> {
        let rows = self
            .rt
            .block_on(self.client.query(
                "SELECT id FROM sessions WHERE starts_with(id, $1)
                 ORDER BY id = $1 DESC, id LIMIT 5",
                &[&id],
            ))
            .map_err(|e| classify(&self.place, &e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn counts(&mut self) -> Result<Counts, ArchiveError> {
        let row = self
            .rt
            .block_on(self.client.query_one(
                "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),
                        (SELECT count(*) FROM parts), (SELECT count(*) FROM event_keys)",
                &[],
            ))
            .map_err(|e| classify(&self.place, &e))?;
        let n = |i: usize| row.get::<_, i64>(i) as u64;
        Ok(Counts {
            sessions: n(0),
            messages: n(1),
            parts: n(2),
            events: n(3),
        })
    }

    fn size(&mut self) -> Result<u64, ArchiveError> {
        crate::archive::postgres::upkeep::size(self)
    }

    fn oldest_sessions(
        &mut self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, ArchiveError> {
        crate::archive::postgres::upkeep::oldest_sessions(self, before, limit)
    }

    fn unlisted_sessions(&mut self) -> Result<Vec<String>, ArchiveError> {
        crate::archive::postgres::upkeep::unlisted_sessions(self)
    }

    fn span(&mut self) -> Result<Option<(i64, i64)>, ArchiveError> {
        crate::archive::postgres::upkeep::span(self)
    }

    fn delete_sessions(&mut self, ids: &[String]) -> Result<u64, ArchiveError> {
        crate::archive::postgres::upkeep::delete_sessions(self, ids)
    }

    fn tool_calls(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
    ) -> Result<Vec<crate::archive::tool_calls::CallCount>, ArchiveError> {
        tool_calls::counts(self, filter)
    }

    fn failed_calls(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
        model: &str,
        tool: &str,
        limit: u32,
    ) -> Result<Vec<crate::archive::tool_calls::FailedCall>, ArchiveError> {
        tool_calls::failed(self, filter, model, tool, limit)
    }

    fn prompt_waits(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
    ) -> Result<Vec<crate::archive::prompt_waits::PromptWait>, ArchiveError> {
        tool_calls::prompt_waits(self, filter)
    }

    fn spending(
        &mut self,
        filter: &crate::archive::tool_calls::CallFilter,
        day_offset_ms: i64,
    ) -> Result<crate::archive::spend::Spending, ArchiveError> {
        spend::spending(self, filter, day_offset_ms)
    }

    fn reindex(&mut self, _budget: usize) -> Result<Option<(u64, u64)>, ArchiveError> {
        // Its index needs no building again.
        Ok(None)
    }

    fn rehearse(&mut self, on: bool) -> Result<(), ArchiveError> {
        crate::archive::postgres::upkeep::rehearse(self, on)
    }

    fn vacuum(&mut self) -> Result<(), ArchiveError> {
        crate::archive::postgres::upkeep::vacuum(self)
    }

    fn import_mark(&mut self, source: &str) -> Result<Option<ImportMark>, ArchiveError> {
        crate::archive::postgres::marks::import_mark(self, source)
    }

    fn set_import_mark(&mut self, source: &str, mark: ImportMark) -> Result<(), ArchiveError> {
        crate::archive::postgres::marks::set_import_mark(self, source, mark)
    }
}

/// One listed session, from a row of `listing::COLUMNS`.
fn pg_row(r: &tokio_postgres::Row) -> ListedSession {
    ListedSession {
        id: r.get(0),
        raw: r.get(1),
        updated: r.get(2),
        server: r.get(3),
        host: r.get(4),
        file: r.get(5),
    }
}
