//! The live source for a fleet: one connection per server, each with its own
//! reconnect and resync (the one-server live source, unchanged), their
//! messages scoped by server on the way in and the app's requests routed to
//! the right server on the way out.
//!
//! Every server runs in tasks of its own and reaches the app through a
//! forwarder that only rewrites ids, so a slow, dead or hostile server
//! delays nobody else. Its state changes become `ocview.server` events:
//! they go through the reducer, and into a recording, like any other.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::model::store::fleet::{self, ServerReport, ServerState};
use crate::model::{Envelope, Event};
use crate::source::decode::apply::Record;
use crate::source::decode::record::Decoded;
use crate::source::live::reply::{self, Reply};
use crate::source::live::{self, Client, LiveCommand, LiveOptions};
use crate::source::msg::ReplyOutcome;
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::recording::recorder::Feed;

/// One server to watch.
#[derive(Debug, Clone)]
pub struct FleetServer {
    /// How the fleet names it: unique, short (`host:port`, or the config's name).
    pub key: String,
    pub client: Client,
    pub options: LiveOptions,
    /// Its project directory, when discovery knows it.
    pub directory: Option<String>,
}

/// What the watcher (or the user) tells a running fleet.
#[derive(Debug)]
pub enum Control {
    /// A server to watch; one already watched (and not gone) is left alone.
    Join(FleetServer),
    /// The server is not there any more: stop watching it, mark it gone.
    Gone(String),
}

/// A running fleet: the app's ends of it.
pub struct FleetHandle {
    /// The app's page and open requests, routed by the session's server.
    pub commands: mpsc::UnboundedSender<LiveCommand>,
    /// The app's answers, routed by the request's server (`None`: read-only).
    pub replies: Option<mpsc::UnboundedSender<Reply>>,
    pub control: mpsc::UnboundedSender<Control>,
}

/// Start watching `servers`; more join through `FleetHandle::control`.
/// What they receive also goes to `record`, each line naming its server.
pub fn spawn(
    servers: Vec<FleetServer>,
    tx: mpsc::Sender<SourceMsg>,
    read_only: bool,
    record: Option<mpsc::UnboundedSender<Feed>>,
) -> FleetHandle {
    let (commands, command_rx) = mpsc::unbounded_channel();
    let (reply_tx, reply_rx) = mpsc::unbounded_channel();
    let (control, control_rx) = mpsc::unbounded_channel();
    for server in servers {
        let _ = control.send(Control::Join(server));
    }
    let supervisor = Supervisor {
        tx,
        read_only,
        record,
        running: HashMap::new(),
    };
    tokio::spawn(supervisor.run(command_rx, reply_rx, control_rx));
    FleetHandle {
        commands,
        replies: (!read_only).then_some(reply_tx),
        control,
    }
}

/// One server being watched.
struct Running {
    commands: mpsc::UnboundedSender<LiveCommand>,
    replies: Option<mpsc::UnboundedSender<Reply>>,
    /// The forwarder: aborting it ends the server's tasks (their next send fails).
    forwarder: JoinHandle<()>,
    url: String,
    directory: Option<String>,
}

struct Supervisor {
    tx: mpsc::Sender<SourceMsg>,
    read_only: bool,
    record: Option<mpsc::UnboundedSender<Feed>>,
    running: HashMap<String, Running>,
}

impl Supervisor {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<LiveCommand>,
        mut replies: mpsc::UnboundedReceiver<Reply>,
        mut control: mpsc::UnboundedReceiver<Control>,
    ) {
        // A closed replies channel (read-only: the app holds no sender) or
        // control channel is switched off, never awaited in an arm: that
        // would stop the loop for every server.
        let (mut replies_open, mut control_open) = (true, true);
        loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.route_command(cmd).await,
                    None => return,
                },
                reply = replies.recv(), if replies_open => match reply {
                    Some(reply) => self.route_reply(reply).await,
                    None => replies_open = false,
                },
                ctl = control.recv(), if control_open => match ctl {
                    Some(Control::Join(server)) => self.join(server),
                    Some(Control::Gone(key)) => self.gone(&key).await,
                    None => control_open = false,
                },
            }
            if self.tx.is_closed() {
                return;
            }
        }
    }

    fn join(&mut self, server: FleetServer) {
        if self
            .running
            .get(&server.key)
            .is_some_and(|r| !r.forwarder.is_finished())
        {
            return;
        }
        let key: Arc<str> = server.key.as_str().into();
        let (inner_tx, inner_rx) = mpsc::channel(1024);
        let raw = self.record.clone().map(|record| {
            let (raw_tx, mut raw_rx) = mpsc::unbounded_channel::<Feed>();
            let key = key.clone();
            tokio::spawn(async move {
                while let Some(feed) = raw_rx.recv().await {
                    if record
                        .send(Feed::From(key.clone(), Box::new(feed)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
            raw_tx
        });
        let url = server.client.base().to_string();
        // Said here, in the order servers join, so the list keeps that
        // order whichever server answers first.
        let joined = report(
            &key,
            &url,
            server.directory.as_deref(),
            ServerState::Connecting,
        );
        record_report(self.record.as_ref(), &key, &joined);
        let _ = self.tx.try_send(report_msg(joined));
        let replies =
            (!self.read_only).then(|| reply::spawn(server.client.clone(), inner_tx.clone()));
        let commands = live::spawn(server.client, server.options, inner_tx, raw);
        let forwarder = Forwarder {
            key: key.clone(),
            url: url.clone(),
            directory: server.directory.clone(),
            tx: self.tx.clone(),
            record: self.record.clone(),
        };
        let forwarder = tokio::spawn(forwarder.run(inner_rx));
        tracing::info!("fleet: watching {url} as {key}");
        self.running.insert(
            server.key,
            Running {
                commands,
                replies,
                forwarder,
                url,
                directory: server.directory,
            },
        );
    }

    async fn gone(&mut self, key: &str) {
        // Removed, not kept: replies to it fail at once, and a server that
        // comes back on the same address joins afresh.
        let Some(running) = self.running.remove(key) else {
            return;
        };
        running.forwarder.abort();
        tracing::info!("fleet: {} is gone", running.url);
        let report = report(
            key,
            &running.url,
            running.directory.as_deref(),
            ServerState::Gone,
        );
        record_report(self.record.as_ref(), key, &report);
        let _ = self.tx.send(report_msg(report)).await;
    }

    /// The running server a scoped id belongs to, and the id it knows.
    fn target<'a>(&self, id: &'a str) -> Option<(&Running, &'a str)> {
        let key = fleet::server_of(id)?;
        let running = self
            .running
            .get(key)
            .filter(|r| !r.forwarder.is_finished())?;
        Some((running, fleet::bare(id)))
    }

    async fn route_command(&self, cmd: LiveCommand) {
        if let Some((running, bare)) = self.target(cmd.session())
            && running
                .commands
                .send(cmd.clone().for_session(bare.to_string()))
                .is_ok()
        {
            return;
        }
        if let LiveCommand::ArchivePage { session, .. } = cmd {
            let _ = self
                .tx
                .send(SourceMsg::ArchivePage {
                    session_id: session,
                    messages: Vec::new(),
                    next: None,
                    failed: Some("its server is not connected".into()),
                })
                .await;
            return;
        }
        // An older page is always answered: the app waits for it.
        if let LiveCommand::Older(id) | LiveCommand::AllOlder(id) = cmd {
            let _ = self
                .tx
                .send(SourceMsg::Messages {
                    session_id: id,
                    messages: Vec::new(),
                    older: true,
                    complete: true,
                })
                .await;
        }
    }

    async fn route_reply(&self, reply: Reply) {
        let id = reply.request_id().to_string();
        if let Some((running, _)) = self.target(&id)
            && let Some(replies) = &running.replies
            && replies.send(unscope_reply(reply.clone())).is_ok()
        {
            return;
        }
        let outcome = ReplyOutcome::Failed("its server is not connected".into());
        let msg = match reply {
            Reply::Abort { session_id, .. } => SourceMsg::Aborted {
                session_id,
                outcome,
            },
            _ => SourceMsg::Replied {
                request_id: id,
                outcome,
            },
        };
        let _ = self.tx.send(msg).await;
    }
}

/// A reply with the ids its server knows.
fn unscope_reply(reply: Reply) -> Reply {
    let bare = |id: String| fleet::bare(&id).to_string();
    match reply {
        Reply::Permission {
            request_id,
            reply,
            message,
        } => Reply::Permission {
            request_id: bare(request_id),
            reply,
            message,
        },
        Reply::Answer {
            request_id,
            answers,
        } => Reply::Answer {
            request_id: bare(request_id),
            answers,
        },
        Reply::Dismiss { request_id } => Reply::Dismiss {
            request_id: bare(request_id),
        },
        Reply::Abort {
            session_id,
            directory,
        } => Reply::Abort {
            session_id: bare(session_id),
            directory,
        },
    }
}

fn report(key: &str, url: &str, directory: Option<&str>, state: ServerState) -> ServerReport {
    ServerReport {
        key: key.to_string(),
        url: url.to_string(),
        directory: directory.map(str::to_string),
        state,
    }
}

fn report_msg(report: ServerReport) -> SourceMsg {
    SourceMsg::Record(Box::new(Record {
        line: 0,
        repaired: None,
        item: Ok(Decoded::Event(Envelope::new(Event::Server(Box::new(
            report,
        ))))),
    }))
}

/// A state change goes into the recording as the event that says it.
fn record_report(record: Option<&mpsc::UnboundedSender<Feed>>, key: &str, report: &ServerReport) {
    if let Some(record) = record {
        let props =
            ServerReport::properties(&report.url, report.directory.as_deref(), &report.state);
        let event = serde_json::json!({"type": fleet::SERVER_EVENT, "properties": props});
        let _ = record.send(Feed::From(key.into(), Box::new(Feed::Loaded(event))));
    }
}

/// Carries one server's messages to the app, its ids scoped.
struct Forwarder {
    key: Arc<str>,
    url: String,
    directory: Option<String>,
    tx: mpsc::Sender<SourceMsg>,
    record: Option<mpsc::UnboundedSender<Feed>>,
}

impl Forwarder {
    async fn run(self, mut rx: mpsc::Receiver<SourceMsg>) {
        while let Some(msg) = rx.recv().await {
            let msg = match msg {
                SourceMsg::State(state) => {
                    let state = server_state(state);
                    let report = report(&self.key, &self.url, self.directory.as_deref(), state);
                    record_report(self.record.as_ref(), &self.key, &report);
                    report_msg(report)
                }
                other => scope_msg(other, &self.key),
            };
            if self.tx.send(msg).await.is_err() {
                return;
            }
        }
    }
}

/// A one-server source's state, as a fleet server's.
fn server_state(state: SourceState) -> ServerState {
    match state {
        SourceState::Live => ServerState::Live,
        SourceState::Reconnecting { attempt, reason } => {
            ServerState::Reconnecting { attempt, reason }
        }
        // The live source fails for good only when the password is refused
        // or missing.
        SourceState::Failed(reason) => ServerState::AuthFailed { reason },
        SourceState::Ended => ServerState::Gone,
        SourceState::Connecting | SourceState::Indexing | SourceState::Playing => {
            ServerState::Connecting
        }
    }
}

/// A server's message with every session and request id scoped by `key`.
/// A page's messages and parts as the fleet names them.
fn scope_page(messages: &mut [(crate::model::MessageInfo, Vec<crate::model::Part>)], key: &str) {
    for (info, parts) in messages {
        info.session_id = fleet::scoped(&info.session_id, key);
        for part in parts {
            part.session_id = fleet::scoped(&part.session_id, key);
        }
    }
}

pub fn scope_msg(msg: SourceMsg, key: &str) -> SourceMsg {
    let scoped = |id: &str| fleet::scoped(id, key);
    match msg {
        SourceMsg::Record(mut record) => {
            match &mut record.item {
                Ok(Decoded::Event(env)) => fleet::scope_event(&mut env.event, key),
                Err(e) => e.server = Some(key.to_string()),
                Ok(_) => {}
            }
            SourceMsg::Record(record)
        }
        SourceMsg::Messages {
            session_id,
            mut messages,
            older,
            complete,
        } => {
            scope_page(&mut messages, key);
            SourceMsg::Messages {
                session_id: scoped(&session_id),
                messages,
                older,
                complete,
            }
        }
        SourceMsg::ArchivePage {
            session_id,
            mut messages,
            next,
            failed,
        } => {
            scope_page(&mut messages, key);
            SourceMsg::ArchivePage {
                session_id: scoped(&session_id),
                messages,
                next,
                failed,
            }
        }
        SourceMsg::Reconcile {
            sessions,
            pending_prompts,
            ..
        } => SourceMsg::Reconcile {
            server: Some(key.to_string()),
            sessions: sessions.iter().map(|id| scoped(id)).collect(),
            pending_prompts: pending_prompts.iter().map(|id| scoped(id)).collect(),
        },
        SourceMsg::Notice(text) => SourceMsg::Notice(format!("{key}: {text}")),
        SourceMsg::Aborted {
            session_id,
            outcome,
        } => SourceMsg::Aborted {
            session_id: scoped(&session_id),
            outcome,
        },
        SourceMsg::Replied {
            request_id,
            outcome,
        } => SourceMsg::Replied {
            request_id: scoped(&request_id),
            outcome,
        },
        other => other,
    }
}

/// The key a server is known by in the fleet: `host:port` of its URL.
pub fn key_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    authority.to_string()
}

/// Keys made unique: a second `box:4096` becomes `box:4096#2`.
pub fn unique_keys(keys: &mut [String]) {
    let mut seen: HashMap<String, u32> = HashMap::new();
    for key in keys.iter_mut() {
        let n = seen.entry(key.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            *key = format!("{key}#{n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_authority_and_unique() {
        assert_eq!(key_of("http://127.0.0.1:4096"), "127.0.0.1:4096");
        assert_eq!(key_of("https://u@box:1/x"), "box:1");
        let mut keys = vec!["a:1".to_string(), "b:1".into(), "a:1".into()];
        unique_keys(&mut keys);
        assert_eq!(keys, ["a:1", "b:1", "a:1#2"]);
    }

    #[test]
    fn a_servers_messages_are_scoped_and_its_replies_unscoped() {
        let msg = SourceMsg::Reconcile {
            server: None,
            sessions: ["ses_1".to_string()].into(),
            pending_prompts: ["per_1".to_string()].into(),
        };
        let SourceMsg::Reconcile {
            server,
            sessions,
            pending_prompts,
        } = scope_msg(msg, "h:1")
        else {
            panic!()
        };
        assert_eq!(server.as_deref(), Some("h:1"));
        assert!(sessions.contains("ses_1@h:1"));
        assert!(pending_prompts.contains("per_1@h:1"));
        let reply = unscope_reply(Reply::Permission {
            request_id: "per_1@h:1".into(),
            reply: "once".into(),
            message: None,
        });
        assert_eq!(reply.request_id(), "per_1");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_server_joins_read_only_too() {
        // Nothing listens on port 1: each server only says it is connecting.
        let servers: Vec<FleetServer> = (0..3)
            .map(|n| FleetServer {
                key: format!("s{n}"),
                client: Client::new("http://127.0.0.1:1", None),
                options: LiveOptions::default(),
                directory: None,
            })
            .collect();
        let (tx, mut rx) = mpsc::channel(64);
        let _handle = spawn(servers, tx, true, None);
        let mut joined = Vec::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while joined.len() < 3 {
            let msg = tokio::time::timeout_at(deadline, rx.recv())
                .await
                .unwrap_or_else(|_| panic!("only {joined:?} joined"))
                .unwrap();
            if let SourceMsg::Record(record) = msg
                && let Ok(Decoded::Event(env)) = record.item
                && let Event::Server(report) = env.event
                && !joined.contains(&report.key)
            {
                joined.push(report.key);
            }
        }
        // In the order given, whichever answers first.
        assert_eq!(joined, ["s0", "s1", "s2"]);
    }
}
