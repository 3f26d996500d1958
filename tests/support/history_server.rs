//! A small stand-in for `opencode serve` that holds one long session and
//! pages its messages back as opencode 1.18.33 does: `limit=N` gives the
//! newest N (oldest first), `X-Next-Cursor` (and `Link: rel="next"`) carry
//! an opaque base64url cursor for the page before, the oldest page has none,
//! and a `before=` that is not one of its cursors (a bare message id) is
//! answered HTTP 400. Hand-written HTTP/1.1, one request per connection.
//! Used by the paging tests and `benches/paging.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

pub const SESSION: &str = "ses_dfd705bd5ffeLongSession0001";
pub const FIRST_TEXT: &str = "FIRST-PROMPT-MARKER where it all began";
const T0: i64 = 1_795_339_297_871;

#[derive(Debug, Default)]
pub struct Counts {
    /// Message pages answered with 200.
    pub pages: AtomicUsize,
    /// Requests answered with 400.
    pub bad_requests: AtomicUsize,
    /// Todo lists served.
    pub todos: AtomicUsize,
    /// Event streams opened.
    pub streams: AtomicUsize,
    /// Set: the open event streams end (as when the server goes away).
    pub drop_streams: AtomicBool,
    /// When not 0: a stream opened sends one data line of this many bytes,
    /// then a whole frame announcing the session `ses_after_the_flood`.
    pub flood_bytes: AtomicUsize,
    /// The newest this many messages are not there yet (set to 0: they
    /// came, as while a viewer was disconnected).
    pub hide_newest: AtomicUsize,
    /// Each message page is answered this many milliseconds late.
    pub page_delay_ms: AtomicUsize,
    /// Message pages asked for of any other session.
    pub other_pages: AtomicUsize,
    /// Events (their JSON) the open stream sends at its next tick.
    pub inject: std::sync::Mutex<Vec<String>>,
}

pub struct HistoryServer {
    pub url: String,
    pub counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HistoryServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct History {
    ids: Vec<String>,
    /// Each message as its JSON (`{info, parts}`).
    json: Vec<String>,
}

pub fn message_id(i: usize) -> String {
    format!("msg_{:012x}{:014}", 0x2028_fa44_f001u64 + i as u64 * 16, i)
}

/// `n` messages, alternating user and assistant, the first user message
/// saying `FIRST_TEXT`.
fn history(n: usize) -> History {
    let mut ids = Vec::with_capacity(n);
    let mut json = Vec::with_capacity(n);
    let mut parent = String::new();
    for i in 0..n {
        let id = message_id(i);
        let part = format!("prt_{:012x}{:014}", 0x2028_fa44_f002u64 + i as u64 * 16, i);
        let time = T0 + i as i64 * 1000;
        let (info, text) = if i % 2 == 0 {
            parent = id.clone();
            let text = if i == 0 {
                FIRST_TEXT.to_string()
            } else {
                format!("Question number {i}: what does step {i} do?")
            };
            (
                serde_json::json!({"id": id, "sessionID": SESSION, "role": "user",
                    "time": {"created": time}, "agent": "build",
                    "model": {"providerID": "mock", "modelID": "mock-1"}}),
                text,
            )
        } else {
            (
                serde_json::json!({"id": id, "sessionID": SESSION, "role": "assistant",
                    "parentID": parent, "mode": "build", "agent": "build",
                    "path": {"cwd": "/p", "root": "/p"}, "cost": 0,
                    "tokens": {"input": 10, "output": 20, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                    "modelID": "mock-1", "providerID": "mock", "finish": "stop",
                    "time": {"created": time, "completed": time + 500}}),
                format!(
                    "Answer {i}. Step {i} **reads** the input,\n\n- checks it\n- writes `out-{i}.txt`\n\nThen it stops."
                ),
            )
        };
        let parts = serde_json::json!([{"id": part, "sessionID": SESSION, "messageID": id,
            "type": "text", "text": text}]);
        json.push(serde_json::json!({"info": info, "parts": parts}).to_string());
        ids.push(id);
    }
    History { ids, json }
}

impl HistoryServer {
    /// Serve a session of `n` messages on a loopback port.
    pub async fn start(n: usize) -> HistoryServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let history = Arc::new(history(n));
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(stream, history.clone(), c.clone()));
            }
        });
        HistoryServer { url, counts, task }
    }
}

/// One endless-looking data line, then a frame the viewer must still read.
async fn flood_then_a_frame(stream: &mut TcpStream, bytes: usize) -> std::io::Result<()> {
    stream.write_all(b"data: ").await?;
    let block = vec![b'x'; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len());
        stream.write_all(&block[..n]).await?;
        left -= n;
    }
    let info = format!(
        r#"{{"id":"ses_after_the_flood","title":"after the flood","directory":"/p","time":{{"created":{T0},"updated":{T0}}}}}"#
    );
    let frame = format!(
        "\n\ndata: {{\"id\":\"evt_2\",\"type\":\"session.updated\",\"properties\":{{\"sessionID\":\"ses_after_the_flood\",\"info\":{info}}}}}\n\n"
    );
    stream.write_all(frame.as_bytes()).await
}

async fn serve(mut stream: TcpStream, history: Arc<History>, counts: Arc<Counts>) {
    let Some(head) = super::stand_in::read_head(&mut stream).await else {
        return;
    };
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .map(percent_decode)
    };
    if path == "/event" || path == "/global/event" {
        counts.streams.fetch_add(1, Ordering::Relaxed);
        counts.drop_streams.store(false, Ordering::Relaxed);
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\ndata: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}\n\n")
            .await;
        let flood = counts.flood_bytes.swap(0, Ordering::Relaxed);
        if flood > 0 && flood_then_a_frame(&mut stream, flood).await.is_err() {
            return;
        }
        let mut ticks = 0u32;
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if counts.drop_streams.load(Ordering::Relaxed) {
                return;
            }
            let events = std::mem::take(&mut *counts.inject.lock().unwrap());
            for event in events {
                if stream
                    .write_all(format!("data: {event}\n\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
            // A heartbeat every 5 s.
            ticks += 1;
            if ticks == 100
                && stream
                    .write_all(b"data: {\"type\":\"server.heartbeat\",\"properties\":{}}\n\n")
                    .await
                    .is_err()
            {
                return;
            }
            ticks %= 100;
        }
    }
    let messages_path = format!("/session/{SESSION}/message");
    if path != messages_path && path.starts_with("/session/") && path.ends_with("/message") {
        counts.other_pages.fetch_add(1, Ordering::Relaxed);
    }
    let (status, headers, body) = if path == messages_path {
        let delay = counts.page_delay_ms.load(Ordering::Relaxed);
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay as u64)).await;
        }
        let limit = param("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .unwrap_or(usize::MAX);
        let there = history.ids.len() - counts.hide_newest.load(Ordering::Relaxed);
        let ids = &history.ids[..there];
        let end = match param("before") {
            None => Some(there),
            Some(cursor) => {
                cursor_id(&cursor).map(|id| ids.partition_point(|m| m.as_str() < id.as_str()))
            }
        };
        match end {
            None => {
                counts.bad_requests.fetch_add(1, Ordering::Relaxed);
                (
                    "400 Bad Request",
                    String::new(),
                    r#"{"_tag":"BadRequest"}"#.to_string(),
                )
            }
            Some(end) => {
                counts.pages.fetch_add(1, Ordering::Relaxed);
                let start = end.saturating_sub(limit);
                let mut headers = String::new();
                if start > 0 {
                    let cursor = b64url(
                        format!(
                            r#"{{"id":"{}","time":{}}}"#,
                            history.ids[start],
                            T0 + start as i64 * 1000
                        )
                        .as_bytes(),
                    );
                    headers = format!(
                        "link: <http://x{messages_path}?limit={limit}&before={cursor}>; rel=\"next\"\r\nx-next-cursor: {cursor}\r\n"
                    );
                }
                let body = format!("[{}]", history.json[start..end].join(","));
                ("200 OK", headers, body)
            }
        }
    } else if path == format!("/session/{SESSION}/todo") {
        counts.todos.fetch_add(1, Ordering::Relaxed);
        (
            "200 OK",
            String::new(),
            r#"[{"content":"read the history","status":"in_progress","priority":"high"}]"#
                .to_string(),
        )
    } else if path == "/session" {
        let info = serde_json::json!({"id": SESSION, "slug": "long", "projectID": "p",
            "directory": "/p", "title": "A long session", "version": "1.18.33",
            "time": {"created": T0, "updated": T0 + history.ids.len() as i64 * 1000}});
        ("200 OK", String::new(), format!("[{info}]"))
    } else if path == "/session/status" {
        ("200 OK", String::new(), "{}".to_string())
    } else if path == "/global/health" {
        (
            "200 OK",
            String::new(),
            r#"{"healthy":true,"version":"1.18.33"}"#.to_string(),
        )
    } else if path == "/permission" || path == "/question" {
        ("200 OK", String::new(), "[]".to_string())
    } else {
        (
            "404 Not Found",
            String::new(),
            r#"{"_tag":"NotFound"}"#.to_string(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The message id inside one of our cursors; `None` for anything else.
fn cursor_id(cursor: &str) -> Option<String> {
    let bytes = b64url_decode(cursor)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.get("id")?.as_str().map(str::to_string)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64url(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn b64url_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.trim_end_matches('=').bytes() {
        let v = B64.iter().position(|&b| b == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits & 0xff) as u8);
        }
    }
    Some(out)
}

fn percent_decode(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
