//! The listening TCP sockets of this network namespace, read from
//! `/proc/net/tcp` and `/proc/net/tcp6`: socket inode → address and owner.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The kernel's state number for a listening socket (`TCP_LISTEN`).
const LISTEN: &str = "0A";

/// A listening socket: where it is bound, and the user that owns it (the
/// effective uid of the process that made it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    pub addr: SocketAddr,
    pub uid: u32,
}

/// Every LISTEN entry of one `/proc/net/tcp{,6}` text, by socket inode.
/// Lines that do not parse are skipped: the text is the kernel's, but a
/// test or a future kernel may hand anything.
pub fn listening(text: &str) -> HashMap<u64, Socket> {
    text.lines()
        .skip(1) // the header
        .filter_map(parse_line)
        .collect()
}

/// `sl local rem st tx:rx tr:when retrnsmt uid timeout inode …`
fn parse_line(line: &str) -> Option<(u64, Socket)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (local, state, uid, inode) = (
        fields.get(1)?,
        fields.get(3)?,
        fields.get(7)?,
        fields.get(9)?,
    );
    if !state.eq_ignore_ascii_case(LISTEN) {
        return None;
    }
    let inode: u64 = inode.parse().ok()?;
    // Inode 0: a socket already closed, owned by no file.
    (inode != 0).then_some(())?;
    let uid = uid.parse().ok()?;
    Some((
        inode,
        Socket {
            addr: parse_addr(local)?,
            uid,
        },
    ))
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6). The kernel
/// prints the address as 32-bit words in the machine's byte order and the
/// port as a plain number.
fn parse_addr(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Eight hex digits printed from a word in memory: its bytes as they lie.
fn word(hex: &str) -> Option<[u8; 4]> {
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
}

#[cfg(all(test, target_endian = "little"))]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1082 1 00000000bdf383a8 100 0 0 10 0
   1: 0100007F:B813 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 912826 1 00000000a19229f4 100 0 0 10 0
   2: 020200C0:8284 507100CB:01BB 01 00000000:00000000 00:00000000 00000000     0        0 912048 1 000000009809d6e3 22 4 1 56 -1
   3: 0100007F:C7F0 0100007F:B813 06 00000000:00000000 03:00001243 00000000     0        0 0 3 00000000a2cae7ea
   4: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
   garbage line
";

    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5001 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5003 1 0000000000000000 100 0 0 10 0
   3: 00000000000000000000000001000000:1F93 00000000000000000000000001000000:D431 01 00000000:00000000 00:00000000 00000000  1000        0 5004 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn ipv4_listeners_only() {
        let found = listening(TCP);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[&1082].addr, "0.0.0.0:2024".parse().unwrap());
        assert_eq!(found[&912826].addr, "127.0.0.1:47123".parse().unwrap());
        assert_eq!(found[&1082].uid, 0);
        // Established (01) and TIME_WAIT (06) are not listeners; inode 0 has no owner.
        assert!(!found.contains_key(&912048));
    }

    #[test]
    fn ipv6_listeners_only() {
        let found = listening(TCP6);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[&5001].addr, "[::]:8080".parse().unwrap());
        assert_eq!(found[&5002].addr, "[::1]:8081".parse().unwrap());
        assert_eq!(
            found[&5003].addr,
            "[::ffff:127.0.0.1]:8082".parse().unwrap()
        );
        // The owner's uid: the column before the timeout.
        assert_eq!(found[&5001].uid, 1000);
        assert!(!found.contains_key(&5004));
    }

    #[test]
    fn bad_text_is_skipped() {
        for text in [
            "",
            "header only",
            "h\n 0: zz:zz 0 0A 0 0 0 0 0 7",
            "h\n 0: 0100007F:1F90 x 0A",
            // No owner that is a number.
            "h\n 0: 0100007F:1F90 00000000:0000 0A 0 0 0 root 0 7",
        ] {
            assert!(listening(text).is_empty(), "{text:?}");
        }
    }
}
