//! PostgreSQL's side of `crate::archive::resume`: the `imports` table and
//! a file's checkpoint in it.

use crate::archive::resume::{Checkpoint, FileMark};

/// Migration 5.
pub const POSTGRES_TABLE: &str = "CREATE TABLE imports (
    file TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    mtime BIGINT NOT NULL,
    head TEXT NOT NULL,
    records BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    done BOOLEAN NOT NULL
);";

pub(in crate::archive) async fn save(
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

pub(in crate::archive) async fn load(
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
