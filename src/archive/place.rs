//! Where the archive is: off, an SQLite file, or a PostgreSQL server; from
//! `--no-archive`/`--archive`, `$OCVIEW_ARCHIVE`, then the config's
//! `archive`, else `$XDG_DATA_HOME/ocview/archive.db`. And the two things
//! every origin needs: a URL without its credentials, and this machine's
//! name.

use std::path::PathBuf;

use serde::Deserialize;

use super::engine::{ArchiveError, Engine};

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
            Setting::Postgres(url) => redact(url),
        }
    }

    /// Open it. Blocks (PostgreSQL connects): call it off the UI thread.
    pub fn open(&self) -> Result<Option<Box<dyn Engine>>, ArchiveError> {
        Ok(match self {
            Setting::Off => None,
            Setting::Sqlite(path) => Some(Box::new(super::sqlite::SqliteArchive::open(path)?)),
            Setting::Postgres(url) => Some(Box::new(super::postgres::PgArchive::open(url)?)),
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
        Some(ConfigValue::On(true)) | None => Ok(super::sqlite::default_path()
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
            return Ok(super::sqlite::default_path()
                .map(Setting::Sqlite)
                .unwrap_or(Setting::Off));
        }
        _ => {}
    }
    if v.starts_with("postgres://") || v.starts_with("postgresql://") {
        if has_password(v) {
            return Err(format!(
                "{from}: {} has a password in it; a password in a URL is seen by every user of this machine (ps) or sits in a file: put it in ~/.pgpass (or $PGPASSFILE, or passfile= in the URL) or in $PGPASSWORD",
                redact(v)
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
            redact(v)
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

/// Whether a URL carries a password (userinfo or a `password=` parameter).
fn has_password(url: &str) -> bool {
    let (_, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let userinfo_password = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let query = rest.split_once('?').map(|(_, q)| q).unwrap_or("");
    userinfo_password || query.split('&').any(|kv| kv.starts_with("password="))
}

/// A URL as it may be shown, logged or stored: no password, no user's
/// secret, made inert.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return crate::model::wire::sanitize::line(url).into_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            if user.is_empty() {
                host.to_string()
            } else {
                format!("{user}@{host}")
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    crate::model::wire::sanitize::line(&format!("{scheme}://{authority}{tail}")).into_owned()
}

/// A server URL as an origin keeps it: without user or password at all.
pub fn origin_url(url: &str) -> String {
    let redacted = redact(url);
    let Some((scheme, rest)) = redacted.split_once("://") else {
        return redacted;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}{tail}")
}

/// This machine's name: `$OCVIEW_MACHINE` when set (a container's
/// hostname is rarely the name a team knows it by), else the system's.
pub fn hostname() -> String {
    if let Some(name) = std::env::var("OCVIEW_MACHINE")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        return crate::model::wire::sanitize::line(name.trim()).into_owned();
    }
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that and we read up to the first NUL.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    crate::model::wire::sanitize::line(&String::from_utf8_lossy(&buf[..end])).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_secrets() {
        assert_eq!(
            redact("postgres://me:s3cret@db:5432/arch?sslmode=require&password=x"),
            "postgres://me@db:5432/arch?sslmode=require"
        );
        assert_eq!(
            origin_url("http://opencode:pw@10.0.0.5:4096/"),
            "http://10.0.0.5:4096/"
        );
        assert_eq!(origin_url("http://10.0.0.5:4096"), "http://10.0.0.5:4096");
        assert!(has_password("postgres://me:pw@h/db"));
        assert!(has_password("postgres://me@h/db?password=pw"));
        assert!(!has_password("postgres://me@h/db?passfile=/p"));
    }

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
