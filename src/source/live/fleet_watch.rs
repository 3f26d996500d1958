//! Watching for servers that come and go, at no cost to them: every few
//! seconds the watcher reads `/proc` (the listening sockets of this user's
//! opencode processes) and, with `--discover`, browses mDNS, and sends no
//! request to any server it already knows. Only an address it has not seen
//! before (or sees again after its server went away) is confirmed over
//! HTTP, once; an address that does not answer as opencode is asked again a
//! few times, further apart, then left alone until it goes away. A server
//! whose sockets are missing from `/proc` twice in a row is marked gone
//! (its sessions stay until the user dismisses it). Servers named
//! explicitly (the command line, the config) are never marked gone: they
//! reconnect. Addresses are compared in their one spelling
//! (`address::canonical`); a server is known by all of its addresses and
//! by the processes (pid and port) seen serving it.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::source::live::address::canonical;
use crate::source::live::discover::{self, Candidate, Named, Options, Prober, Server, Via};
use crate::source::live::fleet::{Control, FleetServer, key_of};

/// How often `/proc` is read again.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// Misses in a row before a found server counts as gone: a socket table
/// read while a server restarts is not a death.
const MISSES_TO_GONE: u32 = 2;

/// Confirmations of an address that did not answer as opencode (a server
/// still starting, or something else named opencode) before it is left
/// alone until it goes away.
const TRIES: u32 = 4;

/// Makes the fleet member for a newly found server, under the given key
/// (with the credentials discovery gives it: only a named server's).
pub type MakeMember = Box<dyn Fn(&Server, String) -> FleetServer + Send>;

pub struct Watch {
    pub options: Options,
    pub interval: Duration,
    pub member: MakeMember,
    /// What the first discovery found: their other addresses and their
    /// processes are no newcomers.
    pub found: Vec<Server>,
}

/// A process serving a member: its pid and the port it listens on.
type Owner = (u32, u16);

/// One server of the fleet, as the watcher knows it.
struct Member {
    key: String,
    /// Every address that reached it, in its one spelling.
    addresses: HashSet<String>,
    owners: HashSet<Owner>,
    /// Named: never marked gone (it reconnects by itself).
    pinned: bool,
    misses: u32,
    gone: bool,
}

/// An address seen in one round: how to confirm it, and its process.
#[derive(Debug, Clone)]
struct Sighting {
    candidate: Candidate,
    address: String,
    owner: Option<Owner>,
}

impl Sighting {
    fn new(candidate: Candidate, owner: Option<Owner>) -> Sighting {
        Sighting {
            address: canonical(&candidate.url),
            candidate,
            owner,
        }
    }
}

/// An address that did not answer as opencode: when to ask it again.
struct Refused {
    tries: u32,
    /// `None`: not again while it stays.
    next: Option<Instant>,
}

enum Change {
    Join(Box<Server>, String),
    Gone(String),
}

/// What the watcher knows between rounds.
struct Watcher {
    members: Vec<Member>,
    refused: HashMap<(String, Option<Owner>), Refused>,
    /// The servers the person named, to confirm beside a newcomer that may
    /// be one of them under another address.
    named: Vec<(Named, Via)>,
    interval: Duration,
}

/// Start watching. `members` are the servers the fleet started with, by
/// URL and key; `pinned` the URLs never to mark gone.
pub fn spawn(
    watch: Watch,
    members: Vec<(String, String)>,
    pinned: HashSet<String>,
    control: mpsc::UnboundedSender<Control>,
) {
    let mut watcher = Watcher::new(members, &pinned, &watch.found, watch.interval);
    watcher
        .named
        .extend(watch.options.env_url.iter().map(|n| (n.clone(), Via::Env)));
    watcher.named.extend(
        watch
            .options
            .configured
            .iter()
            .map(|n| (n.clone(), Via::Config)),
    );
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(watch.interval).await;
            if control.is_closed() {
                return;
            }
            let sightings = look(&watch.options).await;
            let (mut changes, unknown) = watcher.sight(sightings, Instant::now());
            if !unknown.is_empty() {
                let mut prober = Prober::new(watch.options.probe_timeout);
                for (named, via) in watcher.unplaced_named() {
                    prober.add(Candidate::named(&named, via));
                }
                for s in &unknown {
                    prober.add(s.candidate.clone());
                }
                let servers = prober.finish().await;
                changes.extend(watcher.settle(&unknown, servers, Instant::now()));
            }
            for change in changes {
                let ctl = match change {
                    Change::Join(server, key) => Control::Join((watch.member)(&server, key)),
                    Change::Gone(key) => Control::Gone(key),
                };
                if control.send(ctl).is_err() {
                    return;
                }
            }
        }
    });
}

/// One round's look, without a request to any server: the opencode
/// listeners in `/proc` and, when asked, what mDNS announces.
async fn look(options: &Options) -> Vec<Sighting> {
    let mut out = Vec::new();
    if let Some(root) = &options.proc_root {
        for l in discover::local_listeners(root.clone(), options.owner).await {
            out.push(Sighting::new(
                Candidate::local(&l),
                Some((l.pid, l.addr.port())),
            ));
        }
    }
    if let Some(within) = options.mdns {
        let (tx, mut rx) = mpsc::unbounded_channel();
        if let Err(e) = discover::mdns::browse(within, tx).await {
            tracing::info!("fleet watch: {e}");
        }
        while let Ok(a) = rx.try_recv() {
            out.push(Sighting::new(Candidate::announced(a), None));
        }
    }
    out
}

fn port_of(address: &str) -> Option<u16> {
    reqwest::Url::parse(address).ok()?.port_or_known_default()
}

impl Watcher {
    /// The members the fleet started with, by their one spelling, with the
    /// other addresses and the processes the first discovery found them at.
    fn new(
        members: Vec<(String, String)>,
        pinned: &HashSet<String>,
        found: &[Server],
        interval: Duration,
    ) -> Watcher {
        let pinned: HashSet<String> = pinned.iter().map(|u| canonical(u)).collect();
        let members = members
            .into_iter()
            .map(|(url, key)| {
                let url = canonical(&url);
                let mut m = Member {
                    key,
                    pinned: pinned.contains(&url),
                    addresses: HashSet::from([url]),
                    owners: HashSet::new(),
                    misses: 0,
                    gone: false,
                };
                for server in found {
                    let addresses: Vec<String> = std::iter::once(&server.url)
                        .chain(&server.also)
                        .map(|u| canonical(u))
                        .collect();
                    if addresses.iter().any(|a| m.addresses.contains(a)) {
                        m.take(&addresses, &pids(server));
                    }
                }
                m
            })
            .collect();
        Watcher {
            members,
            refused: HashMap::new(),
            named: Vec::new(),
            interval,
        }
    }

    /// What one round's sightings change by themselves (servers gone), and
    /// the sightings to confirm: addresses no known server has.
    fn sight(&mut self, sightings: Vec<Sighting>, now: Instant) -> (Vec<Change>, Vec<Sighting>) {
        let mut present = HashSet::new();
        let mut unknown = Vec::new();
        for s in sightings {
            let known = self.members.iter().position(|m| {
                !m.gone
                    && (m.addresses.contains(&s.address)
                        || s.owner.is_some_and(|o| m.owners.contains(&o)))
            });
            match known {
                Some(i) => {
                    let m = &mut self.members[i];
                    m.addresses.insert(s.address.clone());
                    m.owners.extend(s.owner);
                    present.insert(i);
                }
                None => unknown.push(s),
            }
        }
        // An address gone from the tables is asked afresh when it is back.
        let here: HashSet<(String, Option<Owner>)> = unknown
            .iter()
            .map(|s| (s.address.clone(), s.owner))
            .collect();
        self.refused.retain(|k, _| here.contains(k));
        unknown.retain(|s| {
            self.refused
                .get(&(s.address.clone(), s.owner))
                .is_none_or(|r| r.next.is_some_and(|t| t <= now))
        });
        let mut changes = Vec::new();
        for (i, m) in self.members.iter_mut().enumerate() {
            if m.pinned || m.gone {
                continue;
            }
            if present.contains(&i) {
                m.misses = 0;
                continue;
            }
            m.misses += 1;
            if m.misses >= MISSES_TO_GONE {
                m.gone = true;
                // Whatever listens there next is confirmed first.
                m.owners.clear();
                changes.push(Change::Gone(m.key.clone()));
            }
        }
        (changes, unknown)
    }

    /// The named servers no process of this round was seen serving: a
    /// newcomer may be one of them under another address (they are asked
    /// only along with a newcomer).
    fn unplaced_named(&self) -> Vec<(Named, Via)> {
        self.named
            .iter()
            .filter(|(n, _)| {
                let address = canonical(&n.url);
                !self
                    .members
                    .iter()
                    .any(|m| m.addresses.contains(&address) && !m.owners.is_empty())
            })
            .cloned()
            .collect()
    }

    /// What the confirmation of `asked` found: newcomers join, a server
    /// back after it went joins again under its key, the addresses that did
    /// not answer are asked again later (a few times).
    fn settle(&mut self, asked: &[Sighting], servers: Vec<Server>, now: Instant) -> Vec<Change> {
        let mut changes = Vec::new();
        let mut answered = HashSet::new();
        for server in servers {
            let addresses: Vec<String> = std::iter::once(&server.url)
                .chain(&server.also)
                .map(|u| canonical(u))
                .collect();
            let owners: Vec<Owner> = asked
                .iter()
                .filter(|s| addresses.contains(&s.address))
                .filter_map(|s| s.owner)
                .collect();
            answered.extend(addresses.iter().cloned());
            let of = |m: &Member| addresses.iter().any(|a| m.addresses.contains(a));
            if let Some(m) = self.members.iter_mut().find(|m| !m.gone && of(m)) {
                m.take(&addresses, &owners);
                m.misses = 0;
            } else if let Some(m) = self.members.iter_mut().find(|m| of(m)) {
                m.take(&addresses, &owners);
                (m.gone, m.misses) = (false, 0);
                changes.push(Change::Join(Box::new(server), m.key.clone()));
            } else {
                let key = self.free_key(&server.url);
                let mut m = Member {
                    key: key.clone(),
                    addresses: HashSet::new(),
                    owners: HashSet::new(),
                    pinned: false,
                    misses: 0,
                    gone: false,
                };
                m.take(&addresses, &owners);
                self.members.push(m);
                changes.push(Change::Join(Box::new(server), key));
            }
        }
        for s in asked.iter().filter(|s| !answered.contains(&s.address)) {
            let r = self
                .refused
                .entry((s.address.clone(), s.owner))
                .or_insert(Refused {
                    tries: 0,
                    next: None,
                });
            r.tries += 1;
            r.next = (r.tries < TRIES).then(|| now + self.interval * (1 << r.tries));
        }
        changes
    }

    /// `host:port`, or `host:port#2` when that is taken.
    fn free_key(&self, url: &str) -> String {
        let taken: HashSet<&str> = self.members.iter().map(|m| m.key.as_str()).collect();
        let base = key_of(url);
        (1..)
            .map(|n| {
                if n == 1 {
                    base.clone()
                } else {
                    format!("{base}#{n}")
                }
            })
            .find(|k| !taken.contains(k.as_str()))
            .expect("some key is free")
    }
}

impl Member {
    fn take(&mut self, addresses: &[String], owners: &[Owner]) {
        self.addresses.extend(addresses.iter().cloned());
        self.owners.extend(owners.iter().copied());
    }
}

/// The processes a discovered server was found at, with each port it
/// answered on.
fn pids(server: &Server) -> Vec<Owner> {
    let ports: Vec<u16> = std::iter::once(&server.url)
        .chain(&server.also)
        .filter_map(|u| port_of(u))
        .collect();
    server
        .found_by
        .iter()
        .filter_map(|v| match v {
            Via::Local { pid } => Some(*pid),
            _ => None,
        })
        .flat_map(|pid| ports.iter().map(move |p| (pid, *p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(url: &str, pid: Option<u32>) -> Server {
        Server {
            url: url.into(),
            also: Vec::new(),
            found_by: pid.map(|pid| Via::Local { pid }).into_iter().collect(),
            version: None,
            directory: None,
            needs_password: false,
            auth: None,
        }
    }

    /// A listener of process `pid` at `url`.
    fn local(url: &str, pid: u32) -> Sighting {
        let candidate = Candidate {
            url: url.into(),
            via: Via::Local { pid },
            auth: None,
        };
        let port = port_of(url).unwrap();
        Sighting::new(candidate, Some((pid, port)))
    }

    fn names(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match c {
                Change::Join(_, key) => format!("join {key}"),
                Change::Gone(key) => format!("gone {key}"),
            })
            .collect()
    }

    fn asked(unknown: &[Sighting]) -> Vec<&str> {
        unknown.iter().map(|s| s.address.as_str()).collect()
    }

    const TICK: Duration = Duration::from_secs(2);

    fn watcher() -> Watcher {
        let members = vec![
            ("http://127.0.0.1:1".to_string(), "a:1".to_string()),
            ("http://127.0.0.1:9".to_string(), "pinned:9".to_string()),
        ];
        let pinned = HashSet::from(["http://127.0.0.1:9".to_string()]);
        let mut a = server("http://127.0.0.1:1", Some(10));
        a.also.push("http://[::1]:1".into());
        Watcher::new(members, &pinned, &[a], TICK)
    }

    #[test]
    fn known_servers_are_never_asked_and_missing_ones_go_after_two_rounds() {
        let mut w = watcher();
        let now = Instant::now();
        // Both of a's addresses, and a's process on its port at another.
        let a = || {
            vec![
                local("http://127.0.0.1:1", 10),
                local("http://[::1]:1", 10),
                local("http://localhost:1/", 10),
            ]
        };
        for _ in 0..3 {
            let (changes, unknown) = w.sight(a(), now);
            assert!(changes.is_empty() && unknown.is_empty(), "{unknown:?}");
        }
        let (changes, unknown) = w.sight(vec![], now);
        assert!(
            changes.is_empty() && unknown.is_empty(),
            "one miss is not gone"
        );
        let (changes, _) = w.sight(vec![], now);
        assert_eq!(names(&changes), ["gone a:1"], "the pinned one stays");
        assert!(w.sight(vec![], now).0.is_empty(), "gone once");
        // Back (another process): confirmed once, joins under its key.
        let back = vec![local("http://127.0.0.1:1", 11)];
        let (changes, unknown) = w.sight(back.clone(), now);
        assert!(changes.is_empty());
        assert_eq!(asked(&unknown), ["http://127.0.0.1:1"]);
        let changes = w.settle(&unknown, vec![server("http://127.0.0.1:1", Some(11))], now);
        assert_eq!(names(&changes), ["join a:1"], "back");
        let (changes, unknown) = w.sight(back, now);
        assert!(changes.is_empty() && unknown.is_empty());
    }

    #[test]
    fn a_newcomer_is_asked_once_and_joins_under_a_free_key() {
        let mut w = watcher();
        w.members[1].key = "127.0.0.1:2".into();
        let now = Instant::now();
        let round = || {
            vec![
                local("http://127.0.0.1:1", 10),
                local("http://127.0.0.1:2", 20),
            ]
        };
        let (changes, unknown) = w.sight(round(), now);
        assert!(changes.is_empty());
        assert_eq!(asked(&unknown), ["http://127.0.0.1:2"]);
        let changes = w.settle(&unknown, vec![server("http://127.0.0.1:2", Some(20))], now);
        assert_eq!(names(&changes), ["join 127.0.0.1:2#2"]);
        for _ in 0..3 {
            let (changes, unknown) = w.sight(round(), now);
            assert!(changes.is_empty() && unknown.is_empty(), "{unknown:?}");
        }
        // Its socket goes: gone after two rounds, as the first ones.
        w.sight(vec![local("http://127.0.0.1:1", 10)], now);
        let (changes, _) = w.sight(vec![local("http://127.0.0.1:1", 10)], now);
        assert_eq!(names(&changes), ["gone 127.0.0.1:2#2"]);
    }

    #[test]
    fn what_does_not_answer_is_asked_again_further_apart_then_left_alone() {
        let mut w = watcher();
        let t0 = Instant::now();
        let round = || {
            vec![
                local("http://127.0.0.1:1", 10),
                local("http://127.0.0.1:5", 50),
            ]
        };
        let mut asked_at = Vec::new();
        for tick in 0..200u32 {
            let now = t0 + TICK * tick;
            let (_, unknown) = w.sight(round(), now);
            if !unknown.is_empty() {
                asked_at.push(tick);
                assert!(w.settle(&unknown, Vec::new(), now).is_empty());
            }
        }
        assert_eq!(asked_at, [0, 2, 6, 14], "then never while it stays");
        // Gone from the tables and back: asked afresh.
        let now = t0 + TICK * 300;
        w.sight(vec![local("http://127.0.0.1:1", 10)], now);
        assert_eq!(asked(&w.sight(round(), now).1), ["http://127.0.0.1:5"]);
    }

    #[test]
    fn named_servers_are_asked_only_beside_a_newcomer_they_may_be() {
        let mut w = watcher();
        w.named.push((
            Named {
                url: "http://127.0.0.1:9".into(),
                auth: None,
            },
            Via::Config,
        ));
        // Not seen serving: the newcomer may be it under another address.
        assert_eq!(w.unplaced_named().len(), 1);
        let now = Instant::now();
        let (_, unknown) = w.sight(vec![local("http://10.0.0.5:9", 90)], now);
        let mut both = server("http://127.0.0.1:9", None);
        both.also.push("http://10.0.0.5:9".into());
        assert!(
            w.settle(&unknown, vec![both], now).is_empty(),
            "no newcomer"
        );
        assert!(w.unplaced_named().is_empty(), "its process is known now");
        let (changes, unknown) = w.sight(
            vec![
                local("http://10.0.0.5:9", 90),
                local("http://127.0.0.1:1", 10),
            ],
            now,
        );
        assert!(changes.is_empty() && unknown.is_empty());
    }

    #[test]
    fn a_member_named_in_another_spelling_is_no_newcomer() {
        let members = vec![
            ("http://localhost:4096/".to_string(), "mine".to_string()),
            ("http://127.0.0.1:4097".to_string(), "found".to_string()),
        ];
        let pinned = HashSet::from(["http://LOCALHOST:4096".to_string()]);
        let mut w = Watcher::new(members, &pinned, &[], TICK);
        let now = Instant::now();
        let found = || {
            vec![
                local("http://127.0.0.1:4096", 1),
                local("http://localhost:4097/", 2),
            ]
        };
        let (changes, unknown) = w.sight(found(), now);
        assert!(changes.is_empty() && unknown.is_empty());
        // The named one is pinned under any spelling: never gone.
        let only_one = || vec![local("http://127.0.0.1:4097", 2)];
        assert!(w.sight(only_one(), now).0.is_empty());
        assert!(w.sight(only_one(), now).0.is_empty());
        assert!(w.sight(vec![], now).0.is_empty());
        assert_eq!(names(&w.sight(vec![], now).0), ["gone found"]);
    }
}
