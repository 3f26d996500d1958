//! One page of a session's stored messages for the archive alone: a live
//! session is archived whole, its older pages fetched one at a time while
//! the servers are otherwise idle (the app asks for each, and only then).
//! The page is read and decoded off the async threads, and never reaches
//! the view.

use tokio::sync::mpsc;

use super::client::Client;
use crate::source::msg::SourceMsg;

/// Messages a page: a few requests for a long session, each small enough
/// that the server answers a viewer's request soon after.
pub const ARCHIVE_PAGE: usize = 500;

/// Fetch the page of `session` before `cursor` (`None`: the newest) and
/// answer with one `SourceMsg::ArchivePage`.
pub fn spawn(client: Client, tx: mpsc::Sender<SourceMsg>, session: String, cursor: Option<String>) {
    tokio::spawn(async move {
        let msg = match page(&client, &session, cursor.as_deref()).await {
            Ok((messages, next)) => SourceMsg::ArchivePage {
                session_id: session,
                messages,
                next,
                failed: None,
            },
            Err(why) => SourceMsg::ArchivePage {
                session_id: session,
                messages: Vec::new(),
                next: None,
                failed: Some(why),
            },
        };
        let _ = tx.send(msg).await;
    });
}

pub type Page = (
    Vec<(crate::model::MessageInfo, Vec<crate::model::Part>)>,
    Option<String>,
);

pub async fn page(client: &Client, session: &str, cursor: Option<&str>) -> Result<Page, String> {
    let head = client
        .page_head(session, ARCHIVE_PAGE, cursor)
        .await
        .map_err(|e| e.to_string())?;
    let next = head.older.clone();
    let (path, body) = head.body().await.map_err(|e| e.to_string())?;
    let messages = tokio::task::spawn_blocking(move || super::walk::decode_messages(&path, &body))
        .await
        .map_err(|e| e.to_string())??;
    Ok((messages, next))
}
