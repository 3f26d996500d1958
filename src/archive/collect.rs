//! From events to a batch: each event is encoded for the log and applied to
//! a store of the collector's own (the one reducer), and the sessions,
//! messages and parts it touched are read back from that store as their
//! latest state when the batch is taken. Live, a part growing by deltas
//! waits for its row (`super::stream_rows`).

use std::collections::{BTreeSet, HashMap};

use crate::archive::collect_rows::{message_row, part_row, session_row};
use crate::archive::encode;
use crate::archive::rows::{Batch, EventRow, Origin};
use crate::archive::stream_rows::{Settled, Waiting};
use crate::model::{Envelope, Event, NoObserver, Part, Store};
use crate::source::IngestStats;
use crate::source::decode::apply::{Record, apply_record_tapped};

pub struct Collector {
    pub store: Store,
    pub stats: IngestStats,
    origin: Origin,
    /// Each fleet member's server (its key → URL without credentials): a
    /// session scoped by a key is kept with its own server's origin.
    servers: HashMap<String, String>,
    touched: Touched,
    /// Live only: the streaming parts whose rows wait.
    waiting: Option<Waiting>,
    /// Live only: finished messages a loaded page brought, let go of once
    /// their rows are made (the viewer holds the session; a second copy
    /// here doubled ocview's memory after `g` on a long session).
    loaded_done: Vec<(String, String)>,
}

/// What came since the last batch.
#[derive(Default)]
struct Touched {
    events: Vec<EventRow>,
    /// How often each hashed event came before (identical deltas).
    seen: HashMap<u64, u32>,
    sessions: BTreeSet<String>,
    /// (session, message) touched.
    messages: BTreeSet<(String, String)>,
    /// (session, message, part) touched by a new state.
    parts: BTreeSet<(String, String, String)>,
    /// (session, message, part) grown by deltas only.
    streamed: BTreeSet<(String, String, String)>,
    /// Sessions that went idle or failed: their streaming parts are done.
    settled: BTreeSet<String>,
    /// Sessions whose todo list changed: the store made a part of it.
    todos: BTreeSet<String>,
    /// Each part's last `message.part.updated` of this batch, and each
    /// message's last `message.updated`: the event (its place in `events`)
    /// and the hash of the object it carried (ids of both kinds; the hash
    /// tells them apart).
    updates: HashMap<String, (usize, u64)>,
    /// The events of `events` keyed by their JSON's hash, not hashed yet
    /// (`settle_keys`), and whether each is a delta.
    unkeyed: Vec<(usize, bool)>,
    /// The time of the last event, for "newer state wins".
    clock: i64,
    /// Prompts asked or settled, by request.
    prompts: HashMap<String, crate::archive::prompt_waits::PromptRow>,
    /// Retries said.
    retries: Vec<crate::archive::spend::RetryRow>,
    /// Models' prices said.
    prices: Vec<crate::archive::spend::PriceRow>,
}

impl Collector {
    pub fn new(origin: Origin) -> Self {
        Collector {
            store: Store::keeping_raw_whole(),
            stats: IngestStats::default(),
            origin,
            servers: HashMap::new(),
            touched: Touched::default(),
            waiting: None,
            loaded_done: Vec::new(),
        }
    }

    /// A collector of what ocview receives live: a streaming part's row is
    /// written when it stops changing (`take_due`), not at every batch.
    pub fn live(origin: Origin) -> Self {
        Collector {
            waiting: Some(Waiting::default()),
            ..Collector::new(origin)
        }
    }

    /// When a waiting streaming part's row is due, if any waits.
    pub fn next_due(&self) -> Option<std::time::Instant> {
        self.waiting.as_ref().and_then(Waiting::next_due)
    }

    /// A fleet member's server, by its key (`model::store::fleet`).
    pub fn server(&mut self, key: String, url: String) {
        self.servers.insert(key, url);
    }

    /// Events and touched rows waiting for `take`.
    pub fn pending(&self) -> usize {
        self.touched.events.len() + self.touched.parts.len()
    }

    /// A record of a file (any form the replay reader reads).
    pub fn record(&mut self, record: Record) {
        let touched = &mut self.touched;
        let mut tap = |env: &Envelope| touched.note(env);
        apply_record_tapped(
            record,
            &mut self.store,
            &mut NoObserver,
            &mut self.stats,
            &mut tap,
        );
    }

    /// An event received live.
    pub fn envelope(&mut self, env: Envelope) {
        self.touched.note(&env);
        self.store.apply(env, &mut NoObserver);
    }

    /// A session's stored messages, loaded over REST: the same as the
    /// events that say each of them.
    pub fn loaded(&mut self, messages: Vec<(crate::model::MessageInfo, Vec<Part>)>) {
        for (info, parts) in messages {
            let finished = info.completed.is_some() || info.role == crate::model::Role::User;
            if finished && self.waiting.is_some() {
                self.loaded_done
                    .push((info.session_id.clone(), info.id.clone()));
            }
            self.envelope(Envelope::new(Event::MessageUpdated(Box::new(info))));
            for part in parts {
                self.envelope(Envelope::new(Event::PartUpdated(Box::new(part))));
            }
        }
    }

    /// Drop what came since the last take without making rows of it: a
    /// resumed import's first records, already archived, still build the
    /// store and the keys of repeated deltas that later records need.
    pub fn forget(&mut self) {
        let t = &mut self.touched;
        t.settle_keys();
        t.events.clear();
        t.sessions.clear();
        t.messages.clear();
        t.parts.clear();
        t.streamed.clear();
        t.settled.clear();
        t.todos.clear();
        t.updates.clear();
    }

    /// Live, at `now`: what was collected since the last take, but the rows
    /// of parts that only grew by deltas wait until they stop changing
    /// (their events are in the batch).
    pub fn take_due(&mut self, now: std::time::Instant) -> Batch {
        if let Some(waiting) = &mut self.waiting {
            let t = &mut self.touched;
            let streamed = std::mem::take(&mut t.streamed);
            let settled = Settled {
                parts: &t.parts,
                messages: &t.messages,
                sessions: &t.settled,
            };
            let due = waiting.due(streamed, &settled, now);
            t.parts.extend(due);
        }
        self.take_rows()
    }

    /// Everything collected since the last take, and every waiting
    /// streaming part's latest state.
    pub fn take(&mut self) -> Batch {
        let t = &mut self.touched;
        t.parts.append(&mut t.streamed);
        if let Some(waiting) = &mut self.waiting {
            t.parts.extend(waiting.all());
        }
        self.take_rows()
    }

    fn take_rows(&mut self) -> Batch {
        self.touched.settle_keys();
        self.touched.settled.clear();
        // The parts the store made of todo lists (named by the store).
        for sid in std::mem::take(&mut self.touched.todos) {
            let Some(session) = self.store.session(&sid) else {
                continue;
            };
            for m in &session.messages {
                for p in m.parts.iter().filter(|p| p.source.is_some()) {
                    self.touched
                        .parts
                        .insert((sid.clone(), m.info.id.clone(), p.id.clone()));
                }
            }
        }
        let store = &self.store;
        let clock = self.touched.clock;
        let sessions = std::mem::take(&mut self.touched.sessions)
            .into_iter()
            .filter_map(|id| {
                let server = crate::model::store::fleet::server_of(&id)
                    .and_then(|key| self.servers.get(key))
                    .cloned();
                store.session(&id).map(|s| session_row(s, server))
            })
            .collect();
        let events = std::mem::take(&mut self.touched.events);
        let updates = std::mem::take(&mut self.touched.updates);
        let update = |id: &str| {
            updates
                .get(id)
                .map(|&(event, hash)| (events[event].key.as_str(), hash))
        };
        let messages = std::mem::take(&mut self.touched.messages)
            .into_iter()
            .filter_map(|(sid, mid)| {
                let m = store.session(&sid)?.message(&mid)?;
                (!m.placeholder).then(|| message_row(m, clock, update(&mid)))
            })
            .collect();
        let parts = std::mem::take(&mut self.touched.parts)
            .into_iter()
            .filter_map(|(sid, mid, pid)| {
                let m = store.session(&sid)?.message(&mid)?;
                Some(part_row(m, m.part(&pid)?, clock, update(&pid)))
            })
            .collect();
        let batch = Batch {
            origin: self.origin.clone(),
            events,
            sessions,
            messages,
            parts,
            checkpoint: None,
            answers: Vec::new(),
            redacted: None,
            prompts: std::mem::take(&mut self.touched.prompts)
                .into_values()
                .collect(),
            retries: std::mem::take(&mut self.touched.retries),
            prices: std::mem::take(&mut self.touched.prices),
            packed: None,
        };
        self.let_go_of_loaded();
        batch
    }

    /// The finished messages loaded pages brought, their rows made: out of
    /// the store, but for one whose part still waits for its row. A later
    /// event for one of them finds it gone and is taken as it comes (a
    /// message's update brings it back; a part's, under a stand-in).
    fn let_go_of_loaded(&mut self) {
        for (session_id, message_id) in std::mem::take(&mut self.loaded_done) {
            let waits = self
                .waiting
                .as_ref()
                .is_some_and(|w| w.holds_message(&session_id, &message_id));
            if !waits {
                let gone = Event::MessageRemoved {
                    session_id,
                    message_id,
                };
                self.store.apply(Envelope::new(gone), &mut NoObserver);
            }
        }
    }
}

impl Touched {
    /// The keys of the events keyed by their JSON's hash, in the order
    /// they came.
    fn settle_keys(&mut self) {
        let unkeyed = std::mem::take(&mut self.unkeyed);
        let texts: Vec<&[u8]> = unkeyed
            .iter()
            .map(|&(event, _)| self.events[event].json.as_bytes())
            .collect();
        let hashes = encode::fnv_each(&texts);
        for (&(event, delta), hash) in unkeyed.iter().zip(hashes) {
            // Only identical deltas repeat by right: a state said twice is
            // the same state.
            let occurrence = if delta {
                let n = self.seen.entry(hash).or_default();
                *n += 1;
                *n - 1
            } else {
                0
            };
            self.events[event].key = encode::hashed_key(hash, occurrence);
        }
    }

    fn note(&mut self, env: &Envelope) {
        let Touched {
            events,
            unkeyed,
            seen: _,
            sessions,
            messages,
            parts,
            streamed,
            settled,
            todos,
            updates,
            clock,
            prompts,
            retries,
            prices,
        } = self;
        // The provider list's prices belong to no session.
        if let Event::ModelLimits(models) = &env.event {
            let seen = env.received_ms.unwrap_or(*clock);
            prices.extend(models.iter().filter_map(|m| {
                Some(crate::archive::spend::PriceRow {
                    model: format!("{}/{}", m.provider_id, m.model_id),
                    prices: m.cost?,
                    seen,
                })
            }));
        }
        let Some(session) = env.event.session() else {
            return;
        };
        if let Some(at) = env.received_ms {
            *clock = (*clock).max(at);
        }
        let session = session.to_string();
        match &env.event {
            Event::MessageUpdated(info) => {
                messages.insert((session.clone(), info.id.clone()));
            }
            Event::TodoUpdated { .. } => {
                todos.insert(session.clone());
            }
            Event::PartUpdated(part) => {
                messages.insert((session.clone(), part.message_id.clone()));
                parts.insert((session.clone(), part.message_id.clone(), part.id.clone()));
            }
            Event::PartDelta {
                message_id,
                part_id,
                ..
            } => {
                streamed.insert((session.clone(), message_id.clone(), part_id.clone()));
            }
            Event::PermissionAsked(_)
            | Event::QuestionAsked(_)
            | Event::PermissionReplied { .. }
            | Event::QuestionReplied { .. }
            | Event::QuestionRejected { .. } => {
                if let Some(row) = prompt_row(&env.event, env.received_ms.unwrap_or(*clock)) {
                    match prompts.entry(row.request_id.clone()) {
                        std::collections::hash_map::Entry::Occupied(mut o) => o.get_mut().fold(row),
                        std::collections::hash_map::Entry::Vacant(v) => {
                            v.insert(row);
                        }
                    }
                }
            }
            Event::SessionStatus {
                session_id,
                status:
                    crate::model::SessionStatus::Retry {
                        attempt,
                        message,
                        next,
                    },
            } => {
                let at = env.received_ms.unwrap_or(*clock);
                retries.push(crate::archive::spend::RetryRow::said(
                    crate::model::store::fleet::bare(session_id),
                    at,
                    *attempt,
                    message,
                    *next,
                ));
            }
            Event::SessionIdle { .. }
            | Event::SessionError { .. }
            | Event::SessionStatus {
                status: crate::model::SessionStatus::Idle,
                ..
            } => {
                settled.insert(session.clone());
            }
            _ => {}
        }
        if let Some(json) = encode::encode(env) {
            let event = events.len();
            // An event with no id is keyed by its JSON's hash, made for
            // the batch's events at once (`settle_keys`).
            let key = if env.tag == 0 {
                unkeyed.push((event, matches!(env.event, Event::PartDelta { .. })));
                String::new()
            } else {
                encode::id_key(env)
            };
            if let Event::PartUpdated(part) = &env.event {
                let hash = encode::quick_hash(part.raw.get().as_bytes());
                updates.insert(part.id.clone(), (event, hash));
            }
            if let Event::MessageUpdated(info) = &env.event
                && let Some(raw) = &info.raw
            {
                let hash = encode::quick_hash(raw.get().as_bytes());
                updates.insert(info.id.clone(), (event, hash));
            }
            events.push(EventRow {
                key,
                session_id: crate::model::store::fleet::bare(&session).to_string(),
                time_ms: env.received_ms.unwrap_or(0),
                json,
            });
        }
        sessions.insert(session);
    }
}

/// A prompt event as the row it makes (ids as their server gave them),
/// timed `at`.
fn prompt_row(event: &Event, at: i64) -> Option<crate::archive::prompt_waits::PromptRow> {
    use crate::archive::prompt_waits::PromptRow;
    use crate::model::store::fleet::bare;
    let settled = |session: &str, request: &str, kind: &str, reply: &str| PromptRow {
        request_id: bare(request).to_string(),
        session_id: bare(session).to_string(),
        kind: kind.into(),
        settled: Some(at),
        reply: Some(reply.into()),
        ..PromptRow::default()
    };
    Some(match event {
        Event::PermissionAsked(p) => PromptRow {
            request_id: bare(&p.id).to_string(),
            session_id: bare(&p.session_id).to_string(),
            kind: "permission".into(),
            what: p.permission.clone(),
            asked: Some(at),
            ..PromptRow::default()
        },
        Event::QuestionAsked(q) => PromptRow {
            request_id: bare(&q.id).to_string(),
            session_id: bare(&q.session_id).to_string(),
            kind: "question".into(),
            what: "question".into(),
            asked: Some(at),
            ..PromptRow::default()
        },
        Event::PermissionReplied {
            session_id,
            request_id,
            reply,
        } => settled(session_id, request_id, "permission", reply),
        Event::QuestionReplied {
            session_id,
            request_id,
            ..
        } => settled(session_id, request_id, "question", "answered"),
        Event::QuestionRejected {
            session_id,
            request_id,
        } => settled(session_id, request_id, "question", "dismissed"),
        _ => return None,
    })
}
