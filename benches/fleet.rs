//! A fleet's cost, as ratios that must not depend on the number of servers
//! (issue 17, point 5).
//!
//! 1. Frame time (App prepare + draw) with 16 servers × 20 sessions divided
//!    by frame time with one server × 20 sessions: a frame with nothing new,
//!    and a frame after a delta to the open session. Goal ≤ 1.5.
//! 2. The cost of applying one streamed delta to one session, the same
//!    way. Goal ≤ 1.5.
//! 3. Memory per idle server: the viewer's RSS with 33 idle servers live
//!    against one, per added server. The stand-in servers run in a child
//!    process, so their own memory is not counted.
//!
//! The stores are built from recording lines that name their server, through
//! the same decoding and reducer as a fleet's stream. Small and big are
//! measured in turns, so a busy machine slows both alike. Prints FAIL and
//! exits non-zero when a ratio misses its goal. Run with
//! `cargo bench --bench fleet`.

#[path = "../tests/support/fleet_server.rs"]
mod fleet_server;
#[path = "../tests/support/proc_status.rs"]
mod proc_status;
#[path = "../tests/support/stand_in.rs"]
mod stand_in;

mod common;
use common::{frame, median};

use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ocview::app::App;
use ocview::app::config::Config;
use ocview::render::highlight::Highlighter;
use ocview::source::decode::apply::decode_record;
use ocview::source::live::fleet::{self, Control, FleetServer};
use ocview::source::live::{Client, LiveOptions};
use ocview::source::msg::SourceMsg;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const W: u16 = 160;
const H: u16 = 50;
const SESSIONS: usize = 20;
/// Messages in each session: user prompts and markdown answers with a card.
const MESSAGES: usize = 10;
const GOAL: f64 = 1.5;
/// Idle servers live for the memory measure (one, then this many).
const IDLE: usize = 33;

fn record(line: &str) -> SourceMsg {
    SourceMsg::Record(Box::new(decode_record(line.as_bytes(), 1, true)))
}

fn key(server: usize) -> String {
    format!("10.0.{}.{}:4096", server / 200, server % 200 + 1)
}

/// The session everything streams to: the first server's first.
fn open_session() -> String {
    format!("ses_0000fleetbench@{}", key(0))
}

/// A recording line of `server`'s: `{"server": key, "event": {…}}`.
fn line(server: usize, kind: &str, props: &str) -> String {
    format!(
        r#"{{"server":"{}","event":{{"type":"{kind}","properties":{props}}}}}"#,
        key(server)
    )
}

fn msg_id(i: usize) -> String {
    format!("msg_{:012x}fleetbench", 0x2028f0000000u64 + i as u64 * 16)
}

/// An app holding `servers` servers of `SESSIONS` sessions each (the same
/// ids on every server, as servers sharing a storage have), the first
/// server's first session open.
fn fleet_app(servers: usize) -> App {
    let mut app = App::new(Config::default(), "bench", true).unwrap();
    app.highlighter = Highlighter::blocking(&app.theme.syntax);
    for s in 0..servers {
        let report = format!(
            r#"{{"url":"http://{}","directory":"/srv/{s}","state":"live"}}"#,
            key(s)
        );
        app.on_source(record(&line(s, "ocview.server", &report)));
        for n in 0..SESSIONS {
            let sid = format!("ses_{n:04}fleetbench");
            let info = format!(
                r#"{{"info":{{"id":"{sid}","title":"server {s} session {n}: fix the build","directory":"/srv/{s}","time":{{"created":{n},"updated":{n}}}}}}}"#
            );
            app.on_source(record(&line(s, "session.updated", &info)));
            for i in 0..MESSAGES {
                let id = msg_id(i);
                let user = i % 2 == 0;
                let (role, parent) = if user {
                    ("user", String::new())
                } else {
                    ("assistant", format!(r#","parentID":"{}""#, msg_id(i - 1)))
                };
                let info = format!(
                    r#"{{"info":{{"id":"{id}","sessionID":"{sid}","role":"{role}"{parent},"time":{{"created":1,"completed":2}}}}}}"#
                );
                app.on_source(record(&line(s, "message.updated", &info)));
                let text = if user {
                    format!("Please look at item {i} and fix what is wrong with it.")
                } else {
                    format!(
                        "## Answer {i}\\n\\nHere is **what** I changed, with `code` and a list:\\n\\n- first point\\n- second point\\n\\n```rust\\nfn f{i}() -> u32 {{ {i} }}\\n```"
                    )
                };
                let part = format!(
                    r#"{{"part":{{"id":"prt_{i:012x}a","messageID":"{id}","sessionID":"{sid}","type":"text","text":"{text}"}}}}"#
                );
                app.on_source(record(&line(s, "message.part.updated", &part)));
                if !user {
                    let card = format!(
                        r#"{{"part":{{"id":"prt_{i:012x}b","messageID":"{id}","sessionID":"{sid}","type":"tool","tool":"bash","callID":"c{i}","state":{{"status":"completed","input":{{"command":"cargo test -p item{i}"}},"output":"ok\\nall good\\n","title":"","metadata":{{"exit":0}},"time":{{"start":1,"end":2}}}}}}}}"#
                    );
                    app.on_source(record(&line(s, "message.part.updated", &card)));
                }
            }
        }
    }
    assert_eq!(app.store.servers().len(), servers);
    assert_eq!(app.store.sessions().len(), servers * SESSIONS);
    app.selected = Some(open_session());
    app
}

/// A part to stream into, in the open session's last message.
fn stream_part(app: &mut App, n: usize) -> String {
    let part = format!("prt_ffff{n:08}");
    let props = format!(
        r#"{{"part":{{"id":"{part}","messageID":"{}","sessionID":"ses_0000fleetbench","type":"text","text":""}}}}"#,
        msg_id(MESSAGES - 1)
    );
    app.on_source(record(&line(0, "message.part.updated", &props)));
    part
}

/// The delta records for `part`, decoded ahead (decoding is the source's
/// work, off the loop).
fn deltas(part: &str, n: usize) -> Vec<SourceMsg> {
    (0..n)
        .map(|k| {
            let props = format!(
                r#"{{"sessionID":"ses_0000fleetbench","messageID":"{}","partID":"{part}","field":"text","delta":"word{k} "}}"#,
                msg_id(MESSAGES - 1)
            );
            record(&line(0, "message.part.delta", &props))
        })
        .collect()
}

/// What one size measured.
#[derive(Default)]
struct Samples {
    still: Vec<Duration>,
    streamed: Vec<Duration>,
    /// Per-delta apply cost of each batch.
    apply: Vec<Duration>,
}

struct Subject {
    app: App,
    terminal: Terminal<TestBackend>,
    parts: usize,
    samples: Samples,
}

impl Subject {
    fn new(servers: usize) -> Subject {
        let mut app = fleet_app(servers);
        let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
        frame(&mut app, &mut terminal);
        frame(&mut app, &mut terminal);
        Subject {
            app,
            terminal,
            parts: 0,
            samples: Samples::default(),
        }
    }

    /// One round: frames with nothing new, frames after a delta, and a
    /// batch of deltas applied without frames.
    fn round(&mut self) {
        let (app, terminal) = (&mut self.app, &mut self.terminal);
        for _ in 0..20 {
            let t = Instant::now();
            frame(app, terminal);
            self.samples.still.push(t.elapsed());
        }
        self.parts += 1;
        let part = stream_part(app, self.parts);
        frame(app, terminal);
        for msg in deltas(&part, 20) {
            let t = Instant::now();
            app.on_source(msg);
            frame(app, terminal);
            self.samples.streamed.push(t.elapsed());
        }
        self.parts += 1;
        let part = stream_part(app, self.parts);
        let batch = deltas(&part, 2_000);
        let n = batch.len() as u32;
        let t = Instant::now();
        for msg in batch {
            black_box(app.on_source(msg));
        }
        self.samples.apply.push(t.elapsed() / n);
        frame(app, terminal);
    }
}

/// The child: `IDLE` idle stand-in servers, their URLs on stdout, until
/// stdin closes.
fn serve_idle() {
    let fake = fleet_server::FakeFleet::start(IDLE, 0, 0.0);
    for url in &fake.urls {
        println!("{url}");
    }
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {}
}

fn server(url: &str) -> FleetServer {
    FleetServer {
        key: fleet::key_of(url),
        client: Client::new(url, None),
        options: LiveOptions::default(),
        directory: None,
    }
}

/// Apply what the fleet sends until `n` servers are live, a frame after
/// each batch, then a quiet half second.
async fn until_live(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    rx: &mut tokio::sync::mpsc::Receiver<SourceMsg>,
    n: usize,
) {
    let live = |app: &App| {
        app.store
            .servers()
            .iter()
            .filter(|s| s.state.is_live())
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while live(app) < n {
        assert!(
            Instant::now() < deadline,
            "{} of {n} servers live",
            live(app)
        );
        if let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            app.on_source(msg);
            while let Ok(msg) = rx.try_recv() {
                app.on_source(msg);
            }
        }
        frame(app, terminal);
    }
    let quiet = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(msg)) = tokio::time::timeout_at(quiet, rx.recv()).await {
        app.on_source(msg);
    }
    frame(app, terminal);
}

/// RSS per idle server: (with one, with `IDLE`, per added server), KiB.
fn idle_memory() -> (f64, f64, f64) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg("--serve-idle")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the stand-in servers start");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let urls: Vec<String> = (0..IDLE)
        .map(|_| {
            let mut url = String::new();
            out.read_line(&mut url).unwrap();
            url.trim().to_string()
        })
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel(8192);
        let handle = fleet::spawn(vec![server(&urls[0])], tx, false, None);
        let mut app = App::new(Config::default(), "bench", false).unwrap();
        app.live = Some(handle.commands.clone());
        app.replies = handle.replies.clone();
        let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
        until_live(&mut app, &mut terminal, &mut rx, 1).await;
        let one = proc_status::kib(None, "VmRSS").unwrap_or(0.0);
        for url in &urls[1..] {
            handle.control.send(Control::Join(server(url))).unwrap();
        }
        until_live(&mut app, &mut terminal, &mut rx, IDLE).await;
        let all = proc_status::kib(None, "VmRSS").unwrap_or(0.0);
        (one, all, (all - one) / (IDLE - 1) as f64)
    });
    rt.shutdown_background();
    drop(child.stdin.take());
    let _ = child.wait();
    result
}

fn ratio(big: Duration, small: Duration) -> f64 {
    big.as_secs_f64() / small.as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--serve-idle") {
        return serve_idle();
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 3 } else { 15 };
    let mut small = Subject::new(1);
    let mut big = Subject::new(16);
    // Three servers already fill the list: against them, what grows with
    // servers beyond what the screen shows.
    let mut full = Subject::new(3);
    for _ in 0..rounds {
        small.round();
        big.round();
        full.round();
    }
    let (s, b, f) = (small.samples, big.samples, full.samples);
    let still = (median(s.still), median(b.still));
    let streamed = (median(s.streamed), median(b.streamed));
    let apply = (median(s.apply), median(b.apply));
    let mut failed = Vec::new();
    let mut check = |what: &str, (small, big): (Duration, Duration)| {
        let r = ratio(big, small);
        println!(
            "  {what:<28}: {small:>10.2?} with 1 server, {big:>10.2?} with 16: ratio {r:.2}  goal <= {GOAL}"
        );
        if r > GOAL {
            failed.push(format!("{what}: ratio {r:.2} > {GOAL}"));
        }
    };
    println!("fleet: 1 server x {SESSIONS} sessions against 16 x {SESSIONS} ({W}x{H}, medians):");
    check("frame, nothing new", still);
    check("frame after a delta", streamed);
    check("apply one delta", apply);
    println!(
        "  (a full list, 3 servers, against 16: frame {:.2}, frame after a delta {:.2}, apply {:.2})",
        ratio(still.1, median(f.still)),
        ratio(streamed.1, median(f.streamed)),
        ratio(apply.1, median(f.apply))
    );
    let (one, all, per) = idle_memory();
    println!(
        "  memory per idle server      : {:.1} MiB with 1 live, {:.1} MiB with {IDLE}: {per:.0} KiB per added server",
        one / 1024.0,
        all / 1024.0
    );
    for f in &failed {
        println!("FAIL {f}");
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
