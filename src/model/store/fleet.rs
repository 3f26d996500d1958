//! A fleet: the sessions of several servers in one store.
//!
//! Two servers can hold sessions (and requests) with the same id: servers
//! on one machine share opencode's storage. So in a fleet every session and
//! request id is scoped by the server it came from, `ses_x@key`, when the
//! event enters (a fleet source, or a recording line that names its
//! server), and unscoped again only when a request goes back to that server.
//! Everything between (the reducer, the views, the search) sees plain,
//! unique ids. A one-server source leaves ids as they are.

pub use crate::model::entity::server::{ServerReport, ServerState};
use crate::model::wire::event::Event;
pub use crate::model::wire::own::SERVER_EVENT;

/// What separates an id from its server's key. Session and request ids
/// never hold one.
const MARK: char = '@';

/// `id` as it is known in a fleet, from the server `key`.
pub fn scoped(id: &str, key: &str) -> String {
    let mut s = String::with_capacity(id.len() + 1 + key.len());
    s.push_str(id);
    s.push(MARK);
    s.push_str(key);
    s
}

/// The server a scoped id came from (`None` outside a fleet).
pub fn server_of(id: &str) -> Option<&str> {
    id.rsplit_once(MARK).map(|(_, key)| key)
}

/// The id as its server knows it.
pub fn bare(id: &str) -> &str {
    id.rsplit_once(MARK).map_or(id, |(id, _)| id)
}

/// An id the server of `reference` sent inside a payload (a task's child
/// session), scoped as `reference` is.
pub fn like(reference: &str, id: &str) -> String {
    match server_of(reference) {
        Some(key) if server_of(id).is_none() => scoped(id, key),
        _ => id.to_string(),
    }
}

fn scope(id: &mut String, key: &str) {
    if !id.is_empty() {
        *id = scoped(id, key);
    }
}

/// Scope every session and request id an event carries, for the server
/// `key`; a server report learns its key.
pub fn scope_event(event: &mut Event, key: &str) {
    each_id(event, &mut |id| scope(id, key));
    match event {
        Event::Server(report) => report.key = key.to_string(),
        Event::PendingPrompts { server, .. } | Event::SessionList { server, .. } => {
            *server = Some(key.to_string());
        }
        _ => {}
    }
}

/// Every session and request id an event carries as its server knows it:
/// the archive keeps a session under its own id, wherever it came from.
pub fn unscope_event(event: &mut Event) {
    each_id(event, &mut |id| {
        if let Some((own, _)) = id.rsplit_once(MARK) {
            id.truncate(own.len());
        }
    });
}

/// Each session and request id an event carries, given to `f`.
fn each_id(event: &mut Event, f: &mut dyn FnMut(&mut String)) {
    if let Some(session_id) = event.session_id_mut() {
        f(session_id);
    }
    match event {
        Event::SessionCreated(info) | Event::SessionUpdated(info) | Event::SessionDeleted(info) => {
            f(&mut info.id);
            if let Some(parent) = &mut info.parent_id {
                f(parent);
            }
        }
        Event::SessionError { session_id, .. } => {
            if let Some(id) = session_id {
                f(id);
            }
        }
        Event::PermissionAsked(p) => f(&mut p.id),
        Event::QuestionAsked(q) => f(&mut q.id),
        Event::PermissionReplied { request_id, .. }
        | Event::QuestionReplied { request_id, .. }
        | Event::QuestionRejected { request_id, .. } => f(request_id),
        Event::PendingPrompts { ids, .. } | Event::SessionList { ids, .. } => {
            ids.iter_mut().for_each(f);
        }
        // Their session id was given above; they carry no other id.
        Event::SessionStatus { .. }
        | Event::SessionIdle { .. }
        | Event::SessionCompacted { .. }
        | Event::SessionDiff { .. }
        | Event::MessageUpdated(_)
        | Event::MessageRemoved { .. }
        | Event::PartUpdated(_)
        | Event::PartRemoved { .. }
        | Event::PartDelta { .. }
        | Event::TodoUpdated { .. }
        | Event::Server(_)
        | Event::ServerConnected
        | Event::ServerHeartbeat
        | Event::InstanceDisposed
        | Event::ModelLimits(_)
        | Event::Other(_) => {}
    }
}

/// A server as the store knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    pub key: String,
    pub url: String,
    pub directory: Option<String>,
    pub state: ServerState,
}

/// The fleet in a few words: how many servers, and how many in each state
/// (`3 servers: 2 live · 1 gone`); `None` outside a fleet.
pub fn summary<'a>(servers: impl IntoIterator<Item = &'a ServerEntry>) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut n = 0;
    for s in servers {
        n += 1;
        // Reconnect attempts differ: counted as one state.
        let label = match s.state {
            ServerState::Reconnecting { .. } => "reconnecting".to_string(),
            ref state => state.label(),
        };
        match counts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => counts.push((label, 1)),
        }
    }
    // Always in one order, so a glance finds the same word in the same place.
    let rank = |label: &str| {
        [
            "live",
            "connecting",
            "reconnecting",
            "auth failed",
            "failed",
            "gone",
        ]
        .iter()
        .position(|l| *l == label)
    };
    if n == 0 {
        return None;
    }
    counts.sort_by_key(|(label, _)| rank(label));
    let states: Vec<String> = counts.iter().map(|(l, c)| format!("{c} {l}")).collect();
    Some(format!(
        "{n} server{}: {}",
        if n == 1 { "" } else { "s" },
        states.join(" · ")
    ))
}

impl super::Store {
    /// A fleet's servers, in the order they joined.
    pub fn servers(&self) -> &[ServerEntry] {
        &self.servers
    }

    pub fn server(&self, key: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.key == key)
    }

    /// Apply a server report: the server joins, or its state changes. A
    /// server gone can no longer be answered: its pending prompts leave the
    /// queue (its sessions stay, under the gone server).
    pub(crate) fn report_server(&mut self, report: ServerReport) -> super::Outcome {
        use super::{Change, Effect, Outcome};
        if report.key.is_empty() {
            return Outcome::with(Effect::Ignored);
        }
        let gone = report.state == ServerState::Gone;
        let key = report.key.clone();
        let entry = ServerEntry {
            key: report.key,
            url: report.url,
            directory: report.directory,
            state: report.state,
        };
        match self.servers.iter_mut().find(|s| s.key == entry.key) {
            Some(known) if *known == entry => return Outcome::with(Effect::Stale),
            Some(known) => {
                // A later report may leave out what an earlier one said.
                let directory = entry.directory.clone().or(known.directory.take());
                *known = ServerEntry { directory, ..entry };
            }
            None => self.servers.push(entry),
        }
        let mut prompts = false;
        if gone {
            let before = self.prompts.len();
            let servers = &self.servers;
            let of_gone = |id: &str| {
                server_of(id).is_some_and(|k| {
                    servers
                        .iter()
                        .any(|s| s.key == k && s.state == ServerState::Gone)
                })
            };
            self.prompts
                .retain(|p| p.resolution.is_some() || !of_gone(p.request.session_id()));
            prompts = self.prompts.len() != before;
            self.stop_sessions_of(&key);
        }
        self.revision += 1;
        Outcome::applied(Change {
            session_list: true,
            prompts,
            ..Default::default()
        })
    }

    /// A gone server runs nothing: its busy (or retrying) sessions stop,
    /// so they neither spin nor count as busy. Were it to come back, its
    /// snapshot says again what runs.
    fn stop_sessions_of(&mut self, key: &str) {
        use crate::model::entity::session::SessionStatus;
        for session in &mut self.sessions {
            if server_of(&session.info.id) == Some(key)
                && !matches!(session.status, SessionStatus::Idle)
            {
                std::sync::Arc::make_mut(session).status = SessionStatus::Idle;
            }
        }
    }

    /// Forget a server and everything it sent (the user dismissed it).
    pub fn dismiss_server(&mut self, key: &str) -> bool {
        let before = self.servers.len();
        self.servers.retain(|s| s.key != key);
        if self.servers.len() == before {
            return false;
        }
        self.sessions.retain(|s| server_of(&s.info.id) != Some(key));
        self.prompts
            .retain(|p| server_of(p.request.session_id()) != Some(key));
        self.last_session = 0;
        self.revision += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parsed by the model alone: its tests do not lean on source's decoder,
    /// which would make a circle between the folders.
    fn event(line: &str) -> Event {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let props = serde_json::value::to_raw_value(&v["properties"]).unwrap();
        Event::parse(v["type"].as_str().unwrap(), Some(&props)).unwrap()
    }

    #[test]
    fn ids_scope_and_unscope() {
        let id = scoped("ses_1", "127.0.0.1:4096");
        assert_eq!(id, "ses_1@127.0.0.1:4096");
        assert_eq!(server_of(&id), Some("127.0.0.1:4096"));
        assert_eq!(bare(&id), "ses_1");
        assert_eq!(bare("ses_1"), "ses_1");
        assert_eq!(server_of("ses_1"), None);
        assert_eq!(like(&id, "ses_child"), "ses_child@127.0.0.1:4096");
        assert_eq!(like("ses_1", "ses_child"), "ses_child");
    }

    #[test]
    fn every_session_and_request_id_is_scoped() {
        let mut e = event(
            r#"{"type":"session.updated","properties":{"info":{"id":"ses_c","parentID":"ses_p","title":"t"}}}"#,
        );
        scope_event(&mut e, "a");
        let Event::SessionUpdated(info) = e else {
            panic!()
        };
        assert_eq!(
            (info.id.as_str(), info.parent_id.as_deref()),
            ("ses_c@a", Some("ses_p@a"))
        );
        let mut e = event(
            r#"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_c","permission":"bash","patterns":[]}}"#,
        );
        scope_event(&mut e, "a");
        let Event::PermissionAsked(p) = e else {
            panic!()
        };
        assert_eq!(
            (p.id.as_str(), p.session_id.as_str()),
            ("per_1@a", "ses_c@a")
        );
        let mut e = event(
            r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_c","type":"text","text":"hi"}}}"#,
        );
        scope_event(&mut e, "a");
        let Event::PartUpdated(part) = e else {
            panic!()
        };
        assert_eq!(
            (part.id.as_str(), part.session_id.as_str()),
            ("prt_1", "ses_c@a")
        );
    }

    #[test]
    fn a_report_reads_its_state() {
        let mut e = event(
            r#"{"type":"ocview.server","properties":{"url":"http://h:1","state":"reconnecting","attempt":3,"reason":"refused"}}"#,
        );
        scope_event(&mut e, "h:1");
        let Event::Server(report) = e else { panic!() };
        assert_eq!(report.key, "h:1");
        assert_eq!(report.state.label(), "reconnecting 3");
        assert_eq!(report.state.reason(), Some("refused"));
        let props = ServerReport::properties("http://h:1", Some("/p"), &ServerState::Gone);
        let back: ServerReport = serde_json::from_value(props).unwrap();
        assert_eq!(back.state, ServerState::Gone);
        assert_eq!(back.directory.as_deref(), Some("/p"));
    }

    #[test]
    fn the_summary_tallies_states_in_one_order() {
        let entry = |key: &str, state| ServerEntry {
            key: key.into(),
            url: String::new(),
            directory: None,
            state,
        };
        let servers = [
            entry("a", ServerState::Gone),
            entry("b", ServerState::Live),
            entry(
                "c",
                ServerState::Reconnecting {
                    attempt: 2,
                    reason: String::new(),
                },
            ),
            entry("d", ServerState::Live),
        ];
        assert_eq!(
            summary(&servers).unwrap(),
            "4 servers: 2 live · 1 reconnecting · 1 gone"
        );
        assert_eq!(summary(&[]), None);
    }
}
