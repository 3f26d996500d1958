//! Imports resume after a crash: each batch of a file's import carries how
//! far the file has been read (records and bytes), written in the batch's
//! own transaction into the table `imports`, keyed by the file's path and
//! marked with what identifies its content (size, mtime, a hash of its
//! first bytes). The next import of the same content starts after the
//! last committed batch; a finished one is skipped; a changed file is
//! imported again from its start (idempotent upserts keep it exact).

use std::io::Read;
use std::path::Path;

use super::engine::ArchiveError;

/// Migration 5 (SQLite).
pub const SQLITE_TABLE: &str = "CREATE TABLE imports (
    file TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL,
    head TEXT NOT NULL,
    records INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    done INTEGER NOT NULL
);";

/// Migration 5 (PostgreSQL).
pub const POSTGRES_TABLE: &str = "CREATE TABLE imports (
    file TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    mtime BIGINT NOT NULL,
    head TEXT NOT NULL,
    records BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    done BOOLEAN NOT NULL
);";

/// How many of a file's first bytes its mark hashes.
const HEAD_BYTES: u64 = 64 * 1024;

/// What a file's content is taken to be: the same mark, the same content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileMark {
    /// The canonical path.
    pub file: String,
    pub size: i64,
    /// Last modified, ms since the epoch.
    pub mtime: i64,
    /// A hash of the first `HEAD_BYTES` (hex).
    pub head: String,
}

impl FileMark {
    /// The mark of the file at `path` (canonical) as it is now.
    pub fn of(path: &Path) -> std::io::Result<FileMark> {
        let file = std::fs::canonicalize(path)?;
        let meta = std::fs::metadata(&file)?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        let mut head = Vec::new();
        std::fs::File::open(&file)?
            .take(HEAD_BYTES)
            .read_to_end(&mut head)?;
        Ok(FileMark {
            file: file.display().to_string(),
            size: meta.len() as i64,
            mtime,
            head: format!("{:016x}", super::encode::fnv(&head)),
        })
    }
}

/// How far one file's import is committed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub mark: FileMark,
    /// Records of the file read and committed.
    pub records: i64,
    /// About how many of its bytes that is (for saying so).
    pub bytes: i64,
    /// The whole file is in.
    pub done: bool,
}

/// What the archive's record of a file means for importing it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// Never imported, or changed since: from the start.
    Fresh,
    /// Interrupted: the first `records` records are in.
    Resume { records: i64, bytes: i64 },
    /// All of it is in.
    Done,
}

/// Where to start `mark`'s import, given what the archive recorded.
pub fn start(mark: &FileMark, recorded: Option<&Checkpoint>) -> Start {
    match recorded {
        Some(c) if c.mark == *mark && c.done => Start::Done,
        Some(c) if c.mark == *mark && c.records > 0 => Start::Resume {
            records: c.records,
            bytes: c.bytes,
        },
        _ => Start::Fresh,
    }
}

pub(super) fn save_sqlite(
    conn: &rusqlite::Connection,
    c: &Checkpoint,
) -> Result<(), rusqlite::Error> {
    conn.prepare(
        "INSERT INTO imports (file, size, mtime, head, records, bytes, done)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (file) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
           head = excluded.head, records = excluded.records, bytes = excluded.bytes,
           done = excluded.done",
    )?
    .execute(rusqlite::params![
        c.mark.file,
        c.mark.size,
        c.mark.mtime,
        c.mark.head,
        c.records,
        c.bytes,
        c.done
    ])
    .map(drop)
}

pub(super) fn load_sqlite(
    conn: &rusqlite::Connection,
    place: &str,
    file: &str,
) -> Result<Option<Checkpoint>, ArchiveError> {
    use rusqlite::OptionalExtension;
    let found = conn
        .query_row(
            "SELECT size, mtime, head, records, bytes, done FROM imports WHERE file = ?1",
            [file],
            |r| {
                Ok(Checkpoint {
                    mark: FileMark {
                        file: file.to_string(),
                        size: r.get(0)?,
                        mtime: r.get(1)?,
                        head: r.get(2)?,
                    },
                    records: r.get(3)?,
                    bytes: r.get(4)?,
                    done: r.get(5)?,
                })
            },
        )
        .optional();
    match found {
        Ok(c) => Ok(c),
        // An archive of an older schema opened read-only has no record.
        Err(e) if e.to_string().contains("no such table") => Ok(None),
        Err(e) => Err(super::sqlite::classify(place, &e)),
    }
}

pub(super) async fn save_postgres(
    tx: &tokio_postgres::Transaction<'_>,
    c: &Checkpoint,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "INSERT INTO imports (file, size, mtime, head, records, bytes, done)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (file) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
           head = excluded.head, records = excluded.records, bytes = excluded.bytes,
           done = excluded.done",
        &[
            &c.mark.file,
            &c.mark.size,
            &c.mark.mtime,
            &c.mark.head,
            &c.records,
            &c.bytes,
            &c.done,
        ],
    )
    .await
    .map(drop)
}

pub(super) async fn load_postgres(
    client: &tokio_postgres::Client,
    file: &str,
) -> Result<Option<Checkpoint>, tokio_postgres::Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('imports') IS NOT NULL", &[])
        .await?
        .get(0);
    if !exists {
        return Ok(None);
    }
    let row = client
        .query_opt(
            "SELECT size, mtime, head, records, bytes, done FROM imports WHERE file = $1",
            &[&file],
        )
        .await?;
    Ok(row.map(|r| Checkpoint {
        mark: FileMark {
            file: file.to_string(),
            size: r.get(0),
            mtime: r.get(1),
            head: r.get(2),
        },
        records: r.get(3),
        bytes: r.get(4),
        done: r.get(5),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(size: i64) -> FileMark {
        FileMark {
            file: "/a.jsonl".into(),
            size,
            mtime: 1,
            head: "00".into(),
        }
    }

    #[test]
    fn the_same_content_resumes_or_is_skipped_and_a_changed_one_starts_over() {
        let partial = Checkpoint {
            mark: mark(10),
            records: 4,
            bytes: 5,
            done: false,
        };
        assert_eq!(start(&mark(10), None), Start::Fresh);
        assert_eq!(
            start(&mark(10), Some(&partial)),
            Start::Resume {
                records: 4,
                bytes: 5
            }
        );
        assert_eq!(start(&mark(11), Some(&partial)), Start::Fresh);
        let done = Checkpoint {
            done: true,
            ..partial
        };
        assert_eq!(start(&mark(10), Some(&done)), Start::Done);
        assert_eq!(start(&mark(12), Some(&done)), Start::Fresh);
    }
}
