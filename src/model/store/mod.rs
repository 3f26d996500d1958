//! The session store: every session, message, part and prompt the sources
//! told us about, kept ordered by id. Only the reducer (`apply`) and
//! finalisation change it; everything else reads.
//!
//! Its folder holds what changes it: the reducer, stream-only parts and
//! finalisation, the re-sync after a gap, the fleet's scoped ids, and the
//! observer protocol the reducer calls back through.

pub mod fleet;
pub mod lookup;
pub mod observer;
mod part_rules;
pub mod reconcile;
mod reducer;
mod stream_only;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::entity::message::{Message, MessageInfo};
use crate::model::entity::prompt::Prompt;
use crate::model::entity::session::{ErrorInfo, Session};
use crate::model::ids::find_by_id;

/// What an event did to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The state changed (or was confirmed) by this event.
    Applied,
    /// An event type the viewer does not need; counted in `ignored`.
    Ignored,
    /// Already applied, or older than what the store holds: no change.
    Stale,
    /// A delta for a part not seen yet: held until the part arrives.
    Held,
}

/// Which parts of the state an event touched, so the UI redraws only that.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// The list of sessions (membership, order, titles, status) changed.
    pub session_list: bool,
    pub session: Option<String>,
    pub message: Option<String>,
    pub part: Option<String>,
    /// Pending prompts changed.
    pub prompts: bool,
    /// Models' context limits changed (the context shares shown).
    pub models: bool,
}

impl Change {
    /// Nothing the screen shows changed: a heartbeat, a status said again.
    pub fn is_empty(&self) -> bool {
        *self == Change::default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub effect: Effect,
    pub change: Change,
    /// Set when the event referred to a session, message or request we did
    /// not know: the event still applied (to a placeholder), but a source
    /// reports it.
    pub orphan: Option<String>,
}

impl Outcome {
    pub(crate) fn applied(change: Change) -> Self {
        Outcome {
            effect: Effect::Applied,
            change,
            orphan: None,
        }
    }

    pub(crate) fn with(effect: Effect) -> Self {
        Outcome {
            effect,
            change: Change::default(),
            orphan: None,
        }
    }
}

/// How many replies without their request are kept: hostile input must not
/// grow the store without bound.
pub(crate) const MAX_EARLY_REPLIES: usize = 4096;

/// A delta that arrived before its part.
#[derive(Debug, Clone)]
pub(crate) struct HeldDelta {
    pub mark: crate::model::event_mark::EventMark,
    pub field: String,
    pub delta: String,
}

#[derive(Debug, Clone, Default)]
pub struct Store {
    /// Ordered by id: newest session first (`ses_` ids descend).
    /// Shared with the timeline's checkpoints: cloning the store copies
    /// pointers, and a session is copied only when it changes after a
    /// checkpoint took it (copy on write).
    pub(crate) sessions: Vec<Arc<Session>>,
    /// Every prompt seen, ordered by request id (arrival order).
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) held_deltas: HashMap<String, Vec<HeldDelta>>,
    /// Replies that arrived before their request (reordered input), by
    /// request id, with their receive time; the request settles on arrival.
    pub(crate) early_replies:
        HashMap<String, (crate::model::entity::prompt::Resolution, Option<i64>)>,
    /// Events we do not need, counted by type.
    pub(crate) ignored: BTreeMap<String, u64>,
    /// Errors not tied to a session.
    pub(crate) global_errors: Vec<ErrorInfo>,
    pub(crate) connected: u32,
    /// Events given to `apply`, in order: the stream's order, which marks
    /// which of two events came later (`EventMark::arrival`).
    pub(crate) arrivals: u64,
    /// Set by `server.instance.disposed`: a live source must reload everything.
    pub(crate) needs_resync: bool,
    /// Bumped on every applied change.
    pub(crate) revision: u64,
    /// Index of the session the last event touched (a lookup hint only).
    pub(crate) last_session: usize,
    /// Context limits of the server's models (`ocview.model-limits`).
    pub(crate) model_limits: crate::model::entity::context::ModelLimits,
    /// A fleet's servers, in the order they joined (empty for one server).
    pub(crate) servers: Vec<fleet::ServerEntry>,
    /// Keep a text or reasoning part's text in its raw object too. A
    /// viewer's store keeps it once, in the part's body (`Part::to_value`
    /// puts it back); the archive's collector keeps the server's object
    /// whole, to store it as it came.
    pub(crate) keep_text_in_raw: bool,
}

impl Store {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that keeps every part's raw object as it came.
    pub fn keeping_raw_whole() -> Self {
        Store {
            keep_text_in_raw: true,
            ..Self::default()
        }
    }

    pub fn sessions(&self) -> &[Arc<Session>] {
        &self.sessions
    }

    pub fn session_index(&self, id: &str) -> Result<usize, usize> {
        find_by_id(&self.sessions, id, |s| &s.info.id)
    }

    pub fn session(&self, id: &str) -> Option<&Session> {
        self.session_index(id).ok().map(|i| &*self.sessions[i])
    }

    pub fn model_limits(&self) -> &crate::model::entity::context::ModelLimits {
        &self.model_limits
    }

    /// A shared snapshot of a session (for work off the loop's thread).
    pub fn session_arc(&self, id: &str) -> Option<Arc<Session>> {
        self.session_index(id)
            .ok()
            .map(|i| self.sessions[i].clone())
    }

    /// Sessions with no (known) parent, newest first.
    pub fn root_sessions(&self) -> impl Iterator<Item = &Session> {
        self.sessions
            .iter()
            .map(|s| &**s)
            .filter(move |s| match &s.info.parent_id {
                None => true,
                Some(p) => self.session(p).is_none(),
            })
    }

    /// Direct children of a session, newest first.
    pub fn children<'a>(&'a self, parent: &'a str) -> impl Iterator<Item = &'a Session> + 'a {
        self.sessions
            .iter()
            .map(|s| &**s)
            .filter(move |s| s.info.parent_id.as_deref() == Some(parent))
    }

    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    pub fn pending_prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter().filter(|p| p.is_pending())
    }

    pub fn prompt(&self, request_id: &str) -> Option<&Prompt> {
        find_by_id(&self.prompts, request_id, |p| p.request.id())
            .ok()
            .map(|i| &self.prompts[i])
    }

    pub fn ignored_counts(&self) -> &BTreeMap<String, u64> {
        &self.ignored
    }

    pub fn global_errors(&self) -> &[ErrorInfo] {
        &self.global_errors
    }

    pub fn needs_resync(&self) -> bool {
        self.needs_resync
    }

    /// A live source calls this once it has reloaded after a dispose.
    pub fn clear_resync(&mut self) {
        self.needs_resync = false;
    }

    pub fn connections(&self) -> u32 {
        self.connected
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Deltas still waiting for their part.
    pub fn held_delta_count(&self) -> usize {
        self.held_deltas.values().map(Vec::len).sum()
    }

    /// The session, created as a placeholder when unknown. The flag is true
    /// when it had to be created.
    pub(crate) fn session_or_placeholder(&mut self, id: &str) -> (usize, bool) {
        // Events come in runs for one session: try the last one found first.
        let hint = self.last_session;
        if self.sessions.get(hint).is_some_and(|s| s.info.id == id) {
            return (hint, false);
        }
        match self.session_index(id) {
            Ok(i) => {
                self.last_session = i;
                (i, false)
            }
            Err(i) => {
                self.sessions.insert(i, Arc::new(Session::placeholder(id)));
                self.last_session = i;
                (i, true)
            }
        }
    }

    /// The message, created as a placeholder when unknown.
    pub(crate) fn message_or_placeholder(
        &mut self,
        session_id: &str,
        message_id: &str,
    ) -> (usize, usize, bool) {
        let (si, new_session) = self.session_or_placeholder(session_id);
        let session = Arc::make_mut(&mut self.sessions[si]);
        match session.message_index(message_id) {
            Ok(mi) => (si, mi, new_session),
            Err(mi) => {
                let mut message = Message::new(MessageInfo::placeholder(session_id, message_id));
                message.placeholder = true;
                session.messages.insert(mi, message);
                (si, mi, true)
            }
        }
    }

    /// Find a part by its full address.
    pub(crate) fn locate_part(
        &self,
        session_id: &str,
        message_id: &str,
        part_id: &str,
    ) -> Option<(usize, usize, usize)> {
        let hint = self.last_session;
        let si = if self
            .sessions
            .get(hint)
            .is_some_and(|s| s.info.id == session_id)
        {
            hint
        } else {
            self.session_index(session_id).ok()?
        };
        let mi = self.sessions[si].message_index(message_id).ok()?;
        let pi = self.sessions[si].messages[mi].part_index(part_id).ok()?;
        Some((si, mi, pi))
    }

    /// Mark a session and (optionally) one of its messages as changed.
    pub(crate) fn touch(&mut self, si: usize, mi: Option<usize>) {
        self.revision += 1;
        let session = Arc::make_mut(&mut self.sessions[si]);
        session.revision += 1;
        if let Some(mi) = mi {
            session.messages[mi].revision += 1;
            // The one place a message's change is noted: its share of the
            // session's summed totals is taken again here (one message's
            // parts, whatever the session's length).
            session.recount_message(mi);
        }
    }
}

pub(super) fn session_outcome(session_id: String, created: bool) -> Outcome {
    let mut outcome = Outcome::applied(Change {
        session: Some(session_id.clone()),
        session_list: created,
        ..Default::default()
    });
    if created {
        outcome.orphan = Some(format!("event for unknown session {session_id}"));
    }
    outcome
}

pub(super) fn orphan(mut outcome: Outcome, what: &str, id: &str) -> Outcome {
    outcome.orphan = Some(format!("{what} {id}"));
    outcome
}

/// A part changed (or went): what to redraw.
pub(super) fn part_outcome(session_id: String, message_id: String, part_id: String) -> Outcome {
    Outcome::applied(Change {
        session: Some(session_id),
        message: Some(message_id),
        part: Some(part_id),
        ..Default::default()
    })
}
