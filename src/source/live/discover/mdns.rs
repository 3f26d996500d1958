//! opencode servers announced on the local network: `opencode serve
//! --mdns` publishes an `_http._tcp` service named `opencode-<port>` (its
//! host is the `--mdns-domain`, `opencode.local` by default, shared by
//! every such server; its TXT record is `path=/`). A browse of a bounded
//! time gathers the addresses; nothing is trusted until confirmed over HTTP.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mdns_sd::{ServiceDaemon, ServiceEvent};

/// The DNS-SD service type opencode announces.
pub const SERVICE_TYPE: &str = "_http._tcp.local.";

/// The instance-name prefix that tells opencode's services from other web
/// servers'.
const NAME_PREFIX: &str = "opencode-";

/// An announced address: the instance name and one address it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announced {
    /// `opencode-4096` (untrusted text from the network).
    pub name: String,
    pub addr: SocketAddr,
}

/// Browse for `within`, then stop, handing each announced address to
/// `found` as it resolves (so it can be confirmed while the browse goes
/// on). An mDNS socket that cannot be opened (no multicast interface) is
/// an error the caller reports and goes on.
pub async fn browse(
    within: Duration,
    found: tokio::sync::mpsc::UnboundedSender<Announced>,
) -> Result<(), String> {
    let daemon = ServiceDaemon::new().map_err(|e| format!("mDNS unavailable: {e}"))?;
    let events = daemon
        .browse(SERVICE_TYPE)
        .map_err(|e| format!("mDNS browse failed: {e}"))?;
    let started = tokio::time::Instant::now();
    let deadline = started + within;
    let mut sent: Vec<Announced> = Vec::new();
    while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv_async()).await {
        let ServiceEvent::ServiceResolved(service) = event else {
            continue;
        };
        let Some(name) = opencode_instance(&service.fullname) else {
            continue;
        };
        tracing::info!(
            "mDNS: {} resolved after {:?}",
            crate::model::wire::sanitize::line(name),
            started.elapsed()
        );
        for ip in &service.addresses {
            let ip = ip.to_ip_addr();
            if !usable(ip) {
                continue;
            }
            let announced = Announced {
                name: name.to_string(),
                addr: SocketAddr::new(ip, service.port),
            };
            if !sent.contains(&announced) {
                sent.push(announced.clone());
                let _ = found.send(announced);
            }
        }
    }
    // The daemon's thread ends on its own once told; no need to wait.
    let _ = daemon.shutdown();
    Ok(())
}

/// `opencode-4096._http._tcp.local.` → `opencode-4096`; other services → None.
fn opencode_instance(fullname: &str) -> Option<&str> {
    let instance = fullname.strip_suffix(SERVICE_TYPE)?.strip_suffix('.')?;
    let port = instance.strip_prefix(NAME_PREFIX)?;
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())).then_some(instance)
}

/// An address a URL can name: IPv6 link-local needs a zone, which URLs
/// here cannot carry.
fn usable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !v4.is_unspecified(),
        IpAddr::V6(v6) => !v6.is_unspecified() && (v6.segments()[0] & 0xffc0) != 0xfe80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_opencode_instances() {
        assert_eq!(
            opencode_instance("opencode-4096._http._tcp.local."),
            Some("opencode-4096")
        );
        for other in [
            "printer._http._tcp.local.",
            "opencode-._http._tcp.local.",
            "opencode-40x6._http._tcp.local.",
            "opencode-4096._ipp._tcp.local.",
            "",
        ] {
            assert_eq!(opencode_instance(other), None, "{other}");
        }
    }

    #[test]
    fn link_local_v6_is_not_usable() {
        assert!(usable("10.0.0.1".parse().unwrap()));
        assert!(usable("fd00::1".parse().unwrap()));
        assert!(!usable("fe80::1".parse().unwrap()));
        assert!(!usable("0.0.0.0".parse().unwrap()));
    }
}
