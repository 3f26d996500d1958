//! The rules of a PostgreSQL archive's URL: it may not carry a password,
//! and it is shown, logged and stored without one.

/// Whether a URL carries a password (userinfo or a `password=` parameter).
pub fn has_password(url: &str) -> bool {
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
    }
}
