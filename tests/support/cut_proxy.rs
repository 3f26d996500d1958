//! A loopback TCP proxy in front of a server that can be cut: every
//! connection through it is closed and new ones are refused until it is
//! restored. The viewer behind it loses its server while the server goes
//! on, and other clients (the test) still reach the server directly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

pub struct CutProxy {
    /// The proxy's own `http://127.0.0.1:PORT`.
    pub url: String,
    cut: Arc<AtomicBool>,
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
        let target = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (cut_in, open_in) = (cut.clone(), open.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if cut_in.load(Ordering::SeqCst) {
                    continue; // dropped: closed at once
                }
                let target = target.clone();
                let conn = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                let mut open = open_in.lock().unwrap();
                open.retain(|c| !c.is_finished());
                open.push(conn.abort_handle());
            }
        });
        CutProxy {
            url,
            cut,
            open,
            task,
        }
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
