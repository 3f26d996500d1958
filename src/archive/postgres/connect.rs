//! How ocview connects to a team archive: tokio-postgres's settings from
//! the URL (its password never from the URL itself), TLS as the URL asks,
//! and, when no password was found, where it was looked for.

use std::time::Duration;

use tokio_postgres::Config;

use crate::archive::engine::{ArchiveError, Trouble};
use crate::archive::postgres::tls;
use crate::archive::postgres::url::redact;

/// How to connect to the archive at `url`: its user, its password (never
/// from the URL itself), a connect timeout; and, when no password was
/// found, where it was looked for and why none came of it. Also the
/// listener's (`notify`), on a connection of its own.
pub(in crate::archive) fn config(url: &str) -> Result<Connect, ArchiveError> {
    let place = redact(url);
    let failed = |why: String| ArchiveError::new(Trouble::Failed, &place, why);
    let (url, own) = crate::archive::postgres::url::take_own_params(url);
    let value = |key: &str| {
        let env = tls::PARAMS
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, env)| *env);
        own.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| env.and_then(|env| std::env::var(env).ok()))
            .filter(|v| !v.is_empty())
    };
    let passfile = value("passfile").map(std::path::PathBuf::from);
    let settings =
        tls::Settings::from_values(&value, dirs::home_dir().as_deref()).map_err(failed)?;
    let tls = settings.connector().map_err(failed)?;
    let mut config: Config = url
        .parse()
        .map_err(|e| failed(format!("not a PostgreSQL URL: {e}")))?;
    config.ssl_mode(settings.ssl_mode());
    if config.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .or_else(|_| std::env::var("USER"))
            .unwrap_or_else(|_| "postgres".into());
        config.user(&user);
    }
    let mut no_password = None;
    if config.get_password().is_none() {
        match crate::archive::postgres::pgpass::password_for(&config, passfile.as_deref()) {
            Ok(password) => {
                config.password(password);
            }
            Err(why) => no_password = Some(why),
        }
    }
    config.application_name("ocview");
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    Ok(Connect {
        config,
        tls,
        no_password,
    })
}

/// How to connect to an archive: tokio-postgres's settings, TLS as the
/// URL asks, and why no password was found (if none was).
pub(in crate::archive) struct Connect {
    pub config: Config,
    pub tls: tokio_postgres_rustls::MakeRustlsConnect,
    pub no_password: Option<String>,
}

/// A server that asks for a password none was found for: the error says
/// where it was looked for and why none came of it.
pub(in crate::archive) fn with_why(mut e: ArchiveError, no_password: Option<&str>) -> ArchiveError {
    if let Some(why) = no_password
        && e.message.starts_with(ASKS_FOR_A_PASSWORD)
    {
        e.message = format!("{}; {why}", e.message);
    }
    e
}

/// How the missing password is said (`with_why` adds to it).
pub(in crate::archive) const ASKS_FOR_A_PASSWORD: &str =
    "the server asks for a password and none was given";
