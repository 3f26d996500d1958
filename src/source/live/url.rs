//! Server addresses and what goes into them: a server URL checked before
//! anything is sent, paths and query values percent-encoded, and the
//! cursor of the page before read back from a page's headers.

use reqwest::header::HeaderMap;

/// Check a server URL before anything is sent: `http(s)://host[:port]`,
/// optionally with a path (a server behind a proxy). Returns it without a
/// trailing slash, or says what is wrong with it.
pub fn check_url(url: &str) -> Result<String, String> {
    const EXPECTED: &str = "expected http://host:port, e.g. http://127.0.0.1:4096";
    let u = url.trim();
    if u.is_empty() {
        return Err(format!("the server URL is empty: {EXPECTED}"));
    }
    let Some((scheme, rest)) = u.split_once("://") else {
        let (host, port) = u.rsplit_once(':').unwrap_or((u, ""));
        if !host.is_empty() && host_ok(host) && (port.is_empty() || digits(port)) {
            return Err(format!("{u:?} has no scheme: did you mean http://{u}?"));
        }
        return Err(format!("{u:?} is not a server URL: {EXPECTED}"));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "{u:?}: the scheme {scheme}:// is not supported: use http:// or https://"
        ));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if path.contains(['?', '#']) {
        return Err(format!(
            "{u:?}: a query or fragment has no place in a server URL: {EXPECTED}"
        ));
    }
    if authority.contains('@') {
        // Not echoed: it holds a password.
        return Err(
            "credentials in the server URL are not used: set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME) instead".into(),
        );
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let Some((addr, after)) = v6.split_once(']') else {
            return Err(format!("{u:?}: an IPv6 address needs its closing ]"));
        };
        if addr.is_empty()
            || !addr
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(format!("{u:?}: [{addr}] is not an IPv6 address"));
        }
        match after.strip_prefix(':') {
            Some(p) => (authority, Some(p)),
            None if after.is_empty() => (authority, None),
            None => return Err(format!("{u:?} is not a server URL: {EXPECTED}")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("{u:?} has no host: {EXPECTED}"));
    }
    if !host.starts_with('[') && !host_ok(host) {
        return Err(format!("{u:?}: {host:?} is not a host name or address"));
    }
    if let Some(p) = port {
        if p.is_empty() {
            return Err(format!("{u:?}: the port is missing after the colon"));
        }
        if !digits(p) {
            return Err(format!("{u:?}: the port {p:?} is not a number"));
        }
        if !p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n)) {
            return Err(format!("{u:?}: the port {p} is out of range (1 to 65535)"));
        }
    }
    Ok(format!(
        "{scheme}://{authority}{}",
        path.trim_end_matches('/')
    ))
}

fn host_ok(host: &str) -> bool {
    host.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        && !host.starts_with(['.', '-'])
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `path?directory=…` for one project of the server (percent-encoded).
pub(crate) fn with_dir(path: &str, dir: Option<&str>) -> String {
    match dir {
        None => path.to_string(),
        Some(d) => format!("{path}?directory={}", percent(d, b"/")),
    }
}

/// A query value, percent-encoded (a cursor may hold `+`, `/`, `=`).
pub(super) fn query_value(s: &str) -> String {
    percent(s, b"")
}

/// Percent-encode all but unreserved characters and `keep`.
fn percent(s: &str, keep: &[u8]) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b if keep.contains(&b) => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The cursor of the page before this one: the `X-Next-Cursor` header, or
/// the `before` of the `Link: <…>; rel="next"` header. Neither: this page
/// is the session's first.
pub fn next_cursor(headers: &HeaderMap) -> Option<String> {
    if let Some(c) = headers
        .get("x-next-cursor")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        return Some(c.to_string());
    }
    headers
        .get_all("link")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(link_next_before)
}

/// `<URL>; rel="next"` → the URL's `before` query value, decoded.
fn link_next_before(link: &str) -> Option<String> {
    let (url, params) = link.trim().strip_prefix('<')?.split_once('>')?;
    let next = params.split(';').any(|p| {
        p.trim()
            .strip_prefix("rel=")
            .is_some_and(|r| r.trim_matches('"').split_whitespace().any(|r| r == "next"))
    });
    if !next {
        return None;
    }
    let query = url.split_once('?')?.1;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("before="))
        .map(percent_decode)
        .filter(|c| !c.is_empty())
}

/// `s` with its `%XX` escapes decoded (a bad escape is kept as it is).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Ids are safe characters, but never trust them in a path.
pub(super) fn enc(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_checked_before_use() {
        for (url, ok) in [
            ("http://127.0.0.1:4096", "http://127.0.0.1:4096"),
            ("HTTPS://example.com/", "https://example.com"),
            ("http://host:4096/opencode/", "http://host:4096/opencode"),
            ("http://[::1]:4096", "http://[::1]:4096"),
            ("  http://localhost  ", "http://localhost"),
        ] {
            assert_eq!(check_url(url).as_deref(), Ok(ok), "{url}");
        }
        for (url, says) in [
            ("", "empty"),
            ("localhost:4096", "did you mean http://localhost:4096"),
            ("ftp://x", "ftp:// is not supported"),
            ("not a url at all", "not a server URL"),
            ("http://", "no host"),
            ("http://:4096", "no host"),
            ("http://host:0", "out of range"),
            ("http://host:70000", "out of range"),
            ("http://host:99999999999", "out of range"),
            ("http://host:abc", "not a number"),
            ("http://host:", "port is missing"),
            ("http://u:p@host:1", "OPENCODE_SERVER_PASSWORD"),
            ("http://host:1/?x=1", "query"),
            ("http://ho st:1", "not a host name"),
            ("http://[::1", "closing ]"),
        ] {
            let e = check_url(url).expect_err(url);
            assert!(e.contains(says), "{url}: {e}");
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_next_cursor_comes_from_its_header_or_the_link() {
        let c = "eyJpZCI6Im1zZ18yMDI4In0";
        assert_eq!(
            next_cursor(&headers(&[("X-Next-Cursor", c)])).as_deref(),
            Some(c)
        );
        let link = format!(
            "<http://h:1/session/ses_1/message?limit=100&before={}>; rel=\"next\"",
            "ab%2Bc%2F%3D"
        );
        assert_eq!(
            next_cursor(&headers(&[("link", &link)])).as_deref(),
            Some("ab+c/=")
        );
        let prev = "<http://h/x?before=zz>; rel=\"prev\"";
        assert_eq!(next_cursor(&headers(&[("link", prev)])), None);
        // No cursor: the page holds the session's first message.
        assert_eq!(next_cursor(&headers(&[("content-type", "x")])), None);
        assert_eq!(next_cursor(&headers(&[("x-next-cursor", " ")])), None);
    }

    #[test]
    fn a_cursor_is_percent_encoded_in_the_query() {
        assert_eq!(query_value("ab+c/d=="), "ab%2Bc%2Fd%3D%3D");
        assert_eq!(percent_decode(&query_value("a b+é")), "a b+é");
        assert_eq!(with_dir("/p", Some("/a b")), "/p?directory=/a%20b");
    }
}
