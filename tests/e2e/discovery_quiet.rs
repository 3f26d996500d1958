//! Discovery costs the servers nothing: `ocview` alone (the fleet) finds a
//! server by its process, confirms it once, and after its stream is up
//! sends it nothing more (the one event stream stays open); a server that
//! appears later is confirmed once and joins; one whose socket goes away is
//! marked gone. The stand-ins count every request by path and pose as
//! opencode processes in a `/proc` of the test's making.

use crate::support;

use std::time::{Duration, Instant};

use support::header_server::{HeaderServer, Request};
use support::tmux::Tmux;

/// How long a known, streaming server is watched for requests.
const QUIET: Duration = Duration::from_secs(30);

fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn paths(requests: &[Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn a_known_streaming_server_is_sent_nothing_and_servers_come_and_go() {
    let known = HeaderServer::start("known");
    let proc_dir = tempfile::tempdir().unwrap();
    known.fake_process(proc_dir.path(), 4_000_201);

    let t = Tmux::start_sized("quiet-discovery", 140, 30);
    t.line(&format!(
        "unset OPENCODE_SERVER_URL OPENCODE_SERVER_PASSWORD; OCVIEW_DISCOVER_PROC={} {}",
        proc_dir.path().display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for_secs("the server live", 30, |sc| sc.contains("1 server: 1 live"));
    // Its snapshot loaded: the session and its pending permission are shown.
    t.wait_for_secs("its session", 30, |sc| sc.contains(&known.title));
    wait_until("the stream", 10, || known.count("/event") == 1);
    // Whatever the attach still had in flight lands within this.
    std::thread::sleep(Duration::from_secs(1));
    let at_start = known.requests();
    assert_eq!(known.count("/global/health"), 1, "{:#?}", paths(&at_start));

    // A newcomer, part-way through the quiet window: found by its process,
    // confirmed once, watched.
    let window = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let newcomer = HeaderServer::start("newcomer");
    newcomer.fake_process(proc_dir.path(), 4_000_202);
    t.wait_for_secs("the newcomer live", 20, |sc| {
        sc.contains("2 servers: 2 live")
    });
    wait_until("the newcomer's stream", 10, || {
        newcomer.count("/event") == 1
    });
    let remaining = QUIET.saturating_sub(window.elapsed());
    std::thread::sleep(remaining);

    let later = known.requests();
    let more = &later[at_start.len()..];
    assert!(
        more.is_empty(),
        "the known server was asked {} more time(s) in {QUIET:?}: {:#?}",
        more.len(),
        paths(more)
    );
    assert_eq!(known.count("/event"), 1, "one stream, never reopened");
    assert_eq!(
        (newcomer.count("/global/health"), newcomer.count("/path")),
        (1, 1),
        "the newcomer is confirmed once: {:#?}",
        paths(&newcomer.requests())
    );
    assert_eq!(newcomer.count("/event"), 1);

    // The newcomer's socket goes: marked gone, its session kept.
    drop(newcomer);
    t.wait_for_secs("the newcomer gone", 20, |sc| {
        sc.contains("2 servers: 1 live · 1 gone")
    });
    assert!(
        known.requests().len() == later.len(),
        "nothing asked of the known server when another went: {:#?}",
        paths(&known.requests()[later.len()..])
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}
