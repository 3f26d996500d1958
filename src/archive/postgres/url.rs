//! The rules of a PostgreSQL archive's URL: it may not carry a password,
//! and it is shown, logged and stored without one.

/// Whether a URL carries a password, as the driver reads it: in the
/// userinfo, or a `password` parameter however its key is spelled
/// (`pass%77ord=`). A URL the driver cannot read is looked at as text.
pub fn has_password(url: &str) -> bool {
    let (url, _) = take_own_params(url);
    if let Ok(config) = url.parse::<tokio_postgres::Config>() {
        return config.get_password().is_some();
    }
    let (_, rest) = url.split_once("://").unwrap_or(("", &url));
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let userinfo_password = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let query = rest.split_once('?').map(|(_, q)| q).unwrap_or("");
    userinfo_password
        || query
            .split('&')
            .any(crate::archive::origin::is_password_key)
}

/// The parameters ocview reads itself, as libpq names them: the password
/// file and the TLS settings (tokio-postgres knows none of them, or a
/// weaker `sslmode`).
const OWN_PARAMS: [&str; 5] = ["passfile", "sslmode", "sslrootcert", "sslcert", "sslkey"];

/// The URL without the parameters ocview reads itself, and those (their
/// keys and values percent-decoded, the last of a key winning).
pub fn take_own_params(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let decode = crate::source::live::url::percent_decode;
    let mut own = Vec::new();
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| {
            let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
            let key = decode(key);
            if !OWN_PARAMS.contains(&key.as_str()) {
                return true;
            }
            own.retain(|(k, _): &(String, String)| *k != key);
            own.push((key, decode(value)));
            false
        })
        .collect();
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, own)
}

/// A URL as it may be shown, logged or stored: no password, no user's
/// secret, made inert.
pub fn redact(url: &str) -> String {
    crate::archive::origin::without_secrets(url, true)
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
        assert!(has_password("postgres://me:pw@h/db"));
        assert!(has_password("postgres://me@h/db?password=pw"));
        assert!(!has_password("postgres://me@h/db?passfile=/p"));
        // No spelling passes: the driver decodes the key as libpq does.
        for url in [
            "postgres://me@h/db?pass%77ord=SECRET",
            "postgres://me@h/db?sslmode=disable&%70assword=SECRET",
            "postgres://me:%53ECRET@h/db",
            "postgresql://me@h:5432/db?password=SECRET",
        ] {
            assert!(has_password(url), "{url}");
            assert!(!redact(url).contains("SECRET"), "{}", redact(url));
        }
    }
}
