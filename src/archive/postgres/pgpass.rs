//! A PostgreSQL password as libpq finds it, never from the command line:
//! `passfile=` in the URL, `$PGPASSWORD`, `$PGPASSFILE`, `~/.pgpass`.

use std::path::{Path, PathBuf};

use tokio_postgres::Config;

/// The password for this connection: the URL's passfile, `$PGPASSWORD`,
/// `$PGPASSFILE`, then `~/.pgpass`; or, when there is none, where it was
/// looked for and why nothing was found there (said when the server asks
/// for one).
pub fn password_for(config: &Config, passfile: Option<&Path>) -> Result<String, String> {
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
        return Ok(pw);
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass")))
        .ok_or_else(|| "no $PGPASSWORD, and no home folder for ~/.pgpass".to_string())?;
    from_passfile(&file, &want)
}

/// The first matching line of a pgpass file (`host:port:db:user:password`,
/// `*` for any, `\:` and `\\` escaped); or why the file gives none. As
/// libpq does, a file others may read is not used.
fn from_passfile(path: &Path, want: &[&str; 4]) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("the password file {shown} does not exist"),
        _ => format!("the password file {shown} cannot be read: {e}"),
    })?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "the password file {shown} is readable by others, so it is not used \
             (chmod 600 {shown})"
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("the password file {shown} cannot be read: {e}"))?;
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
            return Ok(fields[4..].join(":"));
        }
    }
    let wanted = crate::model::wire::sanitize::line(&want.join(":")).into_owned();
    Err(format!(
        "the password file {shown} has no line for {wanted} (host:port:database:user)"
    ))
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn config() -> Config {
        "postgres://keeper@db:5433/arch".parse().unwrap()
    }

    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_password_file_that_gives_none_says_why_and_never_the_password() {
        let dir = tempfile::tempdir().unwrap();
        let c = config();
        let good = file(
            dir.path(),
            "good",
            "# a comment\ndb:5433:arch:keeper:s3cr\\:et\n",
            0o600,
        );
        assert_eq!(password_for(&c, Some(&good)).unwrap(), "s3cr:et");
        let any = file(dir.path(), "any", "*:*:*:keeper:pw\n", 0o600);
        assert_eq!(password_for(&c, Some(&any)).unwrap(), "pw");

        let open = file(dir.path(), "open", "db:5433:arch:keeper:s3cret\n", 0o644);
        let why = password_for(&c, Some(&open)).unwrap_err();
        assert!(
            why.contains("readable by others") && why.contains("chmod 600"),
            "{why}"
        );
        assert!(
            why.contains(&open.display().to_string()) && !why.contains("s3cret"),
            "{why}"
        );

        let other = file(dir.path(), "other", "db:5432:arch:keeper:s3cret\n", 0o600);
        let why = password_for(&c, Some(&other)).unwrap_err();
        assert!(why.contains("has no line for db:5433:arch:keeper"), "{why}");
        assert!(!why.contains("s3cret"), "{why}");

        let missing = dir.path().join("missing");
        let why = password_for(&c, Some(&missing)).unwrap_err();
        assert!(
            why.contains("does not exist") && why.contains("missing"),
            "{why}"
        );
    }
}
