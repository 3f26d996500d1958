//! OpenCode's own SQLite database, read directly and safely: where it is
//! (`path`), opened read-only behind an authorizer that keeps the
//! credential tables out of reach (`guard`), its schema read from the file
//! (`schema`), the reads the app needs (`sessions`, `rows`), rows turned
//! into the events the reducer knows (`convert`), a reader thread that
//! keeps a live session's message count fresh (`totals`), one that lists
//! and opens every session in the file and follows what is written
//! (`history`), and a session's event log as a recording (`event_log`).
//!
//! Every read is one short statement (no long transaction: a long reader
//! stops opencode's WAL checkpoints), on a thread of its own, never on the
//! async runtime's.

pub mod convert;
pub mod event_log;
pub mod guard;
pub mod history;
pub mod path;
pub mod rows;
pub mod schema;
pub mod sessions;
pub mod totals;
pub mod usage;
mod usage_groups;

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::{Connection, ErrorCode};

pub use path::DbEnv;
pub use schema::Schema;
pub use sessions::{SessionRow, SessionTotals};

/// Why the database cannot be read: each says so in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbError {
    Missing(String),
    /// No database, but the JSON files releases before 1.2 kept (the
    /// folder holding `storage/`).
    OldRelease(String),
    Empty(String),
    NotSqlite(String),
    Corrupt(String),
    NotOpencode(String),
    Locked(String),
    /// A statement the authorizer refused (a credential table).
    Denied(String),
    /// The schema lacks what a read needs (the feature is missing).
    Unsupported(String),
    Other(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Missing(p) => write!(f, "no opencode database at {p}"),
            DbError::OldRelease(dir) => write!(
                f,
                "{dir} holds the sessions of an opencode release before 1.2 (JSON files under \
                 storage/), not a database: ocview reads the database of opencode 1.2 and \
                 later"
            ),
            DbError::Empty(p) => write!(f, "{p} is empty: not an opencode database"),
            DbError::NotSqlite(p) => write!(f, "{p} is not an SQLite database"),
            DbError::Corrupt(p) => write!(f, "{p} is damaged (SQLite reports it malformed)"),
            DbError::NotOpencode(p) => {
                write!(
                    f,
                    "{p} is an SQLite database but not opencode's (no session table)"
                )
            }
            DbError::Locked(p) => {
                write!(f, "{p} is locked by another program; try again in a moment")
            }
            DbError::Denied(why) => write!(f, "refused: {why}"),
            DbError::Unsupported(what) => write!(f, "this database has no {what}"),
            DbError::Other(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for DbError {}

impl DbError {
    /// Name an SQLite failure for the user; `path` as shown.
    pub fn from_sqlite(path: &str, e: rusqlite::Error) -> DbError {
        let p = path.to_string();
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbError::Locked(p),
            Some(ErrorCode::NotADatabase) => DbError::NotSqlite(p),
            Some(ErrorCode::DatabaseCorrupt) => DbError::Corrupt(p),
            Some(ErrorCode::CannotOpen) => DbError::Other(format!("{p}: cannot be opened")),
            Some(ErrorCode::AuthorizationForStatementDenied) => {
                DbError::Denied("ocview only reads, and never opencode's credential tables".into())
            }
            _ => {
                // One line, whatever SQLite said.
                let text = e.to_string().replace(['\n', '\r'], " ");
                DbError::Other(format!("{p}: {text}"))
            }
        }
    }
}

/// An open, guarded database and what its schema holds.
pub struct Db {
    conn: RefCell<Connection>,
    schema: Schema,
    path: PathBuf,
    shown: String,
    /// Read as a closed database (`immutable`, nothing made beside it):
    /// the file's time and size then, to tell when a writer came.
    closed: Cell<Option<FileStamp>>,
    /// Times the connection was opened again: `data_version` moves with it,
    /// since a new connection's numbers are not the old one's.
    reopened: Cell<i64>,
}

type FileStamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> FileStamp {
    std::fs::metadata(path)
        .map(|m| (m.modified().ok(), m.len()))
        .unwrap_or((None, 0))
}

/// The guarded connection, and the file's stamp when it was opened as a
/// closed database.
fn connect(path: &Path) -> Result<(Connection, Option<FileStamp>), DbError> {
    let (conn, closed) = guard::open(path)?;
    Ok((conn, closed.then(|| stamp(path))))
}

impl Db {
    /// Open read-only and read the schema; a file that is not opencode's
    /// (or is missing, locked, damaged) fails with its reason.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let (conn, closed) = connect(path)?;
        let shown = path.display().to_string();
        let schema = Schema::read(&conn, &shown)?;
        Ok(Db {
            conn: RefCell::new(conn),
            schema,
            path: path.to_path_buf(),
            shown,
            closed: Cell::new(closed),
            reopened: Cell::new(0),
        })
    }

    /// Opened while nobody wrote it, and a writer has come since (its files
    /// appeared, or the file changed): what it reads may be old.
    pub fn outdated(&self) -> bool {
        self.closed
            .get()
            .is_some_and(|then| path::writer_files_exist(&self.path) || stamp(&self.path) != then)
    }

    /// One short read through the guards (retried briefly while busy),
    /// first opening the file again if a writer came since it was opened
    /// as a closed database.
    fn read<T>(&self, mut f: impl FnMut(&Connection) -> rusqlite::Result<T>) -> Result<T, DbError> {
        if self.outdated()
            && let Ok(mut conn) = self.conn.try_borrow_mut()
        {
            let (fresh, closed) = connect(&self.path)?;
            *conn = fresh;
            self.closed.set(closed);
            self.reopened.set(self.reopened.get() + 1);
        }
        let conn = self.conn.borrow();
        guard::with_retry(&self.shown, || f(&conn))
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Changes each time another connection commits: nothing to read again
    /// while it stays the same.
    pub fn data_version(&self) -> Result<i64, DbError> {
        let version: i64 =
            self.read(|conn| conn.query_row("PRAGMA data_version", [], |r| r.get(0)))?;
        Ok((self.reopened.get() << 40) + version)
    }

    /// Run any read-only statement through the guards (for callers that
    /// need more than the reads below, and for the authorizer's tests):
    /// the rows' first columns as text.
    pub fn query_strings(&self, sql: &str) -> Result<Vec<String>, DbError> {
        self.read(|conn| {
            let mut st = conn.prepare(sql)?;
            st.query_map([], |r| {
                r.get_ref(0).map(|v| match v {
                    rusqlite::types::ValueRef::Null => String::new(),
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    rusqlite::types::ValueRef::Real(f) => f.to_string(),
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                })
            })?
            .collect()
        })
    }
}
