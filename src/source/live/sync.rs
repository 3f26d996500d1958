//! Staying in sync with a live server.
//!
//! Start without gaps: subscribe first (events queue up), load the snapshot
//! over REST, send it, then the queued events (the reducer is idempotent by
//! id, so overlap is harmless). The server's stream has no replay, so every
//! reconnect (and `server.instance.disposed`) is a gap filled the same way,
//! then reconciled by id. When a session goes idle its stored messages
//! replace the streamed ones (seed 000's finalisation).

use std::collections::HashSet;
use std::time::Duration;

use tokio::sync::mpsc;

use super::client::{ApiError, Client};
use super::snapshot::{self, PAGE};
use super::stream::{self, IDLE_TIMEOUT, StreamItem};
use crate::model::Event;
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::record::Decoded;
use crate::source::recorder::Feed;

#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// `/global/event` (every project) instead of `/event`.
    pub all_projects: bool,
    /// Load every session's messages up front (headless dumps), not only
    /// the sessions the user opens.
    pub load_all_messages: bool,
    /// No bytes for this long means the stream is dead.
    pub idle_timeout: Duration,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            all_projects: false,
            load_all_messages: false,
            idle_timeout: IDLE_TIMEOUT,
        }
    }
}

/// What the app asks of the live source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveCommand {
    /// The user opened a session: load its newest messages (once).
    Open(String),
    /// The user scrolled to the top: load the page before this message.
    Older { session: String, before: String },
}

/// The backoff before reconnect attempt `n` (1-based): 250 ms doubling to
/// 5 s, with ±20 % jitter so many viewers do not reconnect in step.
pub fn backoff(attempt: u32, jitter_seed: u64) -> Duration {
    let base = 250u64
        .saturating_mul(1 << attempt.saturating_sub(1).min(10))
        .min(5_000);
    let spread = base / 5;
    let jitter = if spread == 0 {
        0
    } else {
        jitter_seed % (2 * spread + 1)
    };
    Duration::from_millis(base - spread + jitter)
}

fn jitter_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(7)
}

/// Start syncing with the server; the app's commands come back on the
/// returned sender. What it receives also goes to `raw`, when given (recording).
pub fn spawn(
    client: Client,
    options: LiveOptions,
    tx: mpsc::Sender<SourceMsg>,
    raw: Option<mpsc::UnboundedSender<Feed>>,
) -> mpsc::UnboundedSender<LiveCommand> {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    tokio::spawn(run(client, options, tx, cmd_rx, raw));
    cmd_tx
}

struct Sync {
    client: Client,
    options: LiveOptions,
    tx: mpsc::Sender<SourceMsg>,
    /// Sessions whose messages are loaded (and kept up to date).
    opened: HashSet<String>,
    /// The recorder, when recording.
    record: Option<mpsc::UnboundedSender<Feed>>,
}

async fn run(
    client: Client,
    options: LiveOptions,
    tx: mpsc::Sender<SourceMsg>,
    mut commands: mpsc::UnboundedReceiver<LiveCommand>,
    raw: Option<mpsc::UnboundedSender<Feed>>,
) {
    let path = if options.all_projects {
        "/global/event"
    } else {
        "/event"
    };
    let mut sync = Sync {
        client,
        options,
        tx,
        opened: HashSet::new(),
        record: raw,
    };
    let mut attempt = 0u32;
    let mut reason = String::new();
    loop {
        let state = if attempt == 0 {
            SourceState::Connecting
        } else {
            SourceState::Reconnecting {
                attempt,
                reason: reason.clone(),
            }
        };
        if sync.tx.send(SourceMsg::State(state)).await.is_err() {
            return;
        }
        let events = match stream::open(&sync.client, path, sync.options.idle_timeout).await {
            Ok(rx) => rx,
            Err(e @ ApiError::Unauthorized { .. }) => {
                // Retrying cannot help: say so and stop.
                let _ = sync
                    .tx
                    .send(SourceMsg::State(SourceState::Failed(e.to_string())))
                    .await;
                return;
            }
            Err(e) => {
                attempt += 1;
                reason = e.to_string();
                tracing::info!("connect failed (attempt {attempt}): {reason}");
                tokio::time::sleep(backoff(attempt, jitter_seed())).await;
                continue;
            }
        };
        match sync.session(events, &mut commands).await {
            Ok(why) => {
                reason = why;
                attempt = 1;
            }
            Err(Stop) => return,
        }
        tracing::info!("stream ended: {reason}");
        tokio::time::sleep(backoff(attempt, jitter_seed())).await;
    }
}

/// The app is gone: stop.
struct Stop;

impl Sync {
    async fn send(&self, msg: SourceMsg) -> Result<(), Stop> {
        self.tx.send(msg).await.map_err(|_| Stop)
    }

    /// Hand the recorder what `feed` makes, when recording (a recorder
    /// that stopped has logged why).
    fn recording(&self, feed: impl FnOnce() -> Feed) {
        if let Some(record) = &self.record {
            let _ = record.send(feed());
        }
    }

    /// One connection's life: snapshot, then the stream. Returns why it ended.
    async fn session(
        &mut self,
        mut events: mpsc::UnboundedReceiver<StreamItem>,
        commands: &mut mpsc::UnboundedReceiver<LiveCommand>,
    ) -> Result<String, Stop> {
        self.recording(|| Feed::Connected);
        if let Err(e) = self.resync().await? {
            return Ok(e.to_string());
        }
        self.send(SourceMsg::State(SourceState::Live)).await?;
        loop {
            tokio::select! {
                item = events.recv() => match item {
                    None => return Ok("the stream ended".into()),
                    Some(StreamItem::Closed(why)) => return Ok(why),
                    Some(StreamItem::Bytes(b)) => self.recording(|| Feed::Stream(b)),
                    Some(StreamItem::Record(record)) => {
                        let follow_up = follow_up(&record);
                        self.send(SourceMsg::Record(record)).await?;
                        match follow_up {
                            FollowUp::None => {}
                            FollowUp::Finalize(id) => self.load_messages(&id, None).await?,
                            FollowUp::Resync => {
                                if let Err(e) = self.resync().await? {
                                    return Ok(e.to_string());
                                }
                            }
                        }
                    }
                },
                cmd = commands.recv() => match cmd {
                    None => return Err(Stop),
                    Some(LiveCommand::Open(id)) => {
                        if self.opened.insert(id.clone()) {
                            self.load_messages(&id, None).await?;
                            self.load_todos(&id).await?;
                        }
                    }
                    Some(LiveCommand::Older { session, before }) => self.load_messages(&session, Some(&before)).await?,
                },
            }
        }
    }

    /// Load everything a fresh attach shows and reconcile with it. The
    /// inner result is a REST failure (the connection is retried).
    async fn resync(&mut self) -> Result<Result<(), ApiError>, Stop> {
        let snap = match snapshot::load(&self.client, &self.opened, self.options.all_projects).await
        {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        for event in snap.wire {
            self.recording(|| Feed::Loaded(event));
        }
        for env in snap.events {
            let record = crate::source::replay::Record {
                line: 0,
                repaired: None,
                item: Ok(Decoded::Event(env)),
            };
            self.send(SourceMsg::Record(Box::new(record))).await?;
        }
        self.send(SourceMsg::Reconcile {
            sessions: snap.session_ids.clone(),
            pending_prompts: snap.pending_prompts,
        })
        .await?;
        if self.options.load_all_messages {
            self.opened.extend(snap.session_ids);
        }
        self.opened.retain(|id| !id.is_empty());
        let opened: Vec<String> = self.opened.iter().cloned().collect();
        for id in opened {
            self.load_messages(&id, None).await?;
        }
        Ok(Ok(()))
    }

    async fn load_messages(&self, session: &str, before: Option<&str>) -> Result<(), Stop> {
        let limit = if self.options.load_all_messages {
            10_000
        } else {
            PAGE
        };
        match self.client.messages(session, limit, before).await {
            Ok(list) => {
                if self.record.is_some() {
                    for event in snapshot::message_events(&list) {
                        self.recording(|| Feed::Loaded(event));
                    }
                }
                let messages = snapshot::messages(&list);
                self.send(SourceMsg::Messages {
                    session_id: session.to_string(),
                    messages,
                    before: before.map(str::to_string),
                })
                .await
            }
            Err(e) => self.send(SourceMsg::Notice(e.to_string())).await,
        }
    }

    async fn load_todos(&self, session: &str) -> Result<(), Stop> {
        match self.client.todos(session).await {
            Ok(todos) => {
                let props = serde_json::json!({"sessionID": session, "todos": todos});
                self.recording(|| Feed::Loaded(snapshot::wire("todo.updated", &props, None)));
                if let Some(env) = snapshot::event("todo.updated", props) {
                    let record = crate::source::replay::Record {
                        line: 0,
                        repaired: None,
                        item: Ok(Decoded::Event(env)),
                    };
                    self.send(SourceMsg::Record(Box::new(record))).await?;
                }
                Ok(())
            }
            Err(e) => self.send(SourceMsg::Notice(e.to_string())).await,
        }
    }
}

enum FollowUp {
    None,
    /// A session went idle: replace its streamed parts by the stored ones.
    Finalize(String),
    /// The server's instance restarted: load everything again.
    Resync,
}

fn follow_up(record: &crate::source::replay::Record) -> FollowUp {
    let Ok(Decoded::Event(env)) = &record.item else {
        return FollowUp::None;
    };
    match &env.event {
        Event::SessionIdle { session_id } => FollowUp::Finalize(session_id.clone()),
        Event::SessionStatus {
            session_id,
            status: crate::model::SessionStatus::Idle,
        } => FollowUp::Finalize(session_id.clone()),
        Event::InstanceDisposed => FollowUp::Resync,
        _ => FollowUp::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_250ms_to_5s_with_jitter() {
        let ms = |n, seed| backoff(n, seed).as_millis();
        assert_eq!(ms(1, 0), 200);
        assert_eq!(ms(1, 50), 250);
        assert_eq!(ms(1, 100), 300);
        assert_eq!(ms(2, 100), 500);
        assert_eq!(ms(5, 800), 4_000);
        for n in 6..40 {
            assert!((4_000..=6_000).contains(&ms(n, 123_456)), "{n}");
        }
    }
}
