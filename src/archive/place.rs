//! Where the archive is: off, an SQLite file, or a PostgreSQL server; from
//! `--no-archive`/`--archive`, `$OCVIEW_ARCHIVE`, then the config's
//! `archive`, else `$XDG_DATA_HOME/ocview/archive.db`; and the engine each
//! place opens (the one spot that names both).

use std::path::PathBuf;

use serde::Deserialize;

use crate::archive::engine::{ArchiveError, Engine};

/// The config's `archive`: `false`, `true`, a file or a `postgres://` URL.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ConfigValue {
    On(bool),
    At(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Off,
    Sqlite(PathBuf),
    /// The URL as given (its password, if any, refused before).
    Postgres(String),
}

impl Setting {
    /// The archive as messages name it.
    pub fn place(&self) -> String {
        match self {
            Setting::Off => "off".into(),
            Setting::Sqlite(path) => path.display().to_string(),
            Setting::Postgres(url) => crate::archive::postgres::url::redact(url),
        }
    }

    /// The local queue a networked archive keeps its batches in while its
    /// server is away (`None` for a file, which is never away).
    pub fn spool(&self) -> Option<crate::archive::spool::Spool> {
        match self {
            Setting::Postgres(_) => crate::archive::spool::Spool::for_place(&self.place()),
            _ => None,
        }
    }

    /// Hear other writers' sessions as they are written, on a thread of its
    /// own, until `heard` returns false. False: this archive cannot say
    /// (a file: its readers poll `Engine::change_mark`).
    pub fn listen(
        &self,
        heard: Box<dyn Fn(crate::archive::listing::Heard) -> bool + Send>,
    ) -> bool {
        match self {
            Setting::Postgres(url) => {
                crate::archive::postgres::notify::listen(url.clone(), heard);
                true
            }
            _ => false,
        }
    }

    /// Open it. Blocks (PostgreSQL connects): call it off the UI thread.
    pub fn open(&self) -> Result<Option<Box<dyn Engine>>, ArchiveError> {
        Ok(match self {
            Setting::Off => None,
            Setting::Sqlite(path) => {
                Some(Box::new(crate::archive::sqlite::SqliteArchive::open(path)?))
            }
            Setting::Postgres(url) => {
                Some(Box::new(crate::archive::postgres::PgArchive::open(url)?))
            }
        })
    }
}

/// The setting from the flags, the environment and the config, in that
/// order of precedence.
pub fn resolve(
    flag: Option<&str>,
    no_flag: bool,
    config: Option<&ConfigValue>,
) -> Result<Setting, String> {
    if no_flag {
        return Ok(Setting::Off);
    }
    if let Some(value) = flag {
        return parse(value, "--archive");
    }
    if let Some(value) = std::env::var("OCVIEW_ARCHIVE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        return parse(&value, "$OCVIEW_ARCHIVE");
    }
    match config {
        Some(ConfigValue::On(false)) => Ok(Setting::Off),
        Some(ConfigValue::At(value)) => parse(value, "archive in the config"),
        Some(ConfigValue::On(true)) | None => Ok(crate::archive::sqlite::default_path()
            .map(Setting::Sqlite)
            .unwrap_or(Setting::Off)),
    }
}

/// libpq's other form, `host=… dbname=… password=…`: taken as a file name
/// it would become a file of that name.
fn looks_like_key_values(v: &str) -> bool {
    const KEYS: [&str; 10] = [
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "sslmode",
        "service",
        "application_name",
    ];
    v.split_whitespace().any(|word| {
        word.split_once('=')
            .is_some_and(|(key, _)| KEYS.contains(&key.trim().to_ascii_lowercase().as_str()))
    })
}

/// One value: `off`/`false`, a `postgres://` URL, or a file.
pub fn parse(value: &str, from: &str) -> Result<Setting, String> {
    let v = value.trim();
    match v {
        "off" | "false" | "no" | "none" => return Ok(Setting::Off),
        "on" | "true" | "yes" => {
            return Ok(crate::archive::sqlite::default_path()
                .map(Setting::Sqlite)
                .unwrap_or(Setting::Off));
        }
        _ => {}
    }
    if v.starts_with("postgres://") || v.starts_with("postgresql://") {
        if crate::archive::postgres::url::has_password(v) {
            return Err(format!(
                "{from}: {} has a password in it; a password in a URL is seen by every user of this machine (ps) or sits in a file: put it in ~/.pgpass (or $PGPASSFILE, or passfile= in the URL) or in $PGPASSWORD",
                crate::archive::postgres::url::redact(v)
            ));
        }
        return Ok(Setting::Postgres(v.to_string()));
    }
    if looks_like_key_values(v) {
        // Never echoed: such a string often holds `password=`.
        return Err(format!(
            "{from}: a PostgreSQL connection string (key=value words) is not taken: give a postgres:// URL, with the password in ~/.pgpass (or $PGPASSFILE) or $PGPASSWORD"
        ));
    }
    if v.contains("://") {
        return Err(format!(
            "{from}: {}: an archive is a file or a postgres:// URL",
            crate::archive::postgres::url::redact(v)
        ));
    }
    let path = match v.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()
            .map(|h| h.join(rest))
            .unwrap_or_else(|| PathBuf::from(v)),
        None => PathBuf::from(v),
    };
    Ok(Setting::Sqlite(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_in_order() {
        assert_eq!(resolve(Some("/x.db"), true, None).unwrap(), Setting::Off);
        assert_eq!(
            resolve(Some("/x.db"), false, Some(&ConfigValue::On(false))).unwrap(),
            Setting::Sqlite("/x.db".into())
        );
        assert_eq!(parse("off", "t").unwrap(), Setting::Off);
        assert!(matches!(
            parse("postgres://me@h/db", "t").unwrap(),
            Setting::Postgres(_)
        ));
        for words in [
            "host=db dbname=arch user=me password=hunter2",
            "dbname=arch",
            "  password = hunter2 host=db",
        ] {
            let e = parse(words, "--archive").unwrap_err();
            assert!(
                e.contains("connection string") && e.contains("postgres://"),
                "{e}"
            );
            assert!(!e.contains("hunter2"), "{e}");
        }
        // A file whose name merely holds an `=` is still a file.
        assert_eq!(
            parse("/tmp/a=b.db", "t").unwrap(),
            Setting::Sqlite("/tmp/a=b.db".into())
        );
        let e = parse("postgres://me:hunter2@h/db", "--archive").unwrap_err();
        assert!(e.contains("password") && !e.contains("hunter2"), "{e}");
    }
}
