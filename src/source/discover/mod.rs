//! Finding opencode servers without being told where: `$OPENCODE_SERVER_URL`,
//! the config file's `servers`, the opencode processes listening on this machine and, when asked, the
//! servers announced over mDNS. Every candidate is confirmed over HTTP,
//! all at once with a short timeout; a server found several ways is one
//! entry.

pub mod local;
pub mod mdns;
pub mod probe;
pub mod proc_net;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::source::live::Auth;
use probe::Identity;

/// How long one confirming request may take. Servers on this machine
/// answer in milliseconds; one on the network in well under a second.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// How long `--discover` listens for mDNS announcements by default.
pub const MDNS_BROWSE: Duration = Duration::from_secs(3);

/// For tests only: look for processes under this directory instead of
/// `/proc` (an empty directory: no local server is found, whatever runs
/// on the machine).
pub const PROC_ROOT_ENV: &str = "OCVIEW_DISCOVER_PROC";

/// Where to look.
#[derive(Debug, Clone)]
pub struct Options {
    /// `$OPENCODE_SERVER_URL`, already checked.
    pub env_url: Option<String>,
    /// The config file's `servers`, already checked.
    pub configured: Vec<String>,
    /// The processes of this machine, under this `/proc`; `None`: not looked at.
    pub proc_root: Option<PathBuf>,
    /// Browse mDNS this long; `None`: not at all.
    pub mdns: Option<Duration>,
    /// Sent to every candidate (a password from `$OPENCODE_SERVER_PASSWORD`).
    pub auth: Option<Auth>,
    pub probe_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env_url: None,
            configured: Vec::new(),
            proc_root: Some(default_proc_root()),
            mdns: None,
            auth: None,
            probe_timeout: PROBE_TIMEOUT,
        }
    }
}

/// `/proc`, or the directory in `$OCVIEW_DISCOVER_PROC` (tests).
pub fn default_proc_root() -> PathBuf {
    std::env::var_os(PROC_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/proc"))
}

/// How a server was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "how", rename_all = "lowercase")]
pub enum Via {
    /// `$OPENCODE_SERVER_URL`.
    Env,
    /// The config file's `servers`.
    Config,
    /// A process of this machine listening there.
    Local { pid: u32 },
    /// Announced over mDNS under this instance name.
    Mdns { name: String },
}

impl Via {
    /// Short words for a listing (`name` is network text: sanitized).
    pub fn describe(&self) -> String {
        match self {
            Via::Env => "$OPENCODE_SERVER_URL".into(),
            Via::Config => "config".into(),
            Via::Local { pid } => format!("process {pid}"),
            Via::Mdns { name } => format!("mDNS {}", crate::sanitize::line(name)),
        }
    }
}

/// A confirmed server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Server {
    pub url: String,
    /// Other addresses that reached the same server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    pub found_by: Vec<Via>,
    pub version: Option<String>,
    pub directory: Option<String>,
    pub needs_password: bool,
}

/// What discovery found, and what it could not do (an mDNS socket that
/// would not open), for the caller to say.
#[derive(Debug, Default)]
pub struct Discovery {
    pub servers: Vec<Server>,
    pub problems: Vec<String>,
    pub took: Duration,
}

struct Candidate {
    url: String,
    via: Via,
}

/// Look everywhere `options` says, confirm every candidate concurrently
/// (an announced one as soon as it resolves, while the browse goes on),
/// and merge what answered. Never longer than the mDNS browse plus the
/// probe timeout and `probe::PATH_TIMEOUT`.
pub async fn discover(options: &Options) -> Discovery {
    let started = Instant::now();
    let mut problems = Vec::new();
    let (announce, mut announced) = tokio::sync::mpsc::unbounded_channel();
    let browse = options
        .mdns
        .map(|within| tokio::spawn(mdns::browse(within, announce)));
    let listeners = match &options.proc_root {
        Some(root) => {
            let root = root.clone();
            tokio::task::spawn_blocking(move || local::opencode_listeners(&root))
                .await
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    let mut candidates = Vec::new();
    if let Some(url) = &options.env_url {
        candidates.push(Candidate {
            url: url.trim_end_matches('/').to_string(),
            via: Via::Env,
        });
    }
    for url in &options.configured {
        candidates.push(Candidate {
            url: url.trim_end_matches('/').to_string(),
            via: Via::Config,
        });
    }
    for l in listeners {
        candidates.push(Candidate {
            url: url_of(l.addr),
            via: Via::Local { pid: l.pid },
        });
    }
    let mut urls: Vec<String> = Vec::new();
    let mut probes = tokio::task::JoinSet::new();
    let mut probe = |url: &str, urls: &mut Vec<String>| {
        if urls.iter().any(|u| u == url) {
            return;
        }
        urls.push(url.to_string());
        let (url, auth, timeout) = (url.to_string(), options.auth.clone(), options.probe_timeout);
        probes.spawn(async move {
            let identity = probe::confirm(&url, auth, timeout).await;
            (url, identity)
        });
    };
    for c in &candidates {
        probe(&c.url, &mut urls);
    }
    // Ends when the browse does (it holds the sender), at once without one.
    while let Some(a) = announced.recv().await {
        let c = Candidate {
            url: url_of(a.addr),
            via: Via::Mdns { name: a.name },
        };
        probe(&c.url, &mut urls);
        candidates.push(c);
    }
    if let Some(browse) = browse {
        match browse.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => problems.push(e),
            Err(e) => problems.push(format!("mDNS browse failed: {e}")),
        }
    }
    let mut answers: Vec<(String, Option<Identity>)> = probes.join_all().await;
    // In the order found: `$OPENCODE_SERVER_URL`, the config's, this
    // machine, the network.
    answers.sort_by_key(|(url, _)| urls.iter().position(|u| u == url));
    let mut servers: Vec<(Server, Option<Fingerprint>)> = Vec::new();
    for (url, identity) in &answers {
        let Some(identity) = identity.clone() else {
            continue;
        };
        let found_by: Vec<Via> = candidates
            .iter()
            .filter(|c| &c.url == url)
            .map(|c| c.via.clone())
            .collect();
        let key = fingerprint(url, &identity);
        if let Some((known, _)) = servers.iter_mut().find(|(_, k)| k.is_some() && *k == key) {
            known.also.push(url.clone());
            for via in found_by {
                if !known.found_by.contains(&via) {
                    known.found_by.push(via);
                }
            }
            continue;
        }
        let Identity {
            version,
            directory,
            needs_password,
            ..
        } = identity;
        servers.push((
            Server {
                url: url.clone(),
                also: Vec::new(),
                found_by,
                version,
                directory,
                needs_password,
            },
            key,
        ));
    }
    Discovery {
        servers: servers.into_iter().map(|(s, _)| s).collect(),
        problems,
        took: started.elapsed(),
    }
}

/// `http://127.0.0.1:4096`, `http://[::1]:4096`.
fn url_of(addr: std::net::SocketAddr) -> String {
    format!("http://{addr}")
}

/// Port, project directory, state directory.
type Fingerprint = (u16, String, String);

/// The same server reached at two addresses answers with the same port,
/// project directory and state directory. `None`: it did not say (a
/// password is wanted), so only its URL identifies it.
fn fingerprint(url: &str, identity: &Identity) -> Option<Fingerprint> {
    let port = reqwest::Url::parse(url).ok()?.port_or_known_default()?;
    Some((port, identity.directory.clone()?, identity.state.clone()?))
}

/// What to say when nothing was found: how to start a server, how to see
/// the demo.
pub const NOTHING_FOUND: &str = "no opencode server found (looked at $OPENCODE_SERVER_URL, the config's servers and the opencode processes of this machine; --discover also asks the local network over mDNS).
Start one in your project with:
    opencode serve --port 4096
then run `ocview` again (or `ocview attach http://127.0.0.1:4096`).
Or watch the built-in demo, no server needed:
    ocview demo";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_at_two_addresses_has_one_fingerprint() {
        let id = Identity {
            version: Some("1.18.33".into()),
            directory: Some("/p".into()),
            state: Some("/s".into()),
            needs_password: false,
        };
        assert_eq!(
            fingerprint("http://127.0.0.1:4096", &id),
            fingerprint("http://10.0.0.5:4096", &id)
        );
        assert_ne!(
            fingerprint("http://127.0.0.1:4096", &id),
            fingerprint("http://127.0.0.1:4097", &id)
        );
        let locked = Identity {
            needs_password: true,
            ..Identity::default()
        };
        assert_eq!(fingerprint("http://127.0.0.1:4096", &locked), None);
    }
}
