//! The local spool: batches for a PostgreSQL archive that could not be
//! reached, kept in a private file until the server is back, then written
//! in the order they came and the file deleted. Writing a batch twice is
//! harmless (events are keyed, states upserted), so a flush cut short is
//! simply done again; a spool left by a killed ocview is flushed by the
//! next one to start with the same archive.
//!
//! One file per archive (a hash of its redacted URL) under
//! `$XDG_STATE_HOME/ocview/spool/` (else `$XDG_DATA_HOME/…`, else
//! `~/.local/state/…`), mode 0600, one JSON batch a line. Processes sharing
//! it take turns through `flock`; a line torn by a crash is skipped.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::archive::engine::{ArchiveError, Engine};
use crate::archive::rows::{Batch, Written};

/// The most a spool holds unless `$OCVIEW_SPOOL_MAX_MB` says otherwise.
const DEFAULT_CAP: u64 = 512 * 1024 * 1024;

pub struct Spool {
    path: PathBuf,
    cap: u64,
}

/// Why a batch was not spooled.
#[derive(Debug)]
pub enum SpoolError {
    /// The spool holds its cap: the batch is not kept.
    Full {
        cap: u64,
    },
    Io(std::io::Error),
}

impl std::fmt::Display for SpoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpoolError::Full { cap } => write!(
                f,
                "the local spool is full ({} MB): new events are not kept until PostgreSQL is back",
                cap / (1024 * 1024)
            ),
            SpoolError::Io(e) => write!(f, "the local spool cannot be written: {e}"),
        }
    }
}

/// Where spools live.
pub fn folder() -> Option<PathBuf> {
    let xdg = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    xdg("XDG_STATE_HOME")
        .or_else(|| xdg("XDG_DATA_HOME"))
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state")))
        .map(|d| d.join("ocview").join("spool"))
}

impl Spool {
    /// The spool of the archive `place` (its redacted URL), in `folder()`.
    pub fn for_place(place: &str) -> Option<Spool> {
        let cap = std::env::var("OCVIEW_SPOOL_MAX_MB")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(DEFAULT_CAP, |mb| mb * 1024 * 1024);
        let name = format!(
            "{:016x}.jsonl",
            crate::archive::encode::fnv(place.as_bytes())
        );
        Some(Spool::at(folder()?.join(name), cap))
    }

    pub fn at(path: PathBuf, cap: u64) -> Spool {
        Spool { path, cap }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether anything waits in it.
    pub fn is_empty(&self) -> bool {
        std::fs::metadata(&self.path).map_or(true, |m| m.len() == 0)
    }

    /// The file, open and locked for this process alone: the same file as
    /// the path names (another process may have flushed and deleted the
    /// one we opened while we waited).
    fn locked(&self) -> std::io::Result<Locked> {
        // A folder made here is 0700 (each level made); one that exists is
        // left as its owner set it. The file is 0600, and never opened
        // through a link someone put in its place.
        if let Some(dir) = self.path.parent()
            && !dir.exists()
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        loop {
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&self.path)?;
            // SAFETY: flock on a descriptor we own; it is released when the
            // file is closed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let held = file.metadata()?;
            match std::fs::metadata(&self.path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {
                    return Ok(Locked(file));
                }
                _ => continue,
            }
        }
    }

    /// Add a batch at the end; the events it holds.
    pub fn append(&self, batch: &Batch) -> Result<u64, SpoolError> {
        let mut line =
            serde_json::to_string(batch).map_err(|e| SpoolError::Io(std::io::Error::other(e)))?;
        line.push('\n');
        let Locked(mut file) = self.locked().map_err(SpoolError::Io)?;
        let held = file.metadata().map_err(SpoolError::Io)?.len();
        if held + line.len() as u64 > self.cap {
            return Err(SpoolError::Full { cap: self.cap });
        }
        file.write_all(line.as_bytes()).map_err(SpoolError::Io)?;
        Ok(batch.events.len() as u64)
    }

    /// The batches it holds, in order (a torn line skipped).
    pub fn batches(&self) -> std::io::Result<Vec<Batch>> {
        match File::open(&self.path) {
            Ok(file) => Ok(read_batches(&file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Write every batch to `engine` in order, then delete the spool. On
    /// an error the spool stays whole (what was written is written again
    /// next time, harmlessly). What the batches added.
    pub fn flush(&self, engine: &mut dyn Engine) -> Result<Flushed, ArchiveError> {
        let io = |e: std::io::Error| {
            ArchiveError::new(
                crate::archive::Trouble::Failed,
                &self.path.display().to_string(),
                format!("the local spool cannot be read: {e}"),
            )
        };
        if !self.path.exists() {
            return Ok(Flushed::default());
        }
        let Locked(mut file) = self.locked().map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut out = Flushed::default();
        for batch in read_batches(&file) {
            let w = engine.write(&batch)?;
            out.batches += 1;
            out.events += batch.events.len() as u64;
            out.written.events += w.events;
            out.written.parts += w.parts;
        }
        std::fs::remove_file(&self.path).map_err(io)?;
        Ok(out)
    }
}

/// What a flush wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flushed {
    pub batches: u64,
    /// Events the spool held.
    pub events: u64,
    /// What was new to the archive.
    pub written: Written,
}

struct Locked(File);

fn read_batches(file: &File) -> Vec<Batch> {
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str(&line).ok())
        .collect()
}
