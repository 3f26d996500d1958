//! A scratch file for what a headless mode has fetched but not yet written:
//! the server pages a session newest first, a transcript reads oldest
//! first, so pages wait here on disk, not in memory. The file is removed
//! from its folder as soon as it is open (only this process can reach it,
//! and it is gone when the process ends, however it ends).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};

pub struct Spool {
    file: BufWriter<File>,
    len: u64,
}

/// Where a record lies in the spool.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    at: u64,
    len: u64,
}

impl Spool {
    /// A new, empty spool in the temporary folder (`$TMPDIR`).
    pub fn new() -> io::Result<Spool> {
        let dir = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for attempt in 0..64 {
            let path = dir.join(format!(
                "ocview-spool-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => {
                    std::fs::remove_file(&path)?;
                    return Ok(Spool {
                        file: BufWriter::with_capacity(1 << 16, file),
                        len: 0,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free name for a scratch file"))
    }

    /// Keep `bytes`; where they are, to read them back.
    pub fn put(&mut self, bytes: &[u8]) -> io::Result<Slot> {
        self.file.write_all(bytes)?;
        let slot = Slot {
            at: self.len,
            len: bytes.len() as u64,
        };
        self.len += slot.len;
        Ok(slot)
    }

    /// The bytes kept at `slot`.
    pub fn get(&mut self, slot: Slot) -> io::Result<Vec<u8>> {
        self.file.flush()?;
        let len = usize::try_from(slot.len).map_err(io::Error::other)?;
        let mut buf = vec![0; len];
        self.file.get_ref().read_exact_at(&mut buf, slot.at)?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_in_any_order_and_the_file_has_no_name() {
        let mut spool = Spool::new().unwrap();
        let a = spool.put(b"first").unwrap();
        let b = spool.put(b"").unwrap();
        let c = spool.put(&[7u8; 100_000]).unwrap();
        assert_eq!(spool.get(c).unwrap(), vec![7u8; 100_000]);
        assert_eq!(spool.get(a).unwrap(), b"first");
        assert!(spool.get(b).unwrap().is_empty());
        let d = spool.put(b"after a read").unwrap();
        assert_eq!(spool.get(d).unwrap(), b"after a read");
        let named = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("ocview-spool-{}-", std::process::id()))
            });
        assert!(!named, "the spool is unlinked once open");
    }
}
