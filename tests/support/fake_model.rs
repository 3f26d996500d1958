//! A scripted fake OpenAI-compatible model on 127.0.0.1, speaking
//! `POST /v1/chat/completions` the way opencode's provider expects:
//! streamed chunks of text, reasoning and tool calls, a usage chunk, then
//! `[DONE]`. A script picks each reply from the request; title and
//! compaction calls are answered on the side. Every request is recorded.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
pub enum Item {
    Reasoning(String),
    Text(String),
    Tool { name: String, args: Value },
}

/// One model call's answer.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub items: Vec<Item>,
    /// Answer with this HTTP error instead (status, body).
    pub error: Option<(u16, String)>,
    /// Fail the stream after its text with an error chunk, as a provider
    /// does when it gives up mid-answer (opencode retries).
    pub fail_midway: bool,
    /// After this step's text, hold the stream open this long before
    /// finishing: the session stays busy (to be aborted).
    pub stall: Option<Duration>,
    /// The usage chunk to report (default: 1000 prompt, 50 completion).
    pub usage: Option<Value>,
}

impl Step {
    pub fn text(t: &str) -> Step {
        Step {
            items: vec![Item::Text(t.into())],
            ..Default::default()
        }
    }
    /// This step's text, then the stream fails.
    pub fn fail_midway(mut self) -> Step {
        self.fail_midway = true;
        self
    }
    /// This step's text, then a stream that stays open for `d`.
    pub fn stall(mut self, d: Duration) -> Step {
        self.stall = Some(d);
        self
    }
    pub fn then_tool(mut self, name: &str, args: Value) -> Step {
        self.items.push(Item::Tool {
            name: name.into(),
            args,
        });
        self
    }
    /// Report this usage (an OpenAI `usage` object) for the step.
    pub fn usage(mut self, usage: Value) -> Step {
        self.usage = Some(usage);
        self
    }
    pub fn reasoning(mut self, r: &str) -> Step {
        self.items.insert(0, Item::Reasoning(r.into()));
        self
    }
}

/// Picks the answer: the request, and how many assistant messages it holds
/// (the step of the conversation).
pub type Script = Arc<dyn Fn(&Value, usize) -> Step + Send + Sync>;

/// A script that answers step n of every conversation with `steps[n]`, and
/// "Done." past the end.
pub fn steps(steps: Vec<Step>) -> Script {
    Arc::new(move |_, n| steps.get(n).cloned().unwrap_or_else(|| Step::text("Done.")))
}

pub struct FakeModel {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    pub async fn start(script: Script) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let script = script.clone();
                let recorded = recorded.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, script, recorded).await;
                });
            }
        });
        FakeModel { port, requests }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The script's requests (not title or compaction calls).
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

pub fn system_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the first user message.
pub fn first_user_text(req: &Value) -> String {
    let m = req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user");
    match m.map(|m| &m["content"]) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let lower = head.to_ascii_lowercase();
    let mut body = buf[head_end..].to_vec();
    if let Some(len) = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        while body.len() < len {
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if lower.contains("transfer-encoding: chunked") {
        while !body.windows(5).any(|w| w == b"0\r\n\r\n") {
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        body = dechunk(&body);
    }
    Ok(Some((head, body)))
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&raw[..i]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = i + 2;
        out.extend_from_slice(&raw[start..(start + size).min(raw.len())]);
        raw = &raw[(start + size + 2).min(raw.len())..];
    }
    out
}

async fn serve(
    mut sock: TcpStream,
    script: Script,
    recorded: Arc<Mutex<Vec<Value>>>,
) -> std::io::Result<()> {
    let Some((head, body)) = read_request(&mut sock).await? else {
        return Ok(());
    };
    if !head.starts_with("POST") || !head.contains("/chat/completions") {
        sock.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await?;
        return Ok(());
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let system = system_text(&req);
    let stream = req["stream"].as_bool().unwrap_or(false);
    let step = if system.contains("You are a title generator") {
        Step::text("E2E test session")
    } else if system.contains("context summarization") {
        Step::text("Summary of the conversation so far.")
    } else {
        recorded.lock().unwrap().push(req.clone());
        let n = req["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        script(&req, n)
    };
    if let Some((status, body)) = &step.error {
        let resp = format!(
            "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        sock.write_all(resp.as_bytes()).await?;
        return Ok(());
    }
    if !stream {
        let text: String = step
            .items
            .iter()
            .filter_map(|i| {
                if let Item::Text(t) = i {
                    Some(t.as_str())
                } else {
                    None
                }
            })
            .collect();
        let body = json!({"id": "cmpl-1", "object": "chat.completion", "created": 1, "model": "mock-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        .to_string();
        let resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        sock.write_all(resp.as_bytes()).await?;
        return Ok(());
    }
    sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n").await?;
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock-1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut send = Vec::new();
    send.push(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    let mut tools = 0;
    for item in &step.items {
        match item {
            Item::Reasoning(r) => {
                for piece in pieces(r) {
                    send.push(chunk(json!({"reasoning_content": piece}), Value::Null));
                }
            }
            Item::Text(t) => {
                for piece in pieces(t) {
                    send.push(chunk(json!({"content": piece}), Value::Null));
                }
            }
            Item::Tool { name, args } => {
                let args = args.to_string();
                let (a, b) = args.split_at(args.len() / 2);
                let id = format!("call_{}_{tools}", rand_id());
                send.push(chunk(json!({"tool_calls": [{"index": tools, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}), Value::Null));
                send.push(chunk(
                    json!({"tool_calls": [{"index": tools, "function": {"arguments": b}}]}),
                    Value::Null,
                ));
                tools += 1;
            }
        }
    }
    if let Some(d) = step.stall {
        for c in send.drain(..) {
            sock.write_all(format!("data: {c}\n\n").as_bytes()).await?;
            sock.flush().await?;
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        tokio::time::sleep(d).await;
    }
    if step.fail_midway {
        let err = json!({"error": {"message": "Overloaded", "type": "server_error", "code": "server_error"}});
        send.push(err);
    } else {
        let finish = if tools > 0 { "tool_calls" } else { "stop" };
        send.push(chunk(json!({}), json!(finish)));
        let usage = step.usage.clone().unwrap_or_else(
            || json!({"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}),
        );
        send.push(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock-1", "choices": [],
        "usage": usage}));
    }
    for c in send {
        sock.write_all(format!("data: {c}\n\n").as_bytes()).await?;
        sock.flush().await?;
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    sock.write_all(b"data: [DONE]\n\n").await?;
    sock.shutdown().await?;
    Ok(())
}

/// Text in a few pieces, so the viewer sees deltas.
fn pieces(t: &str) -> Vec<String> {
    let words: Vec<&str> = t.split_inclusive(' ').collect();
    words.chunks(3).map(|c| c.concat()).collect()
}

fn rand_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        % 1_000_000_007
}

/// The text of the last user message, and how many assistant messages
/// follow it (the step within the current turn).
pub fn last_turn(req: &Value) -> (String, usize) {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let Some(i) = msgs.iter().rposition(|m| m["role"] == "user") else {
        return (String::new(), 0);
    };
    let text = match &msgs[i]["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    (
        text,
        msgs[i + 1..]
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count(),
    )
}
