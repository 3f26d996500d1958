//! Opening opencode's live database without ever getting in its way:
//! read-only (never write, create or checkpoint), every statement checked
//! by SQLite's authorizer (the credential tables cannot be read, nothing
//! can be changed or attached), a small busy timeout and a brief retry,
//! after which the database is reported locked instead of waited for.

use std::path::Path;
use std::time::Duration;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::DbError;
use super::path::writer_files_exist;

/// Tables that hold access and refresh tokens: no statement may read them.
pub const SECRET_TABLES: [&str; 4] = ["account", "control_account", "credential", "account_state"];
/// Columns that are secrets in tables that are otherwise fine to read.
const SECRET_COLUMNS: [(&str, &str); 1] = [("session_share", "secret")];

/// How long one statement waits for a lock: opencode's writes are short,
/// and a viewer must never hold opencode up.
const BUSY_TIMEOUT: Duration = Duration::from_millis(40);
/// Tries of a statement that found the database busy before "locked".
const BUSY_TRIES: u32 = 3;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

/// The pragmas ocview uses; no other runs (some change the file).
const ALLOWED_PRAGMAS: [&str; 5] = [
    "table_info",
    "query_only",
    "busy_timeout",
    "data_version",
    "schema_version",
];

/// Whether the file's header says write-ahead log (bytes 18 and 19 are 2).
fn is_wal_database(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| header[18] == 2 && header[19] == 2)
}

/// Open `path` read-only with the guards on. Checks the file first so a
/// missing or empty one gets its own message. The flag: opened as a
/// closed database (see below), to be opened again once a writer comes.
pub fn open(path: &Path) -> Result<(Connection, bool), DbError> {
    let shown = path.display().to_string();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let data = path.parent().unwrap_or(Path::new("."));
            if data.join("storage").join("session").is_dir() {
                return Err(DbError::OldRelease(data.display().to_string()));
            }
            return Err(DbError::Missing(shown));
        }
        Err(e) => return Err(DbError::Other(format!("{shown}: {e}"))),
        Ok(m) if m.is_dir() => {
            return Err(DbError::Other(format!(
                "{shown} is a folder, not a database"
            )));
        }
        Ok(m) if m.len() == 0 => return Err(DbError::Empty(shown)),
        Ok(_) => {}
    }
    // No CREATE: a missing file fails instead of appearing. The URI's
    // mode=ro says the same to SQLite's file layer. A WAL database nobody
    // has open (no -wal, no -shm beside it) is read `immutable`: SQLite
    // would otherwise make both files beside it, and, run as another user,
    // leave files opencode cannot open. A live one is never immutable (it
    // would read torn pages): `Db` opens it again once a writer comes.
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let closed = is_wal_database(path) && !writer_files_exist(path);
    let mut uri = super::path::read_only_uri(path);
    if closed {
        uri.push_str("&immutable=1");
    }
    let mut conn =
        Connection::open_with_flags(&uri, flags).map_err(|e| DbError::from_sqlite(&shown, e))?;
    conn.authorizer(Some(authorize))
        .map_err(|e| DbError::from_sqlite(&shown, e))?;
    let setup = || -> rusqlite::Result<()> {
        // Closing a read-only connection never checkpoints; say so anyway.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.execute_batch("PRAGMA query_only = 1")?;
        Ok(())
    };
    setup().map_err(|e| DbError::from_sqlite(&shown, e))?;
    Ok((conn, closed))
}

/// The authorizer: reads and selects, except of secrets; the few pragmas
/// above; nothing that writes, attaches or changes the schema.
fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Read {
            table_name,
            column_name,
        } => {
            let secret = SECRET_TABLES
                .iter()
                .any(|t| t.eq_ignore_ascii_case(table_name))
                || SECRET_COLUMNS.iter().any(|(t, c)| {
                    t.eq_ignore_ascii_case(table_name) && c.eq_ignore_ascii_case(column_name)
                });
            if secret {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Select | AuthAction::Function { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        // Short read transactions (BEGIN / COMMIT) are how reads stay
        // consistent; a read-only connection cannot write in one.
        AuthAction::Transaction { .. } => Authorization::Allow,
        AuthAction::Pragma { pragma_name, .. }
            if ALLOWED_PRAGMAS
                .iter()
                .any(|p| p.eq_ignore_ascii_case(pragma_name)) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// Run `f` (one short read), trying again briefly while the database is
/// busy; then report it locked. Never waits long: opencode comes first.
pub fn with_retry<T>(path: &str, mut f: impl FnMut() -> rusqlite::Result<T>) -> Result<T, DbError> {
    let mut tries = 0;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if is_busy(&e) && tries + 1 < BUSY_TRIES => {
                tries += 1;
                std::thread::sleep(BUSY_PAUSE);
            }
            Err(e) => return Err(DbError::from_sqlite(path, e)),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}
