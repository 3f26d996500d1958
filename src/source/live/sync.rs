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

use super::client::{ApiError, Client, Page};
use super::paging::{Older, Paging};
use super::snapshot::{self, PAGE, PAGE_ALL};
use super::stream::{self, IDLE_TIMEOUT, StreamItem};
use super::walk::Walker;
use crate::model::Event;
use crate::source::decode::record::Decoded;
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::recording::recorder::Feed;

#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// `/global/event` (every project) instead of `/event`.
    pub all_projects: bool,
    /// Load every session's messages (all of them, page by page) and todos
    /// up front (headless dumps), not only the sessions the user opens.
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
    /// The user opened a session: load its newest messages and its todos (once).
    Open(String),
    /// The reader nears the oldest message loaded: load the page before it.
    /// Answered by exactly one `SourceMsg::Messages` with `older` set.
    Older(String),
    /// Every older page, back to the first message (`g`, a search): one
    /// `SourceMsg::Messages` with `older` set a page, the last `complete`
    /// (or empty, when a page failed).
    AllOlder(String),
    /// One page of a session for the archive alone, from `cursor` (`None`:
    /// the newest): answered by one `SourceMsg::ArchivePage`.
    ArchivePage {
        session: String,
        cursor: Option<String>,
    },
}

impl LiveCommand {
    /// The session it is about.
    pub fn session(&self) -> &str {
        match self {
            LiveCommand::Open(id) | LiveCommand::Older(id) | LiveCommand::AllOlder(id) => id,
            LiveCommand::ArchivePage { session, .. } => session,
        }
    }

    /// The same about session `id` (a fleet member's own id).
    pub fn for_session(self, id: String) -> LiveCommand {
        match self {
            LiveCommand::Open(_) => LiveCommand::Open(id),
            LiveCommand::Older(_) => LiveCommand::Older(id),
            LiveCommand::AllOlder(_) => LiveCommand::AllOlder(id),
            LiveCommand::ArchivePage { cursor, .. } => LiveCommand::ArchivePage {
                session: id,
                cursor,
            },
        }
    }
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
    /// Which sessions' turn ends were already finalised.
    turn_ends: TurnEnds,
    /// How far back each session's history is loaded (kept across
    /// reconnects), shared with whole-history walks.
    paging: Paging,
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
        turn_ends: TurnEnds::default(),
        paging: Paging::default(),
        record: raw,
    };
    let mut attempt = 0u32;
    // Tries in a row the server took and never answered.
    let mut unanswered = 0u32;
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
        let headers = stream::headers_wait(unanswered);
        let opened = stream::open(&sync.client, path, headers, sync.options.idle_timeout).await;
        unanswered = match &opened {
            Err(ApiError::Unanswered { .. }) => unanswered + 1,
            _ => 0,
        };
        let events = match opened {
            Ok(rx) => rx,
            Err(e @ (ApiError::Unauthorized { .. } | ApiError::PasswordMissing { .. })) => {
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
                        let loaded = |id: &str| {
                            self.options.load_all_messages || self.opened.contains(id)
                        };
                        let follow_up = self.turn_ends.follow_up(&record, loaded);
                        self.send(SourceMsg::Record(record)).await?;
                        match follow_up {
                            FollowUp::None => {}
                            FollowUp::Finalize(id) => self.load_newest(&id).await?,
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
                            self.load_newest(&id).await?;
                            self.load_todos(&id).await?;
                        }
                    }
                    Some(LiveCommand::Older(id)) => self.load_older(&id).await?,
                    Some(LiveCommand::AllOlder(id)) => Walker {
                        client: self.client.clone(),
                        paging: self.paging.clone(),
                        tx: self.tx.clone(),
                        record: self.record.clone(),
                    }
                    .spawn(id),
                    Some(LiveCommand::ArchivePage { session, cursor }) => {
                        super::archive_page::spawn(self.client.clone(), self.tx.clone(), session, cursor);
                    }
                },
            }
        }
    }

    /// Load everything a fresh attach shows and reconcile with it. The
    /// inner result is a REST failure (the connection is retried).
    async fn resync(&mut self) -> Result<Result<(), ApiError>, Stop> {
        let snap = match snapshot::load(&self.client, self.options.all_projects).await {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        for event in snap.wire {
            self.recording(|| Feed::Loaded(event));
        }
        // The sessions kept and the prompts settled below, as the
        // recording keeps them (a replay drops what the live view drops).
        self.recording(|| {
            Feed::Loaded(crate::model::store::reconcile::sessions_event(
                &snap.session_ids,
            ))
        });
        self.recording(|| {
            Feed::Loaded(crate::model::store::reconcile::pending_prompts_event(
                &snap.pending_prompts,
            ))
        });
        for env in snap.events {
            let record = crate::source::decode::apply::Record {
                line: 0,
                repaired: None,
                item: Ok(Decoded::Event(env)),
            };
            self.send(SourceMsg::Record(Box::new(record))).await?;
        }
        self.send(SourceMsg::Reconcile {
            server: None,
            sessions: snap.session_ids.clone(),
            pending_prompts: snap.pending_prompts,
        })
        .await?;
        if self.options.load_all_messages {
            self.opened.extend(snap.session_ids.iter().cloned());
        }
        self.opened.retain(|id| !id.is_empty());
        // Every opened session the server still has: its messages and its
        // todos, as a fresh attach would show them.
        let opened: Vec<String> = self
            .opened
            .iter()
            .filter(|id| snap.session_ids.contains(*id))
            .cloned()
            .collect();
        for id in opened {
            if self.options.load_all_messages {
                self.load_whole(&id).await?;
            } else {
                self.load_newest(&id).await?;
            }
            self.load_todos(&id).await?;
        }
        Ok(Ok(()))
    }

    fn page_size(&self) -> usize {
        if self.options.load_all_messages {
            PAGE_ALL
        } else {
            PAGE
        }
    }

    /// Load one page (recording it); a failure is a notice and `None`.
    async fn fetch(&self, session: &str, cursor: Option<&str>) -> Result<Option<Page>, Stop> {
        let mut answer = self.client.page(session, self.page_size(), cursor).await;
        if cursor.is_some() && answer.as_ref().is_err_and(|e| e.status() == Some(400)) {
            // A kept cursor the server no longer takes: from the newest
            // page again.
            self.paging.forget(session);
            answer = self.client.page(session, self.page_size(), None).await;
        }
        match answer {
            Ok(page) => {
                if self.record.is_some() {
                    for event in snapshot::message_events(&page.messages) {
                        self.recording(|| Feed::Loaded(event));
                    }
                }
                Ok(Some(page))
            }
            Err(e) => {
                self.send(SourceMsg::Notice(e.to_string())).await?;
                Ok(None)
            }
        }
    }

    async fn send_page(
        &self,
        session: &str,
        list: &[serde_json::Value],
        older: bool,
    ) -> Result<(), Stop> {
        self.send(SourceMsg::Messages {
            session_id: session.to_string(),
            messages: snapshot::messages(list),
            older,
            complete: self.paging.older(session) == Older::None,
        })
        .await
    }

    /// The newest page: it replaces what streamed, from its oldest message
    /// on. After a reconnect, the pages back to the newest message loaded
    /// before (what the gap may have brought); the older pages stay.
    async fn load_newest(&mut self, session: &str) -> Result<(), Stop> {
        let Some(page) = self.fetch(session, None).await? else {
            return Ok(());
        };
        let (mut list, mut older) = (page.messages, page.older);
        while let (Some(known), Some(cursor)) = (self.paging.newest(session), older.clone())
            && message_id(list.first()).is_some_and(|oldest| oldest > known.as_str())
        {
            let Some(page) = self.fetch(session, Some(&cursor)).await? else {
                break;
            };
            older = page.older;
            list.splice(0..0, page.messages);
        }
        self.paging
            .newest_loaded(session, older, message_id(list.last()));
        self.send_page(session, &list, false).await
    }

    /// The page before the oldest one loaded, through the server's cursor.
    /// Always answered, even when there is nothing (more) to load.
    async fn load_older(&mut self, session: &str) -> Result<(), Stop> {
        let cursor = match self.paging.older(session) {
            Older::None => return self.send_page(session, &[], true).await,
            Older::Unknown => None,
            Older::Cursor(c) => Some(c),
        };
        match self.fetch(session, cursor.as_deref()).await? {
            Some(page) => {
                self.paging.older_loaded(session, page.older);
                self.send_page(session, &page.messages, true).await
            }
            None => self.send_page(session, &[], true).await,
        }
    }

    /// Every message, page by page to the first one (headless dumps).
    async fn load_whole(&mut self, session: &str) -> Result<(), Stop> {
        // Each page typed as it comes: the parsed JSON of a whole session
        // is many times its size (issue 26: 460 MB for a 36 MB session).
        let mut pages: Vec<Vec<(crate::model::MessageInfo, Vec<crate::model::Part>)>> = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let Some(page) = self.fetch(session, cursor.as_deref()).await? else {
                break;
            };
            if pages.is_empty() {
                let newest = message_id(page.messages.last());
                self.paging
                    .newest_loaded(session, page.older.clone(), newest);
            } else {
                self.paging.older_loaded(session, page.older.clone());
            }
            pages.push(snapshot::messages(&page.messages));
            match page.older {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        if pages.is_empty() {
            return Ok(());
        }
        let mut messages: Vec<_> = pages.into_iter().rev().flatten().collect();
        // Stable, as `snapshot::messages` sorts a single list.
        messages.sort_by(|a, b| a.0.id.cmp(&b.0.id));
        self.send(SourceMsg::Messages {
            session_id: session.to_string(),
            messages,
            older: false,
            complete: self.paging.older(session) == Older::None,
        })
        .await
    }

    /// A session's todos, as the event that says the same (recorded too).
    async fn load_todos(&self, session: &str) -> Result<(), Stop> {
        match self.client.todos(session).await {
            Ok(todos) => {
                let props = serde_json::json!({"sessionID": session, "todos": todos});
                self.recording(|| Feed::Loaded(snapshot::wire("todo.updated", &props, None)));
                if let Some(env) = snapshot::event("todo.updated", props) {
                    let record = crate::source::decode::apply::Record {
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

/// A page item's message id.
fn message_id(m: Option<&serde_json::Value>) -> Option<&str> {
    m?.get("info")?.get("id")?.as_str()
}

enum FollowUp {
    None,
    /// A session went idle: replace its streamed parts by the stored ones.
    Finalize(String),
    /// The server's instance restarted: load everything again.
    Resync,
}

/// Turn ends already finalised. OpenCode 1.18 says a turn ended twice
/// (`session.idle` and `session.status` idle): its stored messages are
/// fetched once, and only for a session whose messages are loaded (the
/// others show nothing that could be replaced).
#[derive(Default)]
struct TurnEnds {
    /// Sessions finalised since their last activity.
    finalised: HashSet<String>,
}

impl TurnEnds {
    fn follow_up(
        &mut self,
        record: &crate::source::decode::apply::Record,
        loaded: impl Fn(&str) -> bool,
    ) -> FollowUp {
        let Ok(Decoded::Event(env)) = &record.item else {
            return FollowUp::None;
        };
        match &env.event {
            Event::SessionIdle { session_id }
            | Event::SessionStatus {
                session_id,
                status: crate::model::SessionStatus::Idle,
            } => {
                if loaded(session_id) && self.finalised.insert(session_id.clone()) {
                    FollowUp::Finalize(session_id.clone())
                } else {
                    FollowUp::None
                }
            }
            Event::InstanceDisposed => {
                self.finalised.clear();
                FollowUp::Resync
            }
            // A new turn or new content: its end is finalised again.
            event @ (Event::SessionStatus { .. }
            | Event::MessageUpdated(_)
            | Event::MessageRemoved { .. }
            | Event::PartUpdated(_)
            | Event::PartRemoved { .. }
            | Event::PartDelta { .. }) => {
                if let Some(id) = event.session_id() {
                    self.finalised.remove(id);
                }
                FollowUp::None
            }
            _ => FollowUp::None,
        }
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
