//! One spelling per server address: `http://localhost:4096`,
//! `http://127.0.0.1:4096/` and `HTTP://127.0.0.1:4096` reach one socket,
//! so a server named twice is watched once.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address `url` reaches, spelled one way: scheme and host in lower
/// case, a loopback name as its address (`localhost` is 127.0.0.1, where
/// opencode listens by default), the port written even when it is the
/// scheme's default, no trailing slash. Only for comparing: connections
/// use the URL as given. A URL that does not parse equals only itself.
pub fn canonical(url: &str) -> String {
    let url = url.trim();
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return url.trim_end_matches('/').to_string();
    };
    let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return url.trim_end_matches('/').to_string();
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip = match bare.parse::<IpAddr>() {
        Ok(ip) => Some(ip.to_canonical()),
        Err(_) => loopback_name(bare),
    };
    let host = match ip {
        Some(IpAddr::V6(v6)) => format!("[{v6}]"),
        Some(IpAddr::V4(v4)) => v4.to_string(),
        None => host.trim_end_matches('.').to_string(),
    };
    format!(
        "{}://{host}:{port}{}",
        parsed.scheme(),
        parsed.path().trim_end_matches('/')
    )
}

/// Whether a [`canonical`] address is a loopback one (the same address
/// names another server on another machine).
pub fn is_loopback(canonical: &str) -> bool {
    let Some((_, rest)) = canonical.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The address a loopback name stands for (RFC 6761, and the names
/// `/etc/hosts` gives `::1` on Debian and its kin).
fn loopback_name(host: &str) -> Option<IpAddr> {
    let host = host.trim_end_matches('.');
    match host {
        "ip6-localhost" | "ip6-loopback" => Some(Ipv6Addr::LOCALHOST.into()),
        "localhost" | "localhost.localdomain" => Some(Ipv4Addr::LOCALHOST.into()),
        _ if host.ends_with(".localhost") => Some(Ipv4Addr::LOCALHOST.into()),
        _ => None,
    }
}

/// Whether two URLs reach the same address.
pub fn same(a: &str, b: &str) -> bool {
    canonical(a) == canonical(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_address_are_one() {
        let one = [
            "http://localhost:4096",
            "http://127.0.0.1:4096/",
            "http://127.0.0.1:4096",
            "HTTP://LocalHost:4096//",
            "http://localhost.:4096",
            "http://[::ffff:127.0.0.1]:4096",
            " http://127.0.0.1:4096 ",
        ];
        for url in one {
            assert_eq!(canonical(url), "http://127.0.0.1:4096", "{url}");
        }
        assert!(same("http://box", "http://box:80/"));
        assert!(same("https://Box.example", "https://box.example:443"));
        assert!(same(
            "http://[0:0:0:0:0:0:0:1]:4096",
            "http://ip6-localhost:4096"
        ));
        assert!(same("http://h:1/base/", "http://h:1/base"));
    }

    #[test]
    fn different_addresses_stay_apart() {
        for (a, b) in [
            ("http://127.0.0.1:4096", "http://127.0.0.1:4097"),
            ("http://127.0.0.1:4096", "https://127.0.0.1:4096"),
            // A server can listen on one family only.
            ("http://127.0.0.1:4096", "http://[::1]:4096"),
            ("http://127.0.0.1:4096", "http://127.0.0.2:4096"),
            ("http://box:4096", "http://box.lan:4096"),
            ("http://h:1/a", "http://h:1/b"),
            ("not a url", "not a url/x"),
        ] {
            assert!(!same(a, b), "{a} {b}");
        }
        assert_eq!(canonical("not a url/"), "not a url");
    }
}
