//! What the stand-in servers share: reading a request head, and a running
//! server that stops and is joined when dropped. Included by the benches
//! too (with `#[path]`), beside the stand-ins that use it.
#![allow(dead_code)]

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// One request head, through its blank line; `None` if the client left.
pub async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// A stand-in's thread and its stop signal: dropped, it stops and is joined.
pub struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    pub fn new(
        stop: tokio::sync::oneshot::Sender<()>,
        thread: std::thread::JoinHandle<()>,
    ) -> Running {
        Running {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
