//! A loopback TCP proxy in front of a server that can be cut: every
//! connection through it is closed and new ones are refused until it is
//! restored. The viewer behind it loses its server while the server goes
//! on, and other clients (the test) still reach the server directly. It
//! notes every HTTP request line that goes through (`requests`), so a
//! test counts what a viewer asked the server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

pub struct CutProxy {
    /// The proxy's own `http://127.0.0.1:PORT`.
    pub url: String,
    pub port: u16,
    cut: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    open: Arc<Mutex<Vec<AbortHandle>>>,
    task: JoinHandle<()>,
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.close_all();
    }
}

impl CutProxy {
    /// Proxy to `upstream` (`http://HOST:PORT`).
    pub async fn start(upstream: &str) -> CutProxy {
        CutProxy::start_on(upstream, 0).await
    }

    /// The same on a chosen port (0: any), taken again if it was just let go.
    pub async fn start_on(upstream: &str, port: u16) -> CutProxy {
        let target = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let mut tries = 0;
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(l) => break l,
                Err(_) if tries < 50 => {
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => panic!("port {port}: {e}"),
            }
        };
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}");
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (cut_in, open_in, requests_in) = (cut.clone(), open.clone(), requests.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if cut_in.load(Ordering::SeqCst) {
                    continue; // dropped: closed at once
                }
                let target = target.clone();
                let requests = requests_in.clone();
                let conn = tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&target).await {
                        relay(client, server, requests).await;
                    }
                });
                let mut open = open_in.lock().unwrap();
                open.retain(|c| !c.is_finished());
                open.push(conn.abort_handle());
            }
        });
        CutProxy {
            url,
            port,
            cut,
            requests,
            open,
            task,
        }
    }

    /// Every request line that went through so far (`GET /path HTTP/1.1`).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Close every connection and refuse new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.close_all();
    }

    /// Let connections through again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    fn close_all(&self) {
        for conn in self.open.lock().unwrap().drain(..) {
            conn.abort();
        }
    }
}

/// Copy both ways; note each request line the client sends.
async fn relay(client: TcpStream, server: TcpStream, requests: Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = server.into_split();
    let up = async move {
        let mut buf = vec![0u8; 16 * 1024];
        // The bytes since the last line end, for a line cut between reads.
        let mut carry: Vec<u8> = Vec::new();
        loop {
            let n = match client_in.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            carry.extend_from_slice(&buf[..n]);
            while let Some(end) = carry.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&carry[..end]).into_owned();
                carry.drain(..end + 2);
                let method = ["GET ", "POST ", "PUT ", "PATCH ", "DELETE "]
                    .iter()
                    .any(|m| line.starts_with(m));
                if method && line.ends_with(" HTTP/1.1") {
                    requests.lock().unwrap().push(line);
                }
            }
            if carry.len() > 64 * 1024 {
                carry.clear();
            }
            if server_out.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = server_out.shutdown().await;
    };
    let down = async move {
        let _ = tokio::io::copy(&mut server_in, &mut client_out).await;
        let _ = client_out.shutdown().await;
    };
    tokio::join!(up, down);
}
