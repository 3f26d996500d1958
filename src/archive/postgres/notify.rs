//! A team's archive says what it was just given: every write to PostgreSQL
//! NOTIFYs `ocview_archive` with each session it touched and the origin it
//! came from, in the write's own transaction (PostgreSQL delivers it on
//! commit, never for a batch rolled back). Every reader LISTENs on a
//! connection of its own (`listen`) and re-reads just those sessions' rows:
//! a session a teammate archives is in everyone's list within a second.
//! The connection is made again when it drops, and the reader catches up
//! on what it missed meanwhile (`Heard::Connected`).
//!
//! SQLite (one machine) has no NOTIFY: its reader asks `PRAGMA
//! data_version` every few seconds instead (`super::list_reader`).

pub use crate::archive::listing::Heard;
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use crate::archive::rows::Batch;

/// The channel writers notify and readers listen on.
pub const CHANNEL: &str = "ocview_archive";

/// More sessions than this in one batch (an import): one "read what is
/// new" instead of a notification each (a payload is at most 8000 bytes,
/// and a reader would read them one by one).
const MANY: usize = 32;

/// Notify the sessions `batch` touched, inside the write's transaction.
pub(in crate::archive) async fn announce(
    tx: &tokio_postgres::Transaction<'_>,
    batch: &Batch,
) -> Result<(), tokio_postgres::Error> {
    let ids: BTreeSet<&str> = batch
        .sessions
        .iter()
        .map(|s| s.id.as_str())
        .chain(batch.events.iter().map(|e| e.session_id.as_str()))
        .chain(batch.messages.iter().map(|m| m.session_id.as_str()))
        .chain(batch.parts.iter().map(|p| p.session_id.as_str()))
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let o = &batch.origin;
    let payloads: Vec<String> = if ids.len() > MANY {
        vec![json!({"many": ids.len(), "host": o.host}).to_string()]
    } else {
        ids.iter()
            .map(|id| {
                json!({"session": id, "host": o.host, "server": o.server, "file": o.file})
                    .to_string()
            })
            .filter(|p| p.len() < 7900)
            .collect()
    };
    for payload in payloads {
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .await?;
    }
    Ok(())
}

/// The session a payload names, or `Many` (anything else too: a payload
/// of a future version still says something was written).
pub fn parse(payload: &str) -> Heard {
    let value: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    match value.get("session").and_then(|s| s.as_str()) {
        Some(id) => Heard::Session(id.to_string()),
        None => Heard::Many,
    }
}

/// How long after a drop the connection is made again, at most: a
/// teammate's session is in the list within a second of PostgreSQL coming
/// back (a refused connection costs next to nothing).
pub const RETRY_MAX: Duration = Duration::from_secs(1);

/// Listen on the archive at `url` on a thread of its own, until `heard`
/// returns false (its reader is gone).
pub fn listen(url: String, heard: Box<dyn Fn(Heard) -> bool + Send>) {
    let spawned = std::thread::Builder::new()
        .name("archive-listen".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return tracing::warn!("archive listen: {e}"),
            };
            rt.block_on(run(&url, &*heard));
        });
    if let Err(e) = spawned {
        tracing::warn!("archive: no listening thread: {e}");
    }
}

async fn run(url: &str, heard: &dyn Fn(Heard) -> bool) {
    let place = crate::archive::postgres::url::redact(url);
    let mut wait = Duration::from_millis(250);
    loop {
        let why = match listen_once(url, heard).await {
            Ok(Stop::ReaderGone) => return,
            Ok(Stop::Dropped(why)) => {
                wait = Duration::from_millis(250);
                why
            }
            Err(why) => why,
        };
        tracing::info!("archive {place}: listening stopped: {why}");
        if !heard(Heard::Lost(why)) {
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RETRY_MAX);
    }
}

enum Stop {
    ReaderGone,
    Dropped(String),
}

async fn listen_once(url: &str, heard: &dyn Fn(Heard) -> bool) -> Result<Stop, String> {
    let connect = crate::archive::postgres::config(url).map_err(|e| e.message)?;
    let (client, mut connection) = connect
        .config
        .connect(connect.tls)
        .await
        .map_err(|e| e.to_string())?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // The connection is driven here; notifications come out of it.
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        use futures_util::StreamExt;
        while let Some(message) = messages.next().await {
            match message {
                Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                    if tx.send(Ok(n.payload().to_string())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            }
        }
        let _ = tx.send(Err("the server closed the connection".into()));
    });
    client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await
        .map_err(|e| e.to_string())?;
    if !heard(Heard::Connected) {
        driver.abort();
        return Ok(Stop::ReaderGone);
    }
    let stop = loop {
        match rx.recv().await {
            Some(Ok(payload)) => {
                if !heard(parse(&payload)) {
                    break Stop::ReaderGone;
                }
            }
            Some(Err(why)) => break Stop::Dropped(why),
            None => break Stop::Dropped("the connection ended".into()),
        }
    };
    driver.abort();
    drop(client);
    Ok(stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_name_a_session_or_many() {
        assert_eq!(
            parse(r#"{"session":"ses_1","host":"box","server":null,"file":null}"#),
            Heard::Session("ses_1".into())
        );
        assert_eq!(parse(r#"{"many":40,"host":"box"}"#), Heard::Many);
        assert_eq!(parse("not json"), Heard::Many);
    }
}
