//! A session's whole history, back to its first message, as fast as the
//! server serves it (`g`, a search).
//!
//! Measured on opencode 1.18.33 with a 28,500-message session (15 MB):
//! every request costs the server about 10 ms on top of its messages, so
//! pages of 100 take 3.3 s in all, pages of 2,000–3,000 about 0.5 s, and
//! larger pages no less (one request without `limit` takes 3 s). The
//! server answers one request at a time (two walks side by side take
//! twice as long), and a cursor names the oldest message of the page
//! before: pages can only be walked one after the other. So the walk
//! overlaps what it can: the next request goes out as soon as a page's
//! headers (its cursor) are in, while that page's body is read and
//! decoded off the async threads; the pages grow from one that draws soon
//! to the size that measured fastest. Each page goes to the app as it
//! comes (the loop's gate draws at most every 100 ms).

use tokio::sync::mpsc;

use super::client::{ApiError, Client, PageHead, decode_list};
use super::paging::{Older, Paging};
use super::snapshot;
use crate::model::{MessageInfo, Part};
use crate::source::msg::SourceMsg;
use crate::source::recording::recorder::Feed;

/// The first older page of a walk: drawn soon after `g`.
pub const FIRST_PAGE: usize = 500;
/// The size pages grow to (×3 a page): the fastest measured.
pub const LARGEST_PAGE: usize = 3_000;

/// What a walk needs of the sync it runs beside.
#[derive(Clone)]
pub struct Walker {
    pub client: Client,
    pub paging: Paging,
    pub tx: mpsc::Sender<SourceMsg>,
    /// The recorder, when recording.
    pub record: Option<mpsc::UnboundedSender<Feed>>,
}

type Decoded = (Vec<(MessageInfo, Vec<Part>)>, Vec<serde_json::Value>);

impl Walker {
    /// Walk `session`'s history back from the oldest page loaded, beside
    /// the sync loop (which goes on reading the stream). Answered like
    /// `LiveCommand::Older`, once a page: `SourceMsg::Messages` with
    /// `older` set, the last one `complete`, or empty when a page failed.
    pub fn spawn(self, session: String) {
        tokio::spawn(async move {
            self.walk(session).await;
        });
    }

    async fn walk(self, session: String) {
        let mut cursor = match self.paging.older(&session) {
            Older::None => {
                self.send_page(&session, Vec::new(), true).await;
                return;
            }
            Older::Unknown => None,
            Older::Cursor(c) => Some(c),
        };
        let mut limit = FIRST_PAGE;
        let mut refused_once = false;
        let mut next = self.ask(&session, limit, cursor.clone());
        loop {
            let head = match next.await {
                Ok(Ok(head)) => head,
                // A kept cursor the server no longer takes: from the newest
                // page again (once).
                Ok(Err(e)) if e.status() == Some(400) && cursor.is_some() && !refused_once => {
                    tracing::info!("a kept cursor was refused ({e}): paging from the newest page");
                    refused_once = true;
                    self.paging.forget(&session);
                    cursor = None;
                    next = self.ask(&session, limit, None);
                    continue;
                }
                Ok(Err(e)) => return self.failed(&session, e.to_string()).await,
                Err(e) => return self.failed(&session, e.to_string()).await,
            };
            let older = head.older.clone();
            // The server works on the next page while this one is read.
            let following = older.clone().map(|c| {
                limit = (limit * 3).min(LARGEST_PAGE);
                self.ask(&session, limit, Some(c))
            });
            let page = match self.decode(head).await {
                Ok(page) => page,
                Err(e) => return self.failed(&session, e).await,
            };
            cursor = older.clone();
            let (messages, events) = page;
            if let Some(record) = &self.record {
                for event in events {
                    let _ = record.send(Feed::Loaded(event));
                }
            }
            self.paging.older_loaded(&session, older);
            if !self.send_page(&session, messages, cursor.is_none()).await {
                return;
            }
            match following {
                Some(f) => next = f,
                None => return,
            }
        }
    }

    fn ask(
        &self,
        session: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> tokio::task::JoinHandle<Result<PageHead, ApiError>> {
        let client = self.client.clone();
        let session = session.to_string();
        tokio::spawn(async move { client.page_head(&session, limit, cursor.as_deref()).await })
    }

    /// Read the body and decode it on a blocking thread: a large page
    /// takes tens of milliseconds that the async threads (and the screen)
    /// should not wait for.
    async fn decode(&self, head: PageHead) -> Result<Decoded, String> {
        let (path, body) = head.body().await.map_err(|e| e.to_string())?;
        let recording = self.record.is_some();
        tokio::task::spawn_blocking(move || {
            if !recording {
                return Ok((decode_messages(&path, &body)?, Vec::new()));
            }
            let list = decode_list(&path, &body).map_err(|e| e.to_string())?;
            Ok((snapshot::messages(&list), snapshot::message_events(&list)))
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// Say why, and answer with an empty page (the app asks again later).
    async fn failed(&self, session: &str, why: String) {
        let _ = self.tx.send(SourceMsg::Notice(why)).await;
        self.send_page(session, Vec::new(), false).await;
    }

    /// Returns whether the app still listens.
    async fn send_page(
        &self,
        session: &str,
        messages: Vec<(MessageInfo, Vec<Part>)>,
        complete: bool,
    ) -> bool {
        self.tx
            .send(SourceMsg::Messages {
                session_id: session.to_string(),
                messages,
                older: true,
                complete,
            })
            .await
            .is_ok()
    }
}

/// One item of a page, its info and parts left as raw JSON.
#[derive(serde::Deserialize)]
struct RawItem<'a> {
    #[serde(borrow)]
    info: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    parts: Vec<&'a serde_json::value::RawValue>,
}

/// A page's body straight to messages, oldest first, in one pass (no
/// `Value` in between): what `snapshot::messages` makes of the same list.
pub(super) fn decode_messages(
    path: &str,
    body: &[u8],
) -> Result<Vec<(MessageInfo, Vec<Part>)>, String> {
    let items: Vec<RawItem> =
        serde_json::from_slice(body).map_err(|e| format!("{path}: invalid JSON: {e}"))?;
    let mut out: Vec<(MessageInfo, Vec<Part>)> = items
        .into_iter()
        .filter_map(|item| {
            let info = MessageInfo::from_raw(item.info?).ok()?;
            if info.id.is_empty() {
                return None;
            }
            // Sized to the page's parts: `collect` through a filter would
            // leave room for four on every message.
            let mut parts = Vec::with_capacity(item.parts.len());
            parts.extend(
                item.parts
                    .into_iter()
                    .filter_map(|raw| Part::from_raw(raw).ok()),
            );
            Some((info, parts))
        })
        .collect();
    out.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_decoding_makes_what_the_value_path_makes() {
        let body = br#"[{"info":{"id":"msg_2","sessionID":"s","role":"user","time":{"created":2}},
            "parts":[{"id":"prt_2","sessionID":"s","messageID":"msg_2","type":"text","text":"b"}]},
            {"info":{"id":"msg_1","sessionID":"s","role":"user","time":{"created":1}},
            "parts":[{"id":"prt_1","sessionID":"s","messageID":"msg_1","type":"text","text":"a \u001b[2J"}]},
            {"parts":[]}, {"info":{"id":""}}]"#;
        let list = decode_list("/p", body).unwrap();
        let by_value = snapshot::messages(&list);
        let direct = decode_messages("/p", body).unwrap();
        assert_eq!(direct.len(), 2);
        // The same messages and parts (the raw JSON's key order aside).
        let brief = |list: &[(MessageInfo, Vec<Part>)]| {
            list.iter()
                .map(|(i, ps)| {
                    let parts: Vec<String> = ps
                        .iter()
                        .map(|p| format!("{} {:?}", p.id, p.body))
                        .collect();
                    format!("{} {:?} {:?} {parts:?}", i.id, i.role, i.created)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(brief(&direct), brief(&by_value));
        assert!(
            decode_messages("/p", b"{")
                .unwrap_err()
                .contains("invalid JSON")
        );
    }
}
