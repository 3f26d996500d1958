//! Imports resume after a crash: each batch of a file's import carries how
//! far the file has been read (records and bytes), written in the batch's
//! own transaction into the table `imports`, keyed by the file's path and
//! marked with what identifies its content (size, mtime, a hash of its
//! first bytes). The next import of the same content starts after the
//! last committed batch; a finished one is skipped; a changed file is
//! imported again from its start (idempotent upserts keep it exact).

use std::io::Read;
use std::path::Path;

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
            head: format!("{:016x}", crate::archive::encode::fnv(&head)),
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
