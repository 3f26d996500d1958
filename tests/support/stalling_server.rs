//! A fake `opencode serve` on loopback that hangs, stays busy, refuses the
//! password or swallows a request: enough for a headless attach, `export`
//! and `record` to meet each of these servers (`tests/e2e/errors.rs`).
//! Hand-written HTTP/1.1, one request per connection, a thread each.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How a fake opencode server behaves.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    /// Healthy, but never answers anything else.
    Hang,
    /// One session, busy for ever; the stream stays open.
    Busy,
    /// Every request is answered 401 (a wrong password).
    Unauthorized,
    /// Accepts connections and never answers.
    Mute,
    /// Busy, but the first request for this path is taken and never
    /// answered, as opencode does with a request that comes while it starts.
    MuteFirst(&'static str),
}

/// A fake `opencode serve` on loopback, enough for a headless attach.
pub fn fake_server(mode: Mode) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let muted = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for sock in listener.incoming().flatten() {
            let muted = muted.clone();
            std::thread::spawn(move || serve(sock, mode, &muted));
        }
    });
    format!("http://127.0.0.1:{port}")
}

pub const SESSION: &str = "ses_fakebusy000000000000000001";

/// Answer one request; `muted` counts the requests for `MuteFirst`'s path.
fn serve(sock: TcpStream, mode: Mode, muted: &AtomicUsize) {
    let mut reader = BufReader::new(sock.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
            break;
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut sock = sock;
    let reply = |sock: &mut TcpStream, status: &str, body: &str| {
        let _ = write!(
            sock,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    };
    if mode == Mode::Unauthorized {
        let _ = write!(
            sock,
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    let first_of_muted = match mode {
        Mode::MuteFirst(p) => {
            path.split('?').next() == Some(p) && muted.fetch_add(1, Ordering::SeqCst) == 0
        }
        _ => false,
    };
    if mode == Mode::Mute || first_of_muted {
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    if path.starts_with("/global/health") {
        return reply(
            &mut sock,
            "200 OK",
            r#"{"healthy":true,"version":"1.18.33"}"#,
        );
    }
    if mode == Mode::Hang {
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let session = format!(
        r#"{{"id":"{SESSION}","slug":"busy","version":"1.18.33","projectID":"p","directory":"/p","title":"Busy for ever","time":{{"created":1,"updated":2}}}}"#
    );
    match path.split('?').next().unwrap_or("") {
        "/event" => {
            let _ = write!(
                sock,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
            );
            let mut event =
                r#"data: {"type":"server.connected","properties":{}}"#.to_string() + "\n\n";
            for _ in 0..30 {
                if sock
                    .write_all(event.as_bytes())
                    .and_then(|_| sock.flush())
                    .is_err()
                {
                    return;
                }
                event = r#"data: {"type":"server.heartbeat","properties":{}}"#.to_string() + "\n\n";
                std::thread::sleep(Duration::from_secs(2));
            }
        }
        "/session" => reply(&mut sock, "200 OK", &format!("[{session}]")),
        "/session/status" => reply(
            &mut sock,
            "200 OK",
            &format!(r#"{{"{SESSION}":{{"type":"busy"}}}}"#),
        ),
        p if p.starts_with("/session/") => reply(&mut sock, "200 OK", "[]"),
        "/permission" | "/question" | "/project" => reply(&mut sock, "200 OK", "[]"),
        _ => reply(&mut sock, "200 OK", "{}"),
    }
}
