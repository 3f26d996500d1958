//! Discovery against real opencode servers: `ocview discover` finds them
//! by their processes, confirms them over HTTP, and leaves out what only
//! looks like one; `ocview` with nothing to find says how to start a server.

use crate::support;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::discover_json::{entry, found_by, listed};
use support::opencode::{Server, free_port};

/// No model is ever called: the servers only need to start.
const NO_MODEL: &str = "http://127.0.0.1:9/v1";

fn ocview(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.args(args)
        .stdin(Stdio::null())
        .env_remove("OPENCODE_SERVER_URL")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("OCVIEW_DISCOVER_PROC");
    c
}

/// A process that calls itself opencode (argv[0]) and listens, but is a
/// plain web server: `/global/health` is a 404.
struct Impostor(std::process::Child, u16);

impl Impostor {
    fn start() -> Impostor {
        let port = free_port();
        // The interpreter itself: a wrapper (pyenv's shim) would start it
        // again under its own name.
        let python = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 for the impostor listener");
        let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
        let child = Command::new("bash")
            .args([
                "-c",
                "exec -a opencode \"$0\" -m http.server --bind 127.0.0.1 \"$1\"",
            ])
            .arg(&python)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 for the impostor listener");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "impostor never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap_or_default();
        assert!(
            cmdline.starts_with(b"opencode\0"),
            "the impostor is not named opencode: {}",
            String::from_utf8_lossy(&cmdline)
        );
        Impostor(child, port)
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finds_real_servers_by_themselves() {
    let (serve, tui) = tokio::join!(Server::start(NO_MODEL), Server::start_tui(NO_MODEL));
    let impostor = Impostor::start();
    // Accepts connections (the kernel completes them) but never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());

    let started = Instant::now();
    let out = tokio::task::spawn_blocking({
        let silent_url = silent_url.clone();
        move || {
            ocview(&["discover", "--json"])
                .env("OPENCODE_SERVER_URL", &silent_url)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let took = started.elapsed();
    eprintln!("discover with servers running took {took:?}");
    assert!(out.status.success(), "{out:?}");
    let list = listed(&out);
    for server in [&serve, &tui] {
        let s = entry(&list, &server.url())
            .unwrap_or_else(|| panic!("{} not listed: {list:#?}", server.url()));
        assert_eq!(s["directory"], server.project.display().to_string(), "{s}");
        assert_eq!(s["version"], support::opencode::VERSION);
        assert_eq!(found_by(s), ["local"], "{s}");
        assert!(s["found_by"][0]["pid"].as_u64().is_some(), "{s}");
    }
    let impostor_url = format!("http://127.0.0.1:{}", impostor.1);
    assert!(entry(&list, &impostor_url).is_none(), "{list:#?}");
    assert!(entry(&list, &silent_url).is_none(), "{list:#?}");
    // Every probe runs at once, each bounded: the silent listener costs
    // one health timeout (1.5 s), a project instance still booting at most
    // the /path timeout (6 s).
    assert!(took < Duration::from_secs(10), "discovery took {took:?}");

    // Found two ways (the environment and its process): one entry.
    let out = tokio::task::spawn_blocking({
        let url = serve.url();
        move || {
            ocview(&["discover", "--json"])
                .env("OPENCODE_SERVER_URL", format!("{url}/"))
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let list = listed(&out);
    let same: Vec<&Value> = list.iter().filter(|s| s["url"] == serve.url()).collect();
    assert_eq!(same.len(), 1, "{list:#?}");
    assert_eq!(found_by(same[0]), ["env", "local"], "{list:#?}");
    // The environment's server comes first: it is the one `ocview` attaches to.
    assert_eq!(list[0]["url"], serve.url());

    // The config's servers are looked at too; one that does not answer
    // is left out like any other.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("servers = [\"{}\", \"{silent_url}\"]\n", tui.url()),
    )
    .unwrap();
    let out = ocview(&["discover", "--json", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let list = listed(&out);
    let s = entry(&list, &tui.url()).unwrap_or_else(|| panic!("{list:#?}"));
    assert_eq!(found_by(s), ["config", "local"], "{s}");
    assert!(entry(&list, &silent_url).is_none(), "{list:#?}");

    // `ocview` alone watches them all and names them, before any
    // terminal is needed (here there is none: it stops there).
    let out = ocview(&[])
        .env("OPENCODE_SERVER_URL", serve.url())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ocview: watching"), "{err}");
    for url in [serve.url(), tui.url()] {
        assert!(
            err.lines()
                .any(|l| l.trim_start().starts_with(&format!("{url} "))),
            "{url}: {err}"
        );
    }
    assert!(err.contains("needs one"), "{err}");

    // The plain listing says the same, one line per server.
    let out = ocview(&["discover"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{} ", tui.url())))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&tui.project.display().to_string()), "{line}");
    assert!(line.contains("opencode 1.18.33"), "{line}");
    drop(silent);
}

#[test]
fn nothing_found_says_how_to_start_a_server() {
    // An empty /proc: whatever other tests run on this machine is not seen.
    let empty = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = ocview(&[])
        .env("OCVIEW_DISCOVER_PROC", empty.path())
        .output()
        .unwrap();
    eprintln!("discover with nothing to find took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no opencode server found"), "{err}");
    assert!(err.contains("opencode serve --port 4096"), "{err}");
    assert!(err.contains("ocview demo"), "{err}");
    assert!(out.stdout.is_empty());

    let out = ocview(&["discover", "--json"])
        .env("OCVIEW_DISCOVER_PROC", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ocview demo"));
}

/// Two network namespaces joined by a veth pair with private test
/// addresses (10.213.7.0/24): opencode announces itself in one, ocview
/// browses in the other. Nothing touches the machine's own interfaces.
struct Namespaces {
    names: [String; 2],
}

const ADDR_SERVER: &str = "10.213.7.1";
const ADDR_VIEWER: &str = "10.213.7.2";

impl Namespaces {
    /// `None` (with the reason) where namespaces cannot be made.
    fn create() -> Result<Namespaces, String> {
        let id = std::process::id();
        let ns = Namespaces {
            names: [format!("ocv-srv-{id}"), format!("ocv-view-{id}")],
        };
        let [a, b] = &ns.names;
        let (va, vb) = (
            format!("ocvs{}", id % 100_000),
            format!("ocvv{}", id % 100_000),
        );
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", a],
            vec!["netns", "add", b],
            vec![
                "link", "add", &va, "netns", a, "type", "veth", "peer", "name", &vb, "netns", b,
            ],
            vec!["-n", a, "addr", "add", "10.213.7.1/24", "dev", &va],
            vec!["-n", b, "addr", "add", "10.213.7.2/24", "dev", &vb],
            vec!["-n", a, "link", "set", "lo", "up"],
            vec!["-n", b, "link", "set", "lo", "up"],
            vec!["-n", a, "link", "set", &va, "up"],
            vec!["-n", b, "link", "set", &vb, "up"],
            // mDNS goes to 224.0.0.251: route multicast out of the veth.
            vec!["-n", a, "route", "add", "224.0.0.0/4", "dev", &va],
            vec!["-n", b, "route", "add", "224.0.0.0/4", "dev", &vb],
        ];
        for step in steps {
            let out = Command::new("ip").args(&step).output();
            match out {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    return Err(format!(
                        "`ip {}` failed: {}",
                        step.join(" "),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ));
                }
                Err(e) => return Err(format!("no `ip` command (iproute2): {e}")),
            }
        }
        Ok(ns)
    }

    fn exec(&self, which: usize, program: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.names[which]]).arg(program);
        c
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and its peer.
        for name in &self.names {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_finds_an_mdns_announced_server_in_a_namespace() {
    let ns = match Namespaces::create() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED: the mDNS test needs network namespaces (root and iproute2): {why}");
            return;
        }
    };
    let mut server = Server::prepare(NO_MODEL, None);
    let log = std::fs::File::create(server.home.join("server.log")).unwrap();
    let bin = support::opencode::binary();
    // opencode's environment, run inside the server's namespace.
    let mut c = server.command(Path::new("ip"));
    c.args(["netns", "exec", &ns.names[0]])
        .arg(&bin)
        .args(["serve", "--mdns", "--port", &server.port.to_string()])
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut child = c.spawn().expect("start opencode serve --mdns");

    let url = format!("http://{ADDR_SERVER}:{}", server.port);
    let name = format!("opencode-{}", server.port);
    let deadline = Instant::now() + Duration::from_secs(90);
    let (list, took) = loop {
        let started = Instant::now();
        let out = tokio::task::spawn_blocking({
            let mut c = ns.exec(1, Path::new(env!("CARGO_BIN_EXE_ocview")));
            c.args(["discover", "--discover", "--json"])
                .stdin(Stdio::null())
                .env_remove("OPENCODE_SERVER_URL")
                .env_remove("OCVIEW_DISCOVER_PROC");
            move || c.output().unwrap()
        })
        .await
        .unwrap();
        let took = started.elapsed();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Ok(Value::Array(list)) = serde_json::from_str::<Value>(&text)
            && entry(&list, &url).is_some()
        {
            break (list, took);
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let log = std::fs::read_to_string(server.home.join("server.log")).unwrap_or_default();
            panic!(
                "ocview --discover never found {url}; last answer {text}, stderr {}\nserver log ends:\n{}",
                String::from_utf8_lossy(&out.stderr),
                &log[log.len().saturating_sub(2000)..]
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    eprintln!("discover --discover (mDNS) took {took:?}");
    let s = entry(&list, &url).unwrap();
    assert_eq!(s["directory"], server.project.display().to_string(), "{s}");
    assert_eq!(s["version"], support::opencode::VERSION);
    // Only the network could have told: the server's sockets are in the
    // other namespace, so its process is no local find here.
    assert_eq!(found_by(s), ["mdns"], "{s}");
    assert_eq!(s["found_by"][0]["name"], name.as_str(), "{s}");
    assert!(
        !list
            .iter()
            .any(|s| s["url"].as_str().is_some_and(|u| u.contains(ADDR_VIEWER))),
        "{list:#?}"
    );
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
    server.kill();
}
