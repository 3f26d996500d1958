//! The server's SSE stream, decoded into records. A stream is dead when it
//! closes, errors, or sends nothing for 30 s (the server's heartbeat comes
//! every 10 s).

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Method;
use tokio::sync::mpsc;

use super::client::{ApiError, Client};
use crate::source::replay::Record;
use crate::source::sse::SseDecoder;

/// How long the server may take to answer the stream request.
pub const HEADERS_TIMEOUT: Duration = Duration::from_secs(10);

/// No byte for this long: the stream is dead.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the reader task reports.
#[derive(Debug)]
pub enum StreamItem {
    Record(Box<Record>),
    /// Raw bytes, for recording (`--record`), in arrival order.
    Bytes(bytes::Bytes),
    Closed(String),
}

/// Open the stream (`/event`, or `/global/event`). Returns once the server
/// accepted it; the records then arrive on the channel, so events that come
/// while a snapshot loads are kept, in order.
pub async fn open(
    client: &Client,
    path: &str,
    idle_timeout: Duration,
) -> Result<mpsc::UnboundedReceiver<StreamItem>, ApiError> {
    // The headers must come in time: a server still starting can accept the
    // connection and answer nothing.
    let send = client
        .request(Method::GET, path, None)
        .header("accept", "text/event-stream")
        .send();
    let resp = tokio::time::timeout(HEADERS_TIMEOUT, send)
        .await
        .map_err(|_| ApiError::Transport {
            path: path.to_string(),
            message: "no answer in time".into(),
        })?
        .map_err(|e| Client::transport_error(path, &e))?;
    let status = resp.status();
    if !status.is_success() {
        let body = resp.text().await.unwrap_or_default();
        return Err(client.error_for(path, status, &body));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut bytes = resp.bytes_stream();
        let mut decoder = SseDecoder::new();
        let mut frames = Vec::new();
        let reason = loop {
            match tokio::time::timeout(idle_timeout, bytes.next()).await {
                Err(_) => break format!("no data for {} s", idle_timeout.as_secs()),
                Ok(None) => break "the server closed the stream".to_string(),
                Ok(Some(Err(e))) => break format!("stream error: {e}"),
                Ok(Some(Ok(chunk))) => {
                    decoder.push(&chunk, &mut frames);
                    if tx.send(StreamItem::Bytes(chunk)).is_err() {
                        return;
                    }
                    // An oversized frame comes out as an error record; the
                    // decoder never buffers past its limit, and goes on.
                    for frame in frames.drain(..) {
                        let record = frame.record();
                        if tx.send(StreamItem::Record(Box::new(record))).is_err() {
                            return;
                        }
                    }
                }
            }
        };
        let _ = tx.send(StreamItem::Closed(reason));
    });
    Ok(rx)
}
