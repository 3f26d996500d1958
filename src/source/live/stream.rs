//! The server's SSE stream, decoded into records. A stream is dead when it
//! closes, errors, or sends nothing for 30 s (the server's heartbeat comes
//! every 10 s).

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Method;
use tokio::sync::mpsc;

use super::client::{ApiError, Client};
use crate::source::decode::apply::Record;
use crate::source::decode::sse::SseDecoder;

/// The longest the server may take to answer the stream request.
pub const HEADERS_TIMEOUT: Duration = Duration::from_secs(10);

/// The first wait for the stream's headers. A server still starting can
/// take a request and never answer it (opencode does, for a moment while
/// it starts): a short first wait lets the next try find it ready. Each
/// try left unanswered doubles the wait, up to `HEADERS_TIMEOUT`, so a
/// slow link still connects.
pub const HEADERS_FIRST: Duration = Duration::from_secs(3);

/// The wait for the headers after `unanswered` tries in a row got none.
pub fn headers_wait(unanswered: u32) -> Duration {
    HEADERS_FIRST
        .saturating_mul(1 << unanswered.min(4))
        .min(HEADERS_TIMEOUT)
}

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
/// while a snapshot loads are kept, in order. Its headers must come within
/// `headers` (see `headers_wait`).
pub async fn open(
    client: &Client,
    path: &str,
    headers: Duration,
    idle_timeout: Duration,
) -> Result<mpsc::UnboundedReceiver<StreamItem>, ApiError> {
    let send = client
        .request(Method::GET, path, None)
        .header("accept", "text/event-stream")
        .send();
    let resp = tokio::time::timeout(headers, send)
        .await
        .map_err(|_| ApiError::Unanswered {
            path: path.to_string(),
            secs: headers.as_secs(),
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_wait_for_headers_starts_short_and_doubles_to_its_cap() {
        let secs = |unanswered| super::headers_wait(unanswered).as_secs();
        assert_eq!([0, 1, 2, 3, 40].map(secs), [3, 6, 10, 10, 10]);
    }
}
