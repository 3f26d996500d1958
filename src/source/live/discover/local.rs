//! opencode servers on this machine: the processes whose executable is
//! opencode, and the sockets they listen on (Linux `/proc`), of one user
//! only: on a machine shared with others, their servers are theirs (root
//! can read every process's files; the socket's owner says whose it is).
//! Nothing is trusted yet: each address is confirmed over HTTP afterwards.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

use super::proc_net;

/// A socket an opencode process listens on, and the address that reaches
/// it from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub pid: u32,
    pub addr: SocketAddr,
}

/// The listening sockets owned by `owner` (a uid) of every opencode
/// process readable under `proc_root` (normally `/proc`). Sockets of other
/// users are passed over, and so are processes whose file descriptors
/// cannot be read.
pub fn opencode_listeners(proc_root: &Path, owner: u32) -> Vec<Listener> {
    let mut sockets = HashMap::new();
    for name in ["net/tcp", "net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(proc_root.join(name)) {
            sockets.extend(
                proc_net::listening(&text)
                    .into_iter()
                    .filter(|(_, s)| s.uid == owner)
                    .map(|(inode, s)| (inode, s.addr)),
            );
        }
    }
    if sockets.is_empty() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        if !is_opencode(&dir) {
            continue;
        }
        for inode in socket_inodes(&dir) {
            if let Some(bound) = sockets.get(&inode) {
                let addr = reachable(*bound);
                let listener = Listener { pid, addr };
                if !found.contains(&listener) {
                    found.push(listener);
                }
            }
        }
    }
    found.sort_by_key(|l| (l.addr.port(), l.pid));
    found
}

/// The owner (a uid) of the socket listening at `addr` under `proc_root`,
/// or on the wildcard address of its port, which takes its connections
/// too; `None` when nothing listens there (or the tables cannot be read).
pub fn listener_owner(proc_root: &Path, addr: SocketAddr) -> Option<u32> {
    ["net/tcp", "net/tcp6"]
        .iter()
        .filter_map(|name| std::fs::read_to_string(proc_root.join(name)).ok())
        .flat_map(|text| proc_net::listening(&text).into_values())
        .find(|s| {
            let bound = s.addr.ip().to_canonical();
            s.addr.port() == addr.port() && (bound == addr.ip() || bound.is_unspecified())
        })
        .map(|s| s.uid)
}

/// Whether the process in `dir` is opencode: its executable (the native
/// binary, or `opencode.exe`, the copy npm's package puts in its `bin/`),
/// else what it was started as (`opencode …`, or `node …/opencode` and
/// `bun …/opencode` for the script wrapper).
fn is_opencode(dir: &Path) -> bool {
    if let Ok(exe) = std::fs::read_link(dir.join("exe")) {
        // A replaced binary reads `/path/opencode (deleted)`.
        let exe = exe.to_string_lossy();
        if is_opencode_name(exe.trim_end_matches(" (deleted)")) {
            return true;
        }
    }
    let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
        return false;
    };
    let mut args = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let first = args.next().unwrap_or_default();
    if is_opencode_name(&first) {
        return true;
    }
    let runtime = basename(&first);
    (runtime == "node" || runtime == "bun") && args.next().is_some_and(|a| is_opencode_name(&a))
}

fn is_opencode_name(path: &str) -> bool {
    matches!(basename(path), "opencode" | "opencode.exe")
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The inodes of the sockets among the process's open files.
fn socket_inodes(dir: &Path) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?;
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// A wildcard address is reached through loopback of the same family.
fn reachable(bound: SocketAddr) -> SocketAddr {
    match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), bound.port())
        }
        _ => bound,
    }
}

#[cfg(all(test, target_endian = "little"))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake `/proc`: processes given as (pid, exe, cmdline, socket inodes).
    fn fake_proc(procs: &[(u32, &str, &str, &[u64])], tcp: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("net")).unwrap();
        std::fs::write(root.path().join("net/tcp"), tcp).unwrap();
        for (pid, exe, cmdline, inodes) in procs {
            let dir = root.path().join(pid.to_string());
            std::fs::create_dir_all(dir.join("fd")).unwrap();
            symlink(exe, dir.join("exe")).unwrap();
            std::fs::write(dir.join("cmdline"), cmdline.replace(' ', "\0")).unwrap();
            for (fd, inode) in inodes.iter().enumerate() {
                symlink(format!("socket:[{inode}]"), dir.join(format!("fd/{fd}"))).unwrap();
            }
            symlink("/dev/null", dir.join("fd/99")).unwrap();
        }
        root
    }

    /// Every socket is user 1000's but inode 16's, user 1001's.
    const TCP: &str = "header
   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11 1 0 100 0 0 10 0
   1: 00000000:1001 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12 1 0 100 0 0 10 0
   2: 0100007F:1002 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 13 1 0 100 0 0 10 0
   3: 0100007F:1003 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 14 1 0 100 0 0 10 0
   4: 0100007F:1004 0100007F:9999 01 00000000:00000000 00:00000000 00000000  1000        0 15 1 0 100 0 0 10 0
   5: 0100007F:1005 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 16 1 0 100 0 0 10 0
";

    #[test]
    fn finds_the_listeners_of_opencode_processes_only() {
        let root = fake_proc(
            &[
                (
                    10,
                    "/opt/opencode-linux-x64/bin/opencode",
                    "opencode serve",
                    &[11, 15],
                ),
                (
                    20,
                    "/usr/bin/node",
                    "node /usr/lib/node_modules/opencode-ai/bin/opencode --port 4097",
                    &[12],
                ),
                (30, "/usr/bin/python3", "python3 -m http.server", &[13]),
                (40, "/x/bin/opencode.exe (deleted)", "whatever", &[14]),
            ],
            TCP,
        );
        let found = opencode_listeners(root.path(), 1000);
        let addrs: Vec<(u32, String)> = found.iter().map(|l| (l.pid, l.addr.to_string())).collect();
        assert_eq!(
            addrs,
            [
                (10, "127.0.0.1:4096".to_string()),
                (20, "127.0.0.1:4097".to_string()), // 0.0.0.0, reached on loopback
                (40, "127.0.0.1:4099".to_string()),
            ]
        );
    }

    #[test]
    fn another_users_socket_is_passed_over() {
        // opencode, readable (as root reads every process), listening on a
        // socket user 1001 owns.
        let root = fake_proc(&[(50, "/usr/bin/opencode", "opencode serve", &[16])], TCP);
        assert!(opencode_listeners(root.path(), 1000).is_empty());
        let theirs = opencode_listeners(root.path(), 1001);
        assert_eq!(theirs.len(), 1, "{theirs:?}");
        assert_eq!(theirs[0].addr.to_string(), "127.0.0.1:4101");
    }

    #[test]
    fn the_owner_of_an_address() {
        let root = fake_proc(&[], TCP);
        let at = |a: &str| listener_owner(root.path(), a.parse().unwrap());
        assert_eq!(at("127.0.0.1:4101"), Some(1001));
        assert_eq!(at("127.0.0.1:4096"), Some(1000));
        // 0.0.0.0:4097 takes loopback's connections too.
        assert_eq!(at("127.0.0.1:4097"), Some(1000));
        assert_eq!(at("127.0.0.1:4100"), None, "established, not listening");
        assert_eq!(at("127.0.0.1:9"), None);
        assert_eq!(at("127.0.0.2:4096"), None);
    }

    #[test]
    fn an_empty_or_missing_proc_finds_nothing() {
        let empty = tempfile::tempdir().unwrap();
        assert!(opencode_listeners(empty.path(), 0).is_empty());
        assert!(opencode_listeners(&empty.path().join("none"), 0).is_empty());
    }
}
