//! Starting the database reader that gives a live session's message total,
//! when the server runs on this machine (its sessions may then be in the
//! local database: the reader checks each session's id there).

use std::path::PathBuf;

use tokio::sync::mpsc;

use crate::source::msg::SourceMsg;
use crate::source::opencode_db::DbEnv;
use crate::source::opencode_db::totals::MessageTotals;

/// The reader for a server at `base_url`, if it is on this machine and
/// opencode's database is where this environment says. Never blocks: the
/// file is opened on the reader's own thread.
pub fn for_server(base_url: &str, tx: mpsc::Sender<SourceMsg>) -> MessageTotals {
    match local_database(base_url, &DbEnv::from_process()) {
        Some(path) => {
            tracing::info!("message totals from {}", path.display());
            MessageTotals::spawn(path, tx)
        }
        None => MessageTotals::default(),
    }
}

/// The reader for a fleet, given each member's URL and key: the sessions
/// of its members on this machine are counted.
pub fn for_fleet(members: &[(String, String)], tx: mpsc::Sender<SourceMsg>) -> MessageTotals {
    let local: std::collections::HashSet<String> = members
        .iter()
        .filter(|(url, _)| is_loopback(url))
        .map(|(_, key)| key.clone())
        .collect();
    match DbEnv::from_process().database() {
        Some(path) if !local.is_empty() => MessageTotals::spawn_for_fleet(path, tx, local),
        _ => MessageTotals::default(),
    }
}

/// The database a server at `base_url` would write, when it is local.
pub fn local_database(base_url: &str, env: &DbEnv) -> Option<PathBuf> {
    is_loopback(base_url).then(|| env.database()).flatten()
}

/// A server on this machine: a loopback address or `localhost`.
pub fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn only_a_server_on_this_machine_is_counted_from_the_local_database() {
        assert!(is_loopback("http://127.0.0.1:4096"));
        assert!(is_loopback("http://localhost:4096/"));
        assert!(is_loopback("http://[::1]:4096"));
        assert!(!is_loopback("http://10.1.2.3:4096"));
        assert!(!is_loopback("http://box.lan:4096"));
        assert!(!is_loopback("not a url"));
    }
}
