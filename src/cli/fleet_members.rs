//! Who is in a fleet: the URLs on the command line, the config's
//! `[[server]]` tables and the servers discovery finds, each with its key
//! (what the list calls it), its auth and its options. An address named
//! twice, in any spelling, is one member; a password goes only to the
//! servers named.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::app::config::ServerConfig;
use crate::source::live::address::{canonical, same};
use crate::source::live::discover::{self, Via};
use crate::source::live::fleet::{FleetServer, key_of, unique_keys};
use crate::source::live::{Auth, Client, LiveOptions};

/// The URLs checked (a bad one is a usage error), each address once, in
/// the spelling it was first given.
pub fn distinct_urls(urls: &[String]) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for url in urls {
        let url = crate::cli::io::server_url(url, None)?;
        if !out.iter().any(|u| same(u, &url)) {
            out.push(url);
        }
    }
    Ok(out)
}

/// A fleet from URLs, all with the same auth.
pub fn from_urls(
    urls: &[String],
    auth: Option<Auth>,
    all: bool,
) -> anyhow::Result<Vec<FleetServer>> {
    let urls = distinct_urls(urls)?;
    let mut keys: Vec<String> = urls.iter().map(|u| key_of(u)).collect();
    unique_keys(&mut keys);
    Ok(urls
        .iter()
        .zip(keys)
        .map(|(url, key)| member(url, key, auth.clone(), all, None))
        .collect())
}

/// The config's `[[server]]` tables; a bad URL or an unreadable password
/// file is a usage error naming the server. A table without a password
/// file is sent `$OPENCODE_SERVER_PASSWORD` (it is named, like `attach
/// URL`); a second table for the same address is passed over.
pub fn from_config(servers: &[ServerConfig]) -> anyhow::Result<Vec<FleetServer>> {
    let mut keys = Vec::new();
    let mut out: Vec<FleetServer> = Vec::new();
    for s in servers {
        let url = crate::cli::io::server_url(&s.url, Some("the config's [[server]]"))?;
        if out.iter().any(|m| same(m.client.base(), &url)) {
            tracing::warn!("config: a second [[server]] for {url} is passed over");
            continue;
        }
        let args = crate::cli::AuthArgs {
            username: s.user.clone(),
            password_file: s.password_file.as_deref().map(home),
            password: None,
        };
        let auth = crate::cli::io::resolve_auth(&args)?;
        if let Some(name) = &s.name
            && (name.is_empty() || name.contains('@') || name.chars().any(char::is_control))
        {
            // `@` separates an id from its server's name in the store.
            return Err(crate::cli::io::Usage(format!(
                "the config's [[server]] name {:?}: must be non-empty, without '@' or control characters",
                crate::model::wire::sanitize::line(name)
            ))
            .into());
        }
        keys.push(s.name.clone().unwrap_or_else(|| key_of(&url)));
        out.push(member(&url, String::new(), auth, s.all, None));
    }
    unique_keys(&mut keys);
    for (m, key) in out.iter_mut().zip(keys) {
        m.key = key;
    }
    Ok(out)
}

/// `~/…` in a config path is the home directory.
fn home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

pub fn member(
    url: &str,
    key: String,
    auth: Option<Auth>,
    all: bool,
    directory: Option<String>,
) -> FleetServer {
    FleetServer {
        key,
        client: Client::new(url, auth),
        options: LiveOptions {
            all_projects: all,
            ..Default::default()
        },
        directory,
    }
}

/// The configured members plus every server discovery found that is not
/// one of them, each with the credentials discovery confirmed it with
/// (a named one's; none for a server only found: anything can call itself
/// opencode). Returns the fleet and the URLs never to mark gone (named,
/// not found: the config's, `$OPENCODE_SERVER_URL`).
pub fn with_discovered(
    mut fleet: Vec<FleetServer>,
    found: &[discover::Server],
) -> (Vec<FleetServer>, HashSet<String>) {
    let mut pinned: HashSet<String> = fleet.iter().map(|m| m.client.base().to_string()).collect();
    for server in found {
        let configured = fleet.iter_mut().find(|m| {
            let base = canonical(m.client.base());
            std::iter::once(&server.url)
                .chain(&server.also)
                .any(|u| canonical(u) == base)
        });
        if let Some(m) = configured {
            m.directory = m.directory.take().or(server.directory.clone());
            continue;
        }
        if server
            .found_by
            .iter()
            .any(|v| matches!(v, Via::Env | Via::Config))
        {
            pinned.insert(server.url.clone());
        }
        let key = key_of(&server.url);
        fleet.push(member(
            &server.url,
            key,
            server.auth.clone(),
            false,
            server.directory.clone(),
        ));
    }
    let mut keys: Vec<String> = fleet.iter().map(|m| m.key.clone()).collect();
    unique_keys(&mut keys);
    for (m, key) in fleet.iter_mut().zip(keys) {
        m.key = key;
    }
    (fleet, pinned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn config_servers_keep_their_names_auth_and_projects() {
        let dir = tempfile::tempdir().unwrap();
        let pw = dir.path().join("pw");
        std::fs::write(&pw, "s3cret\n").unwrap();
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
        let servers = vec![
            ServerConfig {
                name: Some("api".into()),
                url: "http://127.0.0.1:4096".into(),
                user: Some("me".into()),
                password_file: Some(pw),
                all: true,
            },
            ServerConfig {
                name: None,
                url: "http://box:4097/".into(),
                user: None,
                password_file: None,
                all: false,
            },
            // The first one again, spelled otherwise: passed over.
            ServerConfig {
                name: Some("again".into()),
                url: "http://localhost:4096/".into(),
                user: None,
                password_file: None,
                all: false,
            },
        ];
        let fleet = from_config(&servers).unwrap();
        assert_eq!(fleet.len(), 2);
        assert_eq!(fleet[0].key, "api");
        assert!(fleet[0].options.all_projects);
        assert_eq!(fleet[1].key, "box:4097");
        assert!(!fleet[1].options.all_projects);
        // The password is read, never shown: the debug form hides it.
        let shown = format!("{:?}", fleet[0].client);
        assert!(shown.contains("me") && !shown.contains("s3cret"), "{shown}");
        let bad = [ServerConfig {
            url: "box:4097".into(),
            ..servers[1].clone()
        }];
        assert!(from_config(&bad).is_err());
        let at = [ServerConfig {
            name: Some("a@b".into()),
            ..servers[1].clone()
        }];
        assert!(from_config(&at).is_err());
    }

    #[test]
    fn two_spellings_of_one_address_are_one_member() {
        let urls = [
            "http://localhost:4096".to_string(),
            "http://127.0.0.1:4096/".to_string(),
            "http://127.0.0.1:4096".to_string(),
            "http://127.0.0.1:4097".to_string(),
        ];
        assert_eq!(
            distinct_urls(&urls).unwrap(),
            ["http://localhost:4096", "http://127.0.0.1:4097"]
        );
        let fleet = from_urls(&urls, None, false).unwrap();
        let keys: Vec<&str> = fleet.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["localhost:4096", "127.0.0.1:4097"]);
    }

    #[test]
    fn a_found_server_that_is_configured_is_not_added_twice() {
        let configured = from_urls(&["http://localhost:4096/".into()], None, false).unwrap();
        let auth = Some(Auth {
            username: "opencode".into(),
            password: "pw".into(),
        });
        let found = |url: &str, via: Via, auth: Option<Auth>| discover::Server {
            url: url.into(),
            also: Vec::new(),
            found_by: vec![via],
            version: None,
            directory: Some("/p".into()),
            needs_password: false,
            auth,
        };
        let (fleet, pinned) = with_discovered(
            configured,
            &[
                found("http://127.0.0.1:4096", Via::Local { pid: 1 }, None),
                found("http://127.0.0.1:4097", Via::Local { pid: 2 }, None),
                found("http://10.0.0.9:4096", Via::Mdns { name: "x".into() }, None),
                found("http://10.0.0.8:4096", Via::Env, auth.clone()),
            ],
        );
        let keys: Vec<&str> = fleet.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "localhost:4096",
                "127.0.0.1:4097",
                "10.0.0.9:4096",
                "10.0.0.8:4096"
            ]
        );
        assert_eq!(fleet[0].directory.as_deref(), Some("/p"));
        assert!(pinned.contains("http://localhost:4096"));
        assert!(pinned.contains("http://10.0.0.8:4096"));
        assert!(!pinned.contains("http://127.0.0.1:4097"));
        // Only the named one is sent the password.
        let auths: Vec<bool> = fleet.iter().map(|m| m.client.auth().is_some()).collect();
        assert_eq!(auths, [false, false, false, true]);
        assert_eq!(fleet[3].client.auth(), auth.as_ref());
    }
}
