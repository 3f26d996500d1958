//! What every origin of a row needs: a server's URL without its
//! credentials, and this machine's name.

/// A URL without its password (userinfo or a `password=` parameter),
/// without its user too unless `keep_user`, made inert.
pub fn without_secrets(url: &str, keep_user: bool) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return crate::model::wire::sanitize::line(url).into_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            if user.is_empty() || !keep_user {
                host.to_string()
            } else {
                format!("{user}@{host}")
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query.split('&').filter(|kv| !is_password_key(kv)).collect();
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

/// Whether a query's `key=value` names a password, however its key is
/// spelled (`password`, `pass%77ord`, `PASSWORD`): the key is compared
/// percent-decoded.
pub fn is_password_key(kv: &str) -> bool {
    let key = kv.split('=').next().unwrap_or("");
    crate::source::live::url::percent_decode(key).eq_ignore_ascii_case("password")
}

/// A server URL as an origin keeps it: without user or password at all.
pub fn origin_url(url: &str) -> String {
    without_secrets(url, false)
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
    fn an_origin_keeps_no_user_and_no_password() {
        assert_eq!(
            origin_url("http://opencode:pw@10.0.0.5:4096/"),
            "http://10.0.0.5:4096/"
        );
        assert_eq!(origin_url("http://10.0.0.5:4096"), "http://10.0.0.5:4096");
        assert_eq!(
            origin_url("http://me@h:1/?password=x&a=b"),
            "http://h:1/?a=b"
        );
        // However the key is spelled.
        for key in [
            "pass%77ord",
            "PASSWORD",
            "%70%61%73%73%77%6F%72%64",
            "Password",
        ] {
            assert_eq!(
                origin_url(&format!("http://h:1/?{key}=SECRET&a=b")),
                "http://h:1/?a=b",
                "{key}"
            );
        }
    }
}
