//! The embedded engine: one SQLite file (WAL), created mode 0600 in a
//! folder of mode 0700, searched through FTS5.
//!
//! Its rooms: the event log in compressed blocks (`event_log`), the word
//! index and its queries (`search`), how far each opencode database was
//! imported (`marks`), size, pruning and vacuum (`upkeep`), its migrations
//! and their runner (`schema`, `migrate`), file imports' checkpoints
//! (`resume`); the session list's pages are read by its `Engine` methods here.

mod answers;
pub mod document;
pub(in crate::archive) mod event_log;
pub(in crate::archive) mod marks;
pub mod migrate;
mod one_id;
mod pins;
pub(in crate::archive) mod redactions;
pub mod reindex;
pub mod resume;
pub mod schema;
pub(in crate::archive) mod search;
mod spend;
mod tool_calls;
pub(in crate::archive) mod upkeep;
mod write;

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

use crate::archive::engine::{ArchiveError, Counts, Engine, ImportMark, Trouble, refuse_write};
use crate::archive::listing::{COLUMNS, ListCursor, ListedSession};
use crate::archive::migrate::Ran;
use crate::archive::query::Query;
use crate::archive::rows::{Batch, Written};

/// A part row's insert, before what a conflict does (the upsert and the
/// insert of a part the archive lacks share it).
const PART_INSERT: &str = "INSERT INTO parts (id, message_id, session_id, kind, tool, state, time, updated, raw, hash, logged, error)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// How long a write waits for another writer before the archive is "locked".
const BUSY_WAIT: Duration = Duration::from_millis(1500);

pub struct SqliteArchive {
    pub(in crate::archive) conn: Connection,
    pub(in crate::archive) place: String,
    pub(in crate::archive) read_only: Option<String>,
    /// In a rehearsal (`Engine::rehearse`): deletes go into its
    /// transaction, never one of their own.
    pub(in crate::archive) rehearsing: bool,
}

impl SqliteArchive {
    /// Open (creating it, private, if need be) the archive at `path`.
    pub fn open(path: &Path) -> Result<SqliteArchive, ArchiveError> {
        let place = path.display().to_string();
        let fail = |trouble, m: String| ArchiveError::new(trouble, &place, m);
        let read_only = match std::fs::symlink_metadata(path) {
            Ok(meta) => existing_file(&meta)
                .map_err(|e| fail(Trouble::Failed, e))?
                .or_else(|| not_writable_here(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create_private(path).map_err(|e| fail(Trouble::Failed, e))?;
                None
            }
            Err(e) => return Err(fail(Trouble::Failed, format!("cannot be read: {e}"))),
        };
        let conn = open_connection(path, read_only.is_some()).map_err(|e| classify(&place, &e))?;
        conn.busy_timeout(BUSY_WAIT)
            .map_err(|e| classify(&place, &e))?;
        let mut archive = SqliteArchive {
            conn,
            place,
            read_only,
            rehearsing: false,
        };
        archive.prepare(path)?;
        Ok(archive)
    }

    fn prepare(&mut self, path: &Path) -> Result<(), ArchiveError> {
        let (recorded, legacy) =
            migrate::versions(&self.conn).map_err(|e| classify(&self.place, &e))?;
        let version = recorded.unwrap_or(0).max(legacy);
        if version > crate::archive::schema::LATEST {
            return self.newer(path, version);
        }
        if version == 0 && holds_tables(&self.conn).map_err(|e| classify(&self.place, &e))? {
            return Err(ArchiveError::new(
                Trouble::Failed,
                &self.place,
                "an SQLite database that is not an ocview archive: left as it is",
            ));
        }
        if self.read_only.is_some() {
            return if version == 0 {
                Err(ArchiveError::new(
                    Trouble::ReadOnly,
                    &self.place,
                    "read-only and empty: nothing to search",
                ))
            } else {
                Ok(())
            };
        }
        let c = &mut self.conn;
        let place = &self.place;
        write_ahead_log(c).map_err(|e| classify(place, &e))?;
        c.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| classify(place, &e))?;
        // A batch's pages fit in memory until its commit (SQLite's 2 MB
        // default spills them to the log mid-batch); pages are taken only
        // as they are touched.
        c.pragma_update(None, "cache_size", -32_768)
            .map_err(|e| classify(place, &e))?;
        // Checkpoints copy each page the log holds once, however often it
        // was written: a longer log (about 40 MB, not 4) copies the hot
        // pages of the index and the tables' ends far fewer times.
        c.pragma_update(None, "wal_autocheckpoint", 10_000)
            .map_err(|e| classify(place, &e))?;
        // Also a legacy archive at `LATEST`: its history is recorded once.
        if recorded.unwrap_or(0) < crate::archive::schema::LATEST {
            // Another opener (the writer, the database importer, a search)
            // may be migrating too: the run takes the write lock first.
            match migrate::run(c, schema::MIGRATIONS, schema::STEPS) {
                Ok(Ran::Current) => {}
                Ok(Ran::Newer(v)) => return self.newer(path, v),
                Err(e) => {
                    return Err(match e.db() {
                        Some(db) => classify(place, db),
                        None => ArchiveError::new(Trouble::Failed, place, e.to_string()),
                    });
                }
            }
        }
        Ok(())
    }

    /// Written by a newer ocview: open it again read-only, and say so.
    fn newer(&mut self, path: &Path, version: i64) -> Result<(), ArchiveError> {
        if self.read_only.is_none() {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW;
            self.conn =
                Connection::open_with_flags(path, flags).map_err(|e| classify(&self.place, &e))?;
        }
        self.read_only = Some(crate::archive::schema::newer(version));
        Ok(())
    }
}

/// Whether a database with no archive version holds tables of its own
/// (another program's database), rather than being new.
fn holds_tables(c: &Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )
}

/// Put the archive in WAL mode. Changing the journal takes the file for
/// itself and SQLite does not wait for that (no busy handler), so openers
/// at once on a new archive take turns here.
fn write_ahead_log(c: &Connection) -> rusqlite::Result<()> {
    let start = std::time::Instant::now();
    loop {
        match c.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < BUSY_WAIT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The connection: never through a link put there after the check. A
/// read-only archive in a folder nothing can be made in (a read-only
/// mount, another user's folder) is read `immutable` when no writer's log
/// is beside it: SQLite could not make its shared-memory file there, and
/// nobody can be writing it.
fn open_connection(path: &Path, read_only: bool) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    if !read_only {
        return Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_READ_WRITE);
    }
    let flags = flags | OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let mut uri = crate::source::opencode_db::path::read_only_uri(path);
    if writable(folder_of(path)).is_err()
        && !crate::source::opencode_db::path::writer_files_exist(path)
    {
        uri.push_str("&immutable=1");
    }
    Connection::open_with_flags(&uri, flags)
}

/// Why an archive whose mode lets it be written cannot be written here: a
/// read-only file system, no right to it, or a folder its log cannot be
/// made in. `None`: it can be.
fn not_writable_here(path: &Path) -> Option<String> {
    if let Err(e) = writable(path) {
        return Some(match e.raw_os_error() {
            Some(libc::EROFS) => "it is on a read-only file system: only read".to_string(),
            _ => format!("it cannot be written here ({e}): only read"),
        });
    }
    match writable(folder_of(path)) {
        Err(e) if e.raw_os_error() == Some(libc::EROFS) => {
            Some("its folder is on a read-only file system: only read".to_string())
        }
        Err(_) => Some(
            "its folder cannot be written (the log kept beside an archive cannot be made \
             there): only read"
                .to_string(),
        ),
        Ok(()) => None,
    }
}

/// Whether this process may write `path` (the kernel's answer: the mount,
/// the mode and the owner).
fn writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    match unsafe { libc::access(c.as_ptr(), libc::W_OK) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The folder an archive file is in.
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether an existing path may be used as an archive, and why it may
/// only be read: a regular file (not a link, a device, a pipe), not empty
/// unless another ocview is making it this moment, and written only when
/// it is the user's own and its mode lets them. Its mode is never changed.
fn existing_file(meta: &std::fs::Metadata) -> Result<Option<String>, String> {
    use std::os::unix::fs::MetadataExt;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err("it is a symbolic link: name the archive file itself".into());
    }
    if kind.is_dir() {
        return Err("it is a directory".into());
    }
    if !kind.is_file() {
        return Err("it is not a regular file (a device or a pipe): left as it is".into());
    }
    let mode = meta.mode();
    let fresh = meta
        .modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < BEING_MADE);
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.len() == 0 && !(fresh && mode & 0o777 == 0o600 && meta.uid() == me) {
        return Err("it is an empty file, not an archive: left as it is".into());
    }
    if meta.uid() != me {
        return Ok(Some(format!(
            "the file belongs to another user (uid {}): only read",
            meta.uid()
        )));
    }
    if mode & 0o200 == 0 {
        // Root may write anyway: the mode says what is meant.
        return Ok(Some(format!(
            "the file is read-only (mode {:03o})",
            mode & 0o777
        )));
    }
    Ok(None)
}

/// How long an empty private file may be another ocview's archive in the
/// making (it creates the file, then SQLite writes its first page).
const BEING_MADE: std::time::Duration = std::time::Duration::from_secs(10);

/// The archive's folder (mode 0700) and file (mode 0600), made before
/// SQLite opens it, so it is never readable by others for a moment.
fn create_private(path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create its folder: {e}"))?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
        .or_else(|e| match e.kind() {
            // Another opener made it a moment ago: it is private too.
            std::io::ErrorKind::AlreadyExists => Ok(()),
            _ => Err(format!("cannot create it: {e}")),
        })
}

/// The default place: `$XDG_DATA_HOME/ocview/archive.db`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("share")))
        .map(|d| d.join("ocview").join("archive.db"))
}

/// An SQLite error said as the trouble it is.
pub(in crate::archive) fn classify(place: &str, e: &rusqlite::Error) -> ArchiveError {
    let code = e.sqlite_error_code();
    let (trouble, what) = match code {
        Some(ErrorCode::NotADatabase) => {
            (Trouble::Corrupt, "not an archive (not an SQLite database)")
        }
        Some(ErrorCode::DatabaseCorrupt) => (Trouble::Corrupt, "damaged (SQLite says corrupt)"),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            (Trouble::Locked, "locked by another program")
        }
        Some(ErrorCode::DiskFull) => (Trouble::Full, "the disk is full"),
        Some(ErrorCode::ReadOnly) => (Trouble::ReadOnly, "cannot be written (read-only)"),
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            (Trouble::Failed, "cannot be opened")
        }
        _ => (Trouble::Failed, "failed"),
    };
    ArchiveError::new(trouble, place, format!("{what}: {e}"))
}

impl Engine for SqliteArchive {
    fn shared(&self) -> bool {
        false
    }

    fn list_page(
        &mut self,
        after: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
        let (updated, id) = match after {
            Some(c) => (Some(c.updated), c.id.as_str()),
            None => (None, ""),
        };
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM sessions
                 WHERE ?1 IS NULL OR updated < ?1 OR (updated = ?1 AND id < ?2)
                 ORDER BY updated DESC, id DESC LIMIT ?3"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![updated, id, limit], sqlite_row)
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn list_since(&mut self, since: i64, limit: u32) -> Result<Vec<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE updated >= ?1
                 ORDER BY updated DESC, id DESC LIMIT ?2"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![since, limit], sqlite_row)
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn listed(&mut self, id: &str) -> Result<Option<ListedSession>, ArchiveError> {
        let err = |e: rusqlite::Error| crate::archive::sqlite::classify(&self.place, &e);
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                [id],
                sqlite_row,
            )
            .optional()
            .map_err(err)
    }

    fn change_mark(&mut self) -> Result<Option<i64>, ArchiveError> {
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map(Some)
            .map_err(|e| crate::archive::sqlite::classify(&self.place, &e))
    }

    fn answers(
        &mut self,
        filter: &crate::archive::engine::AnswerFilter,
    ) -> Result<Vec<crate::archive::rows::AnswerRow>, ArchiveError> {
        answers::list(&self.conn, filter).map_err(|e| classify(&self.place, &e))
    }

    fn pins(&mut self) -> Result<Vec<String>, ArchiveError> {
        pins::pins(&self.conn).map_err(|e| classify(&self.place, &e))
    }

    fn set_pin(&mut self, id: &str, pinned: bool, host: &str) -> Result<bool, ArchiveError> {
        if let Some(why) = &self.read_only {
            return Err(refuse_write(&self.place, why));
        }
        pins::set(&self.conn, id, pinned, crate::archive::now_ms(), host)
            .map_err(|e| classify(&self.place, &e))
    }

    fn redactions(&mut self, session_id: Option<&str>) -> Result<Vec<(String, u64)>, ArchiveError> {
        crate::archive::sqlite::redactions::by_rule(&self.conn, session_id)
            .map_err(|e| crate::archive::sqlite::classify(&self.place, &e))
    }

    fn place(&self) -> &str {
        &self.place
    }

    fn release_memory(&mut self) {
        if let Err(e) = self.conn.release_memory() {
            tracing::debug!("archive: cache not released: {e}");
        }
    }

    fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    fn rows_ahead(&self) -> Option<fn(&mut crate::archive::rows::PartRow)> {
        Some(write::prepare)
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, ArchiveError> {
        if let Some(why) = &self.read_only {
            return Err(refuse_write(&self.place, why));
        }
        let place = self.place.clone();
        let err = |e: rusqlite::Error| classify(&place, &e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        // The local archive is redacted only when the config says `all`.
        let redacts = crate::redact::policy().redacts(false);
        let (batch, found) = crate::archive::redacted::for_engine(batch, redacts);
        let written = write::batch(&tx, &batch).map_err(err)?;
        crate::archive::sqlite::redactions::save(&tx, &found).map_err(err)?;
        answers::save(&tx, &batch.answers).map_err(err)?;
        save_prompts(&tx, &batch.prompts).map_err(err)?;
        spend::save(&tx, &batch.retries, &batch.prices).map_err(err)?;
        if let Some(c) = &batch.checkpoint {
            crate::archive::sqlite::resume::save(&tx, c).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(written)
    }

    fn checkpoint(
        &mut self,
        file: &str,
    ) -> Result<Option<crate::archive::resume::Checkpoint>, ArchiveError> {
        crate::archive::sqlite::resume::load(&self.conn, &self.place, file)
    }

    fn find(&mut self, q: &Query) -> Result<crate::archive::query::Searched, ArchiveError> {
        crate::archive::sqlite::search::search(self, q)
    }

    fn events(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError> {
        let err = |e: rusqlite::Error| classify(&self.place, &e);
        crate::archive::sqlite::event_log::events(&self.conn, session_id).map_err(err)
    }

    fn snapshot(&mut self, session_id: &str) -> Result<Vec<String>, ArchiveError> {
        let err = |e: rusqlite::Error| classify(&self.place, &e);
        let mut out = Vec::new();
        let info: Option<String> = self
            .conn
            .query_row(
                "SELECT raw FROM sessions WHERE id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        let Some(info) = info else {
            return Ok(out);
        };
        out.push(crate::archive::snapshot::session_event(&info));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT 'm', id, raw, NULL FROM messages WHERE session_id = ?1
                 UNION ALL SELECT 'p', message_id || ' ' || id, raw, logged FROM parts WHERE session_id = ?1
                 ORDER BY 2, 1",
            )
            .map_err(err)?;
        let mut reader = crate::archive::sqlite::event_log::PartReader::default();
        let mut rows = stmt.query([session_id]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let kind: String = r.get(0).map_err(err)?;
            let logged: Option<i64> = r.get(3).map_err(err)?;
            let raw = reader
                .raw(&self.conn, r.get_ref(2).map_err(err)?, logged)
                .map_err(err)?;
            out.push(crate::archive::snapshot::item_event(
                &kind, session_id, &raw,
            ));
        }
        drop(rows);
        let todos =
            crate::archive::sqlite::event_log::last_todo(&self.conn, session_id).map_err(err)?;
        out.extend(todos.and_then(|t| crate::archive::snapshot::todo_event(session_id, &t)));
        Ok(out)
    }

    fn find_sessions(&mut self, id: &str) -> Result<Vec<String>, ArchiveError> {
        let err = |e: rusqlite::Error| classify(&self.place, &e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM sessions WHERE id = ?1 OR substr(id, 1, length(?1)) = ?1
                 ORDER BY id = ?1 DESC, id LIMIT 5",
            )
            .map_err(err)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(err)?;
        rows.collect::<Result<Vec<String>, _>>().map_err(err)
    }

    fn counts(&mut self) -> Result<Counts, ArchiveError> {
        let err = |e: rusqlite::Error| classify(&self.place, &e);
        self.conn
            .query_row(
                "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),
                        (SELECT count(*) FROM parts), (SELECT count(*) FROM event_keys)",
                [],
                |r| {
                    Ok(Counts {
                        sessions: r.get::<_, i64>(0)? as u64,
                        messages: r.get::<_, i64>(1)? as u64,
                        parts: r.get::<_, i64>(2)? as u64,
                        events: r.get::<_, i64>(3)? as u64,
                    })
                },
            )
            .map_err(err)
    }

    fn size(&mut self) -> Result<u64, ArchiveError> {
        crate::archive::sqlite::upkeep::size(self)
    }

    fn oldest_sessions(
        &mut self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, ArchiveError> {
        crate::archive::sqlite::upkeep::oldest_sessions(self, before, limit)
    }

    fn unlisted_sessions(&mut self) -> Result<Vec<String>, ArchiveError> {
        crate::archive::sqlite::upkeep::unlisted_sessions(self)
    }

    fn span(&mut self) -> Result<Option<(i64, i64)>, ArchiveError> {
        crate::archive::sqlite::upkeep::span(self)
    }

    fn delete_sessions(&mut self, ids: &[String]) -> Result<u64, ArchiveError> {
        crate::archive::sqlite::upkeep::delete_sessions(self, ids)
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

    fn reindex(&mut self, budget: usize) -> Result<Option<(u64, u64)>, ArchiveError> {
        if self.read_only.is_some() {
            return Ok(None);
        }
        reindex::some(&self.conn, budget).map_err(|e| classify(&self.place, &e))
    }

    fn rehearse(&mut self, on: bool) -> Result<(), ArchiveError> {
        crate::archive::sqlite::upkeep::rehearse(self, on)
    }

    fn vacuum(&mut self) -> Result<(), ArchiveError> {
        crate::archive::sqlite::upkeep::vacuum(self)
    }

    fn reclaim(&mut self) -> Result<bool, ArchiveError> {
        crate::archive::sqlite::upkeep::reclaim(self)
    }

    fn import_mark(&mut self, source: &str) -> Result<Option<ImportMark>, ArchiveError> {
        crate::archive::sqlite::marks::import_mark(self, source)
    }

    fn set_import_mark(&mut self, source: &str, mark: ImportMark) -> Result<(), ArchiveError> {
        crate::archive::sqlite::marks::set_import_mark(self, source, mark)
    }
}

/// One listed session, from a row of `listing::COLUMNS`.
fn sqlite_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ListedSession> {
    Ok(ListedSession {
        id: r.get(0)?,
        raw: r.get(1)?,
        updated: r.get(2)?,
        server: r.get(3)?,
        host: r.get(4)?,
        file: r.get(5)?,
    })
}

/// Prompts seen asked or settled (`crate::archive::prompt_waits`).
fn save_prompts(
    tx: &rusqlite::Transaction<'_>,
    prompts: &[crate::archive::prompt_waits::PromptRow],
) -> rusqlite::Result<()> {
    if prompts.is_empty() {
        return Ok(());
    }
    let mut put = tx.prepare(&crate::archive::prompt_waits::upsert_sql(|i| {
        format!("?{i}")
    }))?;
    for p in prompts {
        put.execute(rusqlite::params![
            p.request_id,
            p.session_id,
            p.kind,
            p.what,
            p.asked,
            p.settled,
            p.reply
        ])?;
    }
    Ok(())
}
