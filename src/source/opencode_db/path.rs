//! Where opencode keeps its database, as opencode 1.18.33 decides it:
//! `OPENCODE_DB` (absolute, or relative to the data folder) wins; else
//! `opencode.db` in `$XDG_DATA_HOME/opencode` (default
//! `~/.local/share/opencode`) for the release channels, and
//! `opencode-<channel>.db` for the others.

use std::path::{Path, PathBuf};

/// Release channels that share `opencode.db` (opencode's own list).
const RELEASE_CHANNELS: [&str; 3] = ["latest", "beta", "prod"];

/// The environment the location depends on, read once (tests pass their own).
#[derive(Debug, Clone, Default)]
pub struct DbEnv {
    pub opencode_db: Option<String>,
    pub xdg_data_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

impl DbEnv {
    pub fn from_process() -> DbEnv {
        let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        DbEnv {
            opencode_db: non_empty("OPENCODE_DB").map(|v| v.to_string_lossy().into_owned()),
            xdg_data_home: non_empty("XDG_DATA_HOME").map(PathBuf::from),
            home: dirs::home_dir(),
        }
    }

    /// opencode's data folder: `$XDG_DATA_HOME/opencode`.
    pub fn data_dir(&self) -> Option<PathBuf> {
        let base = match &self.xdg_data_home {
            // The XDG spec ignores a relative value.
            Some(d) if d.is_absolute() => d.clone(),
            _ => self.home.as_ref()?.join(".local/share"),
        };
        Some(base.join("opencode"))
    }

    /// The database of a release build (`None`: no home to find it in, or
    /// `OPENCODE_DB=:memory:`, which keeps nothing on disk).
    pub fn database(&self) -> Option<PathBuf> {
        self.database_for_channel("latest")
    }

    /// The database a build of `channel` uses.
    pub fn database_for_channel(&self, channel: &str) -> Option<PathBuf> {
        if let Some(db) = &self.opencode_db {
            if db == ":memory:" {
                return None;
            }
            let p = Path::new(db);
            return if p.is_absolute() {
                Some(p.to_path_buf())
            } else {
                Some(self.data_dir()?.join(p))
            };
        }
        let data = self.data_dir()?;
        if RELEASE_CHANNELS.contains(&channel) {
            Some(data.join("opencode.db"))
        } else {
            Some(data.join(format!("opencode-{}.db", channel_file_part(channel))))
        }
    }
}

/// A channel name as opencode puts it in a file name: anything but
/// letters, digits, `.`, `_` and `-` becomes `-`.
fn channel_file_part(channel: &str) -> String {
    channel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A `file:` URI for SQLite that opens `path` read-only: the characters a
/// URI gives meaning to are %-escaped.
pub fn read_only_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro");
    uri
}

/// The files a writer of a WAL database keeps beside it.
pub fn writer_files_exist(path: &Path) -> bool {
    ["-wal", "-shm"].iter().any(|end| {
        let mut name = path.as_os_str().to_owned();
        name.push(end);
        std::path::Path::new(&name).exists()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(db: Option<&str>, xdg: Option<&str>) -> DbEnv {
        DbEnv {
            opencode_db: db.map(str::to_string),
            xdg_data_home: xdg.map(PathBuf::from),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    #[test]
    fn the_database_is_found_where_opencode_puts_it() {
        let p = |e: DbEnv| e.database().map(|p| p.display().to_string());
        assert_eq!(
            p(env(None, None)).as_deref(),
            Some("/home/u/.local/share/opencode/opencode.db")
        );
        assert_eq!(
            p(env(None, Some("/x"))).as_deref(),
            Some("/x/opencode/opencode.db")
        );
        assert_eq!(
            p(env(None, Some("rel"))).as_deref(),
            Some("/home/u/.local/share/opencode/opencode.db")
        );
        assert_eq!(
            p(env(Some("/a/b.db"), Some("/x"))).as_deref(),
            Some("/a/b.db")
        );
        assert_eq!(
            p(env(Some("b.db"), Some("/x"))).as_deref(),
            Some("/x/opencode/b.db")
        );
        assert_eq!(p(env(Some(":memory:"), None)), None);
        assert_eq!(
            env(None, Some("/x"))
                .database_for_channel("dev/next")
                .unwrap()
                .display()
                .to_string(),
            "/x/opencode/opencode-dev-next.db"
        );
    }

    #[test]
    fn uri_escapes_what_sqlite_would_read_as_syntax() {
        assert_eq!(
            read_only_uri(Path::new("/a b/x?y#z%.db")),
            "file:/a%20b/x%3Fy%23z%25.db?mode=ro"
        );
    }
}
