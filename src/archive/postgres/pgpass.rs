//! A PostgreSQL password as libpq finds it, never from the command line:
//! `passfile=` in the URL, `$PGPASSWORD`, `$PGPASSFILE`, `~/.pgpass`.

use std::path::{Path, PathBuf};

use tokio_postgres::Config;

/// The URL without its `passfile=` parameter (tokio-postgres does not know
/// it), and that file.
pub fn take_passfile(url: &str) -> (String, Option<PathBuf>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut passfile = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.strip_prefix("passfile=") {
            Some(path) => {
                passfile = Some(PathBuf::from(path));
                false
            }
            None => true,
        })
        .collect();
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, passfile)
}

/// The password for this connection: the URL's passfile, `$PGPASSWORD`,
/// `$PGPASSFILE`, then `~/.pgpass`.
pub fn password_for(config: &Config, passfile: Option<&Path>) -> Option<String> {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    let want = [host.as_str(), port.as_str(), db.as_str(), user.as_str()];
    if let Some(file) = passfile {
        return from_passfile(file, &want);
    }
    if let Some(pw) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(pw);
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass")))?;
    from_passfile(&file, &want)
}

/// The first matching line of a pgpass file (`host:port:db:user:password`,
/// `*` for any, `\:` and `\\` escaped). As libpq does, a file others may
/// read is not used.
fn from_passfile(path: &Path, want: &[&str; 4]) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            "archive: password file {} is readable by others: not used (chmod 600)",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        let matches = fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w);
        if matches {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("never empty").push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}
