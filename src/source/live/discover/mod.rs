//! Finding opencode servers without being told where: `$OPENCODE_SERVER_URL`,
//! the config file's `servers`, the opencode processes of this user
//! listening on this machine and, when asked, the servers announced over
//! mDNS. Every candidate is confirmed over HTTP, all at once with a short
//! timeout; a server found several ways, or named in two spellings, is one
//! entry. Only the servers the person named are sent a password: anything
//! can call itself opencode.

pub mod local;
pub mod mdns;
pub mod probe;
pub mod proc_net;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::source::live::Auth;
use crate::source::live::address::canonical;
use probe::Identity;

/// How long one confirming request may take. Servers on this machine
/// answer in milliseconds; one on the network in well under a second.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// How long a health check of an opencode process of this user may take.
/// It is known to be opencode and known to be here: when it is slow, the
/// machine is busy (agents running, a build), and leaving it out would
/// hide a real server exactly when several are at work.
pub const LOCAL_PROBE_TIMEOUT: Duration = probe::PATH_TIMEOUT;

/// How long `--discover` listens for mDNS announcements by default.
pub const MDNS_BROWSE: Duration = Duration::from_secs(3);

/// For tests only: look for processes under this directory instead of
/// `/proc` (an empty directory: no local server is found, whatever runs
/// on the machine).
pub const PROC_ROOT_ENV: &str = "OCVIEW_DISCOVER_PROC";

/// A server the person named, and the credentials meant for it: the only
/// kind of candidate that is sent a password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Already checked.
    pub url: String,
    pub auth: Option<Auth>,
}

/// Where to look.
#[derive(Debug, Clone)]
pub struct Options {
    /// `$OPENCODE_SERVER_URL`.
    pub env_url: Option<Named>,
    /// The config file's servers.
    pub configured: Vec<Named>,
    /// The processes of this machine, under this `/proc`; `None`: not looked at.
    pub proc_root: Option<PathBuf>,
    /// Whose listening sockets count there (a uid): this user's.
    pub owner: u32,
    /// Browse mDNS this long; `None`: not at all.
    pub mdns: Option<Duration>,
    pub probe_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env_url: None,
            configured: Vec::new(),
            proc_root: Some(default_proc_root()),
            owner: effective_uid(),
            mdns: None,
            probe_timeout: PROBE_TIMEOUT,
        }
    }
}

/// The user ocview runs as, as the kernel checks it (the owner of the
/// sockets it would open).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
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
            Via::Mdns { name } => format!("mDNS {}", crate::model::wire::sanitize::line(name)),
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
    /// What it was confirmed with, and what to send it: the credentials of
    /// the name it was given; `None` for a server only discovered.
    #[serde(skip)]
    pub auth: Option<Auth>,
}

/// What discovery found, and what it could not do (an mDNS socket that
/// would not open), for the caller to say.
#[derive(Debug, Default)]
pub struct Discovery {
    pub servers: Vec<Server>,
    pub problems: Vec<String>,
    pub took: Duration,
}

/// An address to confirm, and how it was found.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub url: String,
    pub via: Via,
    /// Only a named candidate's.
    pub auth: Option<Auth>,
}

impl Candidate {
    /// A server the person named.
    pub fn named(n: &Named, via: Via) -> Candidate {
        Candidate {
            url: n.url.trim_end_matches('/').to_string(),
            via,
            auth: n.auth.clone(),
        }
    }

    /// A socket an opencode process of this machine listens on.
    pub fn local(l: &local::Listener) -> Candidate {
        Candidate {
            url: url_of(l.addr),
            via: Via::Local { pid: l.pid },
            auth: None,
        }
    }

    /// An address announced over mDNS.
    pub fn announced(a: mdns::Announced) -> Candidate {
        Candidate {
            url: url_of(a.addr),
            via: Via::Mdns { name: a.name },
            auth: None,
        }
    }
}

/// An address probed: its one spelling, the URL asked, the credentials sent.
struct Probed {
    key: String,
    url: String,
    auth: Option<Auth>,
}

/// Confirms candidates concurrently as they are added (an address given
/// twice, in any spelling, is asked once), then merges what answered: one
/// server reached at several addresses is one entry.
pub struct Prober {
    timeout: Duration,
    candidates: Vec<Candidate>,
    probed: Vec<Probed>,
    probes: tokio::task::JoinSet<(String, Option<Identity>)>,
}

impl Prober {
    pub fn new(timeout: Duration) -> Prober {
        Prober {
            timeout,
            candidates: Vec::new(),
            probed: Vec::new(),
            probes: tokio::task::JoinSet::new(),
        }
    }

    /// Start confirming `c` (unless its address is asked already).
    pub fn add(&mut self, c: Candidate) {
        let key = canonical(&c.url);
        if !self.probed.iter().any(|p| p.key == key) {
            let timeout = match c.via {
                Via::Local { .. } => self.timeout.max(LOCAL_PROBE_TIMEOUT),
                _ => self.timeout,
            };
            let (url, auth) = (c.url.clone(), c.auth.clone());
            self.probed.push(Probed {
                key: key.clone(),
                url: url.clone(),
                auth: auth.clone(),
            });
            self.probes.spawn(async move {
                let identity = probe::confirm(&url, auth, timeout).await;
                (key, identity)
            });
        }
        self.candidates.push(c);
    }

    /// The servers that answered, in the order their addresses were added.
    pub async fn finish(self) -> Vec<Server> {
        let Prober {
            candidates,
            probed,
            probes,
            ..
        } = self;
        let answers: Vec<(String, Option<Identity>)> = probes.join_all().await;
        let mut servers: Vec<(Server, Option<Fingerprint>)> = Vec::new();
        for Probed { key, url, auth } in probed {
            let Some(Some(identity)) = answers
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, i)| i.clone())
            else {
                continue;
            };
            let found_by: Vec<Via> = candidates
                .iter()
                .filter(|c| canonical(&c.url) == key)
                .map(|c| c.via.clone())
                .collect();
            let key = fingerprint(&url, &identity);
            if let Some((known, _)) = servers.iter_mut().find(|(_, k)| k.is_some() && *k == key) {
                known.also.push(url);
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
                    url,
                    also: Vec::new(),
                    found_by,
                    version,
                    directory,
                    needs_password,
                    auth,
                },
                key,
            ));
        }
        servers.into_iter().map(|(s, _)| s).collect()
    }
}

/// Look everywhere `options` says, confirm every candidate concurrently
/// (an announced one as soon as it resolves, while the browse goes on),
/// and merge what answered. Never longer than the mDNS browse plus
/// `LOCAL_PROBE_TIMEOUT` and `probe::PATH_TIMEOUT`.
pub async fn discover(options: &Options) -> Discovery {
    let started = Instant::now();
    let mut problems = Vec::new();
    let (announce, mut announced) = tokio::sync::mpsc::unbounded_channel();
    let browse = options
        .mdns
        .map(|within| tokio::spawn(mdns::browse(within, announce)));
    let listeners = match &options.proc_root {
        Some(root) => local_listeners(root.clone(), options.owner).await,
        None => Vec::new(),
    };
    // The named first: an address named and found is probed as named; the
    // servers come out in the order found: `$OPENCODE_SERVER_URL`, the
    // config's, this machine, the network.
    let mut prober = Prober::new(options.probe_timeout);
    if let Some(n) = &options.env_url {
        prober.add(Candidate::named(n, Via::Env));
    }
    for n in &options.configured {
        prober.add(Candidate::named(n, Via::Config));
    }
    for l in &listeners {
        prober.add(Candidate::local(l));
    }
    // Ends when the browse does (it holds the sender), at once without one.
    while let Some(a) = announced.recv().await {
        prober.add(Candidate::announced(a));
    }
    if let Some(browse) = browse {
        match browse.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => problems.push(e),
            Err(e) => problems.push(format!("mDNS browse failed: {e}")),
        }
    }
    Discovery {
        servers: prober.finish().await,
        problems,
        took: started.elapsed(),
    }
}

/// The opencode listeners of this machine, read off the async runtime.
pub async fn local_listeners(root: PathBuf, owner: u32) -> Vec<local::Listener> {
    tokio::task::spawn_blocking(move || local::opencode_listeners(&root, owner))
        .await
        .unwrap_or_default()
}

/// `http://127.0.0.1:4096`, `http://[::1]:4096`.
pub fn url_of(addr: std::net::SocketAddr) -> String {
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
pub const NOTHING_FOUND: &str = "no opencode server found (looked at $OPENCODE_SERVER_URL, the config's servers and your opencode processes on this machine; --discover also asks the local network over mDNS).
Start one in your project with:
    opencode serve --port 4096
then run `ocview` again (or `ocview attach http://127.0.0.1:4096`).
Or watch the built-in demo, no server needed:
    ocview demo";

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server that answers every request as a healthy opencode, but only
    /// after `delay` (a busy machine).
    fn slow_server(delay: Duration) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = url_of(listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                std::thread::spawn(move || {
                    let mut request = [0u8; 2048];
                    let _ = stream.read(&mut request);
                    std::thread::sleep(delay);
                    let body = r#"{"healthy":true,"version":"1.18.33"}"#;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        url
    }

    #[tokio::test]
    async fn a_slow_local_opencode_is_waited_for_a_slow_named_address_is_not() {
        let delay = Duration::from_millis(400);
        let (local, named) = (slow_server(delay), slow_server(delay));
        let mut prober = Prober::new(Duration::from_millis(150));
        prober.add(Candidate {
            url: local.clone(),
            via: Via::Local { pid: 7 },
            auth: None,
        });
        prober.add(Candidate {
            url: named.clone(),
            via: Via::Env,
            auth: None,
        });
        let found: Vec<String> = prober.finish().await.into_iter().map(|s| s.url).collect();
        assert_eq!(found, [local]);
    }

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
