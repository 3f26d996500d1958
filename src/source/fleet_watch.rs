//! Watching for servers that come and go: discovery again every few
//! seconds; a server found for the first time joins the fleet, and one that
//! discovery found before but misses twice in a row is marked gone (its
//! sessions stay until the user dismisses it). Servers named explicitly
//! (the command line, the config) are never marked gone: they reconnect.
//! Addresses are compared in their one spelling (`address::canonical`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::sync::mpsc;

use super::address::canonical;
use super::discover::{self, Options, Server};
use super::fleet::{Control, FleetServer, key_of};

/// How often discovery runs again.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// Misses in a row before a found server counts as gone: one slow health
/// answer is not a death.
const MISSES_TO_GONE: u32 = 2;

/// Makes the fleet member for a newly found server, under the given key
/// (with the credentials discovery gives it: only a named server's).
pub type MakeMember = Box<dyn Fn(&Server, String) -> FleetServer + Send>;

pub struct Watch {
    pub options: Options,
    pub interval: Duration,
    pub member: MakeMember,
}

/// What the watcher knows of one address (by its one spelling).
struct Seen {
    key: String,
    /// Discovery found it (so it can be marked gone when it stops finding it).
    found: bool,
    misses: u32,
    gone: bool,
}

/// Start watching. `members` are the servers the fleet started with, by
/// URL and key; `pinned` the URLs never to mark gone.
pub fn spawn(
    watch: Watch,
    members: Vec<(String, String)>,
    pinned: HashSet<String>,
    control: mpsc::UnboundedSender<Control>,
) {
    let mut seen = seen_at_start(members, &pinned);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(watch.interval).await;
            let found = discover::discover(&watch.options).await;
            if control.is_closed() {
                return;
            }
            for change in changes(&mut seen, &found.servers) {
                let ctl = match change {
                    Change::Join(server, key) => Control::Join((watch.member)(server, key)),
                    Change::Gone(key) => Control::Gone(key),
                };
                if control.send(ctl).is_err() {
                    return;
                }
            }
        }
    });
}

/// The members the fleet started with, by their one spelling.
fn seen_at_start(
    members: Vec<(String, String)>,
    pinned: &HashSet<String>,
) -> HashMap<String, Seen> {
    let pinned: HashSet<String> = pinned.iter().map(|u| canonical(u)).collect();
    members
        .into_iter()
        .map(|(url, key)| {
            let url = canonical(&url);
            let found = !pinned.contains(&url);
            let seen = Seen {
                key,
                found,
                misses: 0,
                gone: false,
            };
            (url, seen)
        })
        .collect()
}

enum Change<'a> {
    Join(&'a Server, String),
    Gone(String),
}

/// What one round of discovery changes.
fn changes<'a>(seen: &mut HashMap<String, Seen>, found: &'a [Server]) -> Vec<Change<'a>> {
    let mut out = Vec::new();
    let here: HashSet<String> = found.iter().map(|s| canonical(&s.url)).collect();
    for server in found {
        let address = canonical(&server.url);
        match seen.get_mut(&address) {
            Some(s) => {
                s.misses = 0;
                if s.gone {
                    s.gone = false;
                    s.found = true;
                    out.push(Change::Join(server, s.key.clone()));
                }
            }
            None => {
                let taken: HashSet<&str> = seen.values().map(|s| s.key.as_str()).collect();
                let base = key_of(&server.url);
                let key = (1..)
                    .map(|n| {
                        if n == 1 {
                            base.clone()
                        } else {
                            format!("{base}#{n}")
                        }
                    })
                    .find(|k| !taken.contains(k.as_str()))
                    .expect("some key is free");
                let entry = Seen {
                    key: key.clone(),
                    found: true,
                    misses: 0,
                    gone: false,
                };
                seen.insert(address, entry);
                out.push(Change::Join(server, key));
            }
        }
    }
    for (url, s) in seen.iter_mut() {
        if s.found && !s.gone && !here.contains(url) {
            s.misses += 1;
            if s.misses >= MISSES_TO_GONE {
                s.gone = true;
                out.push(Change::Gone(s.key.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(url: &str) -> Server {
        Server {
            url: url.into(),
            also: Vec::new(),
            found_by: Vec::new(),
            version: None,
            directory: None,
            needs_password: false,
            auth: None,
        }
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

    #[test]
    fn new_servers_join_and_missing_ones_go_after_two_rounds() {
        let mut seen = HashMap::new();
        seen.insert(
            "http://a:1".to_string(),
            Seen {
                key: "a:1".into(),
                found: true,
                misses: 0,
                gone: false,
            },
        );
        seen.insert(
            "http://pinned:1".to_string(),
            Seen {
                key: "pinned:1".into(),
                found: false,
                misses: 0,
                gone: false,
            },
        );
        let b = [server("http://a:1"), server("http://b:2")];
        assert_eq!(names(&changes(&mut seen, &b)), ["join b:2"]);
        assert!(changes(&mut seen, &b).is_empty(), "nothing new");
        let only_b = [server("http://b:2")];
        assert!(
            changes(&mut seen, &only_b).is_empty(),
            "one miss is not gone"
        );
        assert_eq!(names(&changes(&mut seen, &only_b)), ["gone a:1"]);
        assert!(changes(&mut seen, &only_b).is_empty(), "gone once");
        assert_eq!(names(&changes(&mut seen, &b)), ["join a:1"], "back");
    }

    #[test]
    fn a_new_server_gets_a_free_key() {
        let mut seen = HashMap::new();
        seen.insert(
            "http://other/".to_string(),
            Seen {
                key: "h:1".into(),
                found: false,
                misses: 0,
                gone: false,
            },
        );
        let found = [server("http://h:1")];
        assert_eq!(names(&changes(&mut seen, &found)), ["join h:1#2"]);
    }

    #[test]
    fn a_member_found_under_another_spelling_is_no_newcomer() {
        let members = vec![
            ("http://localhost:4096/".to_string(), "mine".to_string()),
            ("http://127.0.0.1:4097".to_string(), "found".to_string()),
        ];
        let pinned = HashSet::from(["http://LOCALHOST:4096".to_string()]);
        let mut seen = seen_at_start(members, &pinned);
        let found = [
            server("http://127.0.0.1:4096"),
            server("http://localhost:4097/"),
        ];
        assert!(changes(&mut seen, &found).is_empty());
        // The named one is pinned under any spelling: never gone.
        let only_one = [server("http://127.0.0.1:4097")];
        assert!(changes(&mut seen, &only_one).is_empty());
        assert!(changes(&mut seen, &only_one).is_empty());
        assert!(changes(&mut seen, &[]).is_empty());
        assert_eq!(names(&changes(&mut seen, &[])), ["gone found"]);
    }
}
