//! A fleet of stand-ins for `opencode serve`, for load tests: `servers`
//! loopback servers holding `sessions` sessions between them, each streaming
//! its share of `events_per_sec` over SSE (a session's turn: busy, the user
//! message, the assistant's text in deltas, its final part, idle) and
//! answering the REST calls of an attach from what it streamed. Every server
//! holds the same session ids, as servers sharing one storage do: only the
//! fleet's scoping tells them apart.
//!
//! The servers run on a thread and runtime of their own, so their work does
//! not queue behind the viewer's tasks. Hand-written HTTP/1.1, one request
//! per connection, as `history_server.rs`. Used by `tests/it/fleet_load.rs`
//! and `benches/fleet.rs`.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const T0: i64 = 1_795_339_297_871;
/// How often a stream writes what is due.
const TICK: Duration = Duration::from_millis(10);

/// What one server was asked and sent.
#[derive(Debug, Default)]
pub struct ServerCounts {
    /// Event streams opened (more than one: the viewer reconnected).
    pub streams: AtomicUsize,
    /// `GET /session` answered: a snapshot was loaded.
    pub listed: AtomicUsize,
    /// Message pages answered.
    pub pages: AtomicUsize,
    /// Events written to its streams (not counting `server.connected`).
    pub events: AtomicUsize,
    /// Bumped by a test: a restart (the open streams end; the server lists
    /// no session in `lost` from then on).
    pub restarts: AtomicUsize,
    /// Sessions a restart lost (bare ids).
    pub lost: Mutex<Vec<String>>,
}

pub struct FakeFleet {
    pub urls: Vec<String>,
    pub counts: Vec<Arc<ServerCounts>>,
    /// Set: the streams stop writing events (heartbeats go on).
    pub paused: Arc<AtomicBool>,
    _running: super::stand_in::Running,
}

impl FakeFleet {
    /// Start `servers` servers holding `sessions` sessions between them and
    /// streaming `events_per_sec` events in all (0: idle, heartbeats only).
    pub fn start(servers: usize, sessions: usize, events_per_sec: f64) -> FakeFleet {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let paused = Arc::new(AtomicBool::new(false));
        let paused_in = paused.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let rate = events_per_sec / servers.max(1) as f64;
                let mut started = Vec::new();
                for s in 0..servers {
                    let n = sessions / servers + usize::from(s < sessions % servers);
                    started.push(Server::start(s, n, rate, paused_in.clone()).await);
                }
                let _ = ready_tx.send(started);
                let _ = stop_rx.await;
            });
        });
        let started = ready_rx.recv().expect("the fake fleet starts");
        FakeFleet {
            urls: started.iter().map(|(url, _)| url.clone()).collect(),
            counts: started.into_iter().map(|(_, c)| c).collect(),
            paused,
            _running: super::stand_in::Running::new(stop, thread),
        }
    }

    /// Events written by every server so far.
    pub fn events(&self) -> usize {
        self.counts
            .iter()
            .map(|c| c.events.load(Ordering::Relaxed))
            .sum()
    }

    /// Whether every server has an open stream and has served its snapshot.
    pub fn all_attached(&self) -> bool {
        self.counts
            .iter()
            .all(|c| c.streams.load(Ordering::Relaxed) > 0 && c.listed.load(Ordering::Relaxed) > 0)
    }
}

/// The bare id of server `server`'s session `i`. Unique over the fleet, as
/// opencode's ids are (the archive keeps a session by its own id): server
/// 0's end in X's, another's name it in their place.
pub fn session_id(server: usize, i: usize) -> String {
    let tag = if server == 0 {
        String::new()
    } else {
        server.to_string()
    };
    format!("ses_{i:04}fleetload{tag:X<14}")
}

fn message_id(turn: u32, assistant: bool) -> String {
    format!(
        "msg_{:010}{}",
        turn * 2 + u32::from(assistant),
        "fleetloadXXXXXX"
    )
}

fn part_id(turn: u32, assistant: bool) -> String {
    format!(
        "prt_{:010}{}",
        turn * 2 + u32::from(assistant),
        "fleetloadXXXXXX"
    )
}

/// One session's scripted life: turn after turn.
struct Script {
    id: String,
    parent: Option<String>,
    title: String,
    /// Deltas in each of its turns: they differ, so sessions go idle at
    /// different times.
    deltas: u32,
    turn: u32,
    step: u32,
    /// The assistant's text of the current turn, so far.
    text: String,
    /// Finished messages, as `GET /session/{id}/message` items.
    stored: Vec<String>,
}

impl Script {
    fn new(server: usize, i: usize) -> Script {
        let id = session_id(server, i);
        // Every fourth session is a subagent's, under the one before.
        let parent = (i % 4 == 3).then(|| session_id(server, i - 1));
        let mut s = Script {
            id,
            parent,
            title: format!("load {server}/{i}: keep the fleet busy"),
            deltas: 20 + (i as u32 * 13) % 40,
            turn: 0,
            step: 0,
            text: String::new(),
            stored: Vec::new(),
        };
        // One finished turn before the viewer comes.
        let mut sink = String::new();
        for _ in 0..s.turn_len() {
            s.next_event(&mut sink);
        }
        s
    }

    fn turn_len(&self) -> u32 {
        self.deltas + 8
    }

    fn time(&self) -> i64 {
        T0 + (self.turn as i64 * 100 + self.step as i64) * 100
    }

    fn info(&self, assistant: bool, done: bool) -> String {
        let id = message_id(self.turn, assistant);
        let t = self.time();
        if assistant {
            let completed = if done {
                format!(r#","completed":{t}"#)
            } else {
                String::new()
            };
            format!(
                r#"{{"id":"{id}","sessionID":"{sid}","role":"assistant","parentID":"{parent}","mode":"build","agent":"build","path":{{"cwd":"/p","root":"/p"}},"cost":0.001,"tokens":{{"input":120,"output":40,"reasoning":0,"cache":{{"read":0,"write":0}}}},"modelID":"mock-1","providerID":"mock","time":{{"created":{t}{completed}}}}}"#,
                sid = self.id,
                parent = message_id(self.turn, false),
            )
        } else {
            format!(
                r#"{{"id":"{id}","sessionID":"{sid}","role":"user","agent":"build","model":{{"providerID":"mock","modelID":"mock-1"}},"time":{{"created":{t}}}}}"#,
                sid = self.id
            )
        }
    }

    fn part(&self, assistant: bool) -> String {
        let text = if assistant {
            self.text.clone()
        } else {
            format!("Question {} about {}", self.turn, self.title)
        };
        format!(
            r#"{{"id":"{}","messageID":"{}","sessionID":"{}","type":"text","text":"{text}"}}"#,
            part_id(self.turn, assistant),
            message_id(self.turn, assistant),
            self.id
        )
    }

    fn store(&mut self, assistant: bool) {
        let item = format!(
            r#"{{"info":{},"parts":[{}]}}"#,
            self.info(assistant, true),
            self.part(assistant)
        );
        self.stored.push(item);
    }

    /// The next event of the script, as an SSE frame.
    fn next_event(&mut self, out: &mut String) {
        let sid = self.id.clone();
        let d = self.deltas;
        let (kind, props) = match self.step {
            0 => (
                "session.status",
                format!(r#"{{"sessionID":"{sid}","status":{{"type":"busy"}}}}"#),
            ),
            1 => (
                "message.updated",
                format!(r#"{{"info":{}}}"#, self.info(false, false)),
            ),
            2 => {
                self.store(false);
                (
                    "message.part.updated",
                    format!(r#"{{"part":{}}}"#, self.part(false)),
                )
            }
            3 => (
                "message.updated",
                format!(r#"{{"info":{}}}"#, self.info(true, false)),
            ),
            4 => {
                self.text.clear();
                (
                    "message.part.updated",
                    format!(r#"{{"part":{}}}"#, self.part(true)),
                )
            }
            s if s < 5 + d => {
                let word = format!("word{} ", s - 5);
                self.text.push_str(&word);
                (
                    "message.part.delta",
                    format!(
                        r#"{{"sessionID":"{sid}","messageID":"{}","partID":"{}","field":"text","delta":"{word}"}}"#,
                        message_id(self.turn, true),
                        part_id(self.turn, true)
                    ),
                )
            }
            s if s == 5 + d => (
                "message.part.updated",
                format!(r#"{{"part":{}}}"#, self.part(true)),
            ),
            s if s == 6 + d => {
                self.store(true);
                (
                    "message.updated",
                    format!(r#"{{"info":{}}}"#, self.info(true, true)),
                )
            }
            _ => (
                "session.status",
                format!(r#"{{"sessionID":"{sid}","status":{{"type":"idle"}}}}"#),
            ),
        };
        let _ = write!(
            out,
            "data: {{\"type\":\"{kind}\",\"properties\":{props}}}\n\n"
        );
        self.step += 1;
        if self.step == self.turn_len() {
            self.step = 0;
            self.turn += 1;
        }
    }

    fn session_json(&self, server: usize) -> String {
        let parent = self
            .parent
            .as_ref()
            .map(|p| format!(r#","parentID":"{p}""#))
            .unwrap_or_default();
        format!(
            r#"{{"id":"{}","slug":"load","projectID":"p{server}","directory":"/srv/{server}","title":"{}","version":"1.18.33"{parent},"time":{{"created":{T0},"updated":{}}}}}"#,
            self.id,
            self.title,
            self.time()
        )
    }

    /// Every message so far, the current turn's unfinished one included.
    fn messages_json(&self) -> String {
        let mut items = self.stored.clone();
        if self.step > 4 {
            items.push(format!(
                r#"{{"info":{},"parts":[{}]}}"#,
                self.info(true, false),
                self.part(true)
            ));
        }
        format!("[{}]", items.join(","))
    }
}

struct Server {
    index: usize,
    scripts: Mutex<Vec<Script>>,
    /// Events per second this server streams.
    rate: f64,
    counts: Arc<ServerCounts>,
    paused: Arc<AtomicBool>,
}

impl Server {
    async fn start(
        index: usize,
        sessions: usize,
        rate: f64,
        paused: Arc<AtomicBool>,
    ) -> (String, Arc<ServerCounts>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let counts = Arc::new(ServerCounts::default());
        let server = Arc::new(Server {
            index,
            scripts: Mutex::new((0..sessions).map(|i| Script::new(index, i)).collect()),
            rate,
            counts: counts.clone(),
            paused,
        });
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(server.clone().serve(stream));
            }
        });
        (url, counts)
    }

    async fn serve(self: Arc<Self>, mut stream: TcpStream) {
        let Some(head) = super::stand_in::read_head(&mut stream).await else {
            return;
        };
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let path = target.split_once('?').map_or(target.as_str(), |(p, _)| p);
        if path == "/event" || path == "/global/event" {
            return self.stream(stream).await;
        }
        let (status, body) = self.answer(path);
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }

    fn answer(&self, path: &str) -> (&'static str, String) {
        let ok = |body: String| ("200 OK", body);
        match path {
            "/session" => {
                self.counts.listed.fetch_add(1, Ordering::Relaxed);
                let scripts = self.scripts.lock().unwrap();
                let lost = self.counts.lost.lock().unwrap().clone();
                let list: Vec<String> = scripts
                    .iter()
                    .filter(|s| !lost.contains(&s.id))
                    .map(|s| s.session_json(self.index))
                    .collect();
                ok(format!("[{}]", list.join(",")))
            }
            "/session/status" => ok("{}".into()),
            "/permission" | "/question" => ok("[]".into()),
            "/config/providers" => ok(r#"{"providers":[],"default":{}}"#.into()),
            "/global/health" => ok(r#"{"healthy":true,"version":"1.18.33"}"#.into()),
            "/path" => ok(format!(
                r#"{{"home":"/root","state":"/s","config":"/c","worktree":"/srv/{0}","directory":"/srv/{0}"}}"#,
                self.index
            )),
            _ => {
                let rest = path.strip_prefix("/session/").unwrap_or("");
                let (id, what) = rest.split_once('/').unwrap_or((rest, ""));
                let scripts = self.scripts.lock().unwrap();
                match (scripts.iter().find(|s| s.id == id), what) {
                    (Some(s), "message") => {
                        self.counts.pages.fetch_add(1, Ordering::Relaxed);
                        ok(s.messages_json())
                    }
                    (Some(_), "todo") => ok("[]".into()),
                    _ => ("404 Not Found", r#"{"_tag":"NotFound"}"#.into()),
                }
            }
        }
    }

    /// The event stream: what is due every tick, round-robin over the
    /// sessions, a heartbeat every 10 s.
    async fn stream(self: Arc<Self>, mut stream: TcpStream) {
        self.counts.streams.fetch_add(1, Ordering::Relaxed);
        let generation = self.counts.restarts.load(Ordering::Relaxed);
        if stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\ndata: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
            .await
            .is_err()
        {
            return;
        }
        let start = tokio::time::Instant::now();
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (mut sent, mut next, mut beat) = (0usize, 0usize, start);
        let mut out = String::new();
        loop {
            ticker.tick().await;
            if self.counts.restarts.load(Ordering::Relaxed) != generation {
                return;
            }
            out.clear();
            let due = (start.elapsed().as_secs_f64() * self.rate) as usize;
            if self.paused.load(Ordering::Relaxed) {
                sent = due;
            }
            if due > sent {
                let mut scripts = self.scripts.lock().unwrap();
                let n = scripts.len();
                if n > 0 {
                    for _ in sent..due {
                        scripts[next % n].next_event(&mut out);
                        next += 1;
                    }
                    self.counts.events.fetch_add(due - sent, Ordering::Relaxed);
                }
                sent = due;
            }
            if beat.elapsed() >= Duration::from_secs(10) {
                beat = tokio::time::Instant::now();
                out.push_str("data: {\"type\":\"server.heartbeat\",\"properties\":{}}\n\n");
            }
            if !out.is_empty() && stream.write_all(out.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}
