//! A stand-in for `opencode serve` that notes every request it gets: the
//! method, the path and the `Authorization` header, if any. It holds one
//! idle session waiting on one bash permission, and answers what an attach
//! asks (health, path, sessions, statuses, prompts, an event stream that
//! stays open) and a permission's reply; started with a password, it
//! answers 401 to a request without it, as opencode does. It can also pose as an opencode
//! process in a `/proc` of the test's making (`fake_process`), so that
//! discovery finds it by itself. Hand-written HTTP/1.1, one request per
//! connection, on a thread and runtime of its own (usable from sync tests).
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const T0: i64 = 1_795_339_297_871;

/// One request as it came.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
}

pub struct HeaderServer {
    pub url: String,
    pub port: u16,
    /// The held session's id and title, and the permission's id.
    pub session: String,
    pub title: String,
    pub permission: String,
    requests: Arc<Mutex<Vec<Request>>>,
    _running: super::stand_in::Running,
}

struct Shared {
    name: String,
    session: String,
    title: String,
    permission: String,
    /// The `Authorization` value every request must carry.
    wanted: Option<String>,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl HeaderServer {
    /// Start on a free loopback port; `name` tells it apart (its project
    /// directory is `/srv/NAME`, its session's title `NAME's session`).
    pub fn start(name: &str) -> HeaderServer {
        HeaderServer::start_with(name, None)
    }

    /// The same, wanting this whole `Authorization` value (`Basic …`).
    pub fn start_with(name: &str, wanted: Option<&str>) -> HeaderServer {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            wanted: wanted.map(str::to_string),
            name: name.to_string(),
            session: format!("ses_dfd705bd5ffe{name:0<14}"),
            title: format!("{name}'s session"),
            permission: format!("per_dfd705bd5ffe{name:0<14}"),
            requests: requests.clone(),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let inner = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let _ = ready_tx.send(listener.local_addr().unwrap().port());
                let accept = async {
                    while let Ok((stream, _)) = listener.accept().await {
                        tokio::spawn(serve(inner.clone(), stream));
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stop_rx => {}
                }
            });
        });
        let port = ready_rx.recv().expect("the stand-in starts");
        HeaderServer {
            url: format!("http://127.0.0.1:{port}"),
            port,
            session: shared.session.clone(),
            title: shared.title.clone(),
            permission: shared.permission.clone(),
            requests,
            _running: super::stand_in::Running::new(stop, thread),
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// How many requests for `path` so far.
    pub fn count(&self, path: &str) -> usize {
        self.requests().iter().filter(|r| r.path == path).count()
    }

    /// The inode of its listening socket, from `/proc/net/tcp`.
    pub fn socket_inode(&self) -> u64 {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let local = format!("0100007F:{:04X}", self.port);
        tcp.lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.get(1) == Some(&local.as_str()) && f.get(3) == Some(&"0A"))
            .and_then(|f| f.get(9)?.parse().ok())
            .unwrap_or_else(|| panic!("no LISTEN entry for port {}", self.port))
    }

    /// Pose as process `pid` of `proc_root` (a `/proc` of the test's
    /// making): an executable named opencode holding this listening socket.
    /// `proc_root/net` is linked to the machine's socket tables.
    pub fn fake_process(&self, proc_root: &Path, pid: u32) {
        let dir = proc_root.join(pid.to_string());
        std::fs::create_dir_all(dir.join("fd")).unwrap();
        std::os::unix::fs::symlink("/opt/opencode/bin/opencode", dir.join("exe")).unwrap();
        std::fs::write(dir.join("cmdline"), b"opencode\0serve\0").unwrap();
        let inode = self.socket_inode();
        std::os::unix::fs::symlink(format!("socket:[{inode}]"), dir.join("fd/3")).unwrap();
        let net = proc_root.join("net");
        if !net.exists() {
            std::os::unix::fs::symlink("/proc/net", net).unwrap();
        }
    }
}

async fn serve(shared: Arc<Shared>, mut stream: TcpStream) {
    let Some(head) = super::stand_in::read_head(&mut stream).await else {
        return;
    };
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let target = words.next().unwrap_or("/").to_string();
    let path = target.split_once('?').map_or(target.as_str(), |(p, _)| p);
    let authorization = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("authorization")
            .then(|| v.trim().to_string())
    });
    let refused = shared.wanted.is_some() && authorization != shared.wanted;
    shared.requests.lock().unwrap().push(Request {
        method: method.clone(),
        path: path.to_string(),
        authorization,
    });
    if refused {
        let body = r#"{"name":"UnauthorizedError"}"#;
        let response = format!(
            "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Basic realm=\"opencode\"\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    if path == "/event" || path == "/global/event" {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\ndata: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
            .await;
        // Open until the viewer goes; a heartbeat now and then.
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let beat = b"data: {\"type\":\"server.heartbeat\",\"properties\":{}}\n\n";
            if stream.write_all(beat).await.is_err() {
                return;
            }
        }
    }
    let (status, body) = answer(&shared, &method, path);
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn answer(s: &Shared, method: &str, path: &str) -> (&'static str, String) {
    let ok = |body: String| ("200 OK", body);
    let (name, sid) = (&s.name, &s.session);
    if method == "POST" {
        return if path == format!("/permission/{}/reply", s.permission) {
            ok("true".into())
        } else {
            ("404 Not Found", r#"{"_tag":"NotFound"}"#.into())
        };
    }
    match path {
        "/global/health" => ok(r#"{"healthy":true,"version":"1.18.33"}"#.into()),
        "/path" => ok(format!(
            r#"{{"home":"/root","state":"/state/{name}","config":"/c","worktree":"/srv/{name}","directory":"/srv/{name}"}}"#
        )),
        "/session" => ok(format!(
            r#"[{{"id":"{sid}","slug":"held","projectID":"p-{name}","directory":"/srv/{name}","title":"{}","version":"1.18.33","time":{{"created":{T0},"updated":{T0}}}}}]"#,
            s.title
        )),
        "/session/status" => ok("{}".into()),
        "/permission" => ok(format!(
            r#"[{{"id":"{}","sessionID":"{sid}","permission":"bash","patterns":["echo {name}"],"metadata":{{"command":"echo {name}"}},"always":["echo *"]}}]"#,
            s.permission
        )),
        "/question" => ok("[]".into()),
        "/config/providers" => ok(r#"{"providers":[],"default":{}}"#.into()),
        "/project" => ok("[]".into()),
        p if p == format!("/session/{sid}/message") => ok("[]".into()),
        p if p == format!("/session/{sid}/todo") => ok("[]".into()),
        _ => ("404 Not Found", r#"{"_tag":"NotFound"}"#.into()),
    }
}
