//! What source messages do to the app: records go through the one reducer;
//! states, pages, notices and answers change what the panes show.

use crate::app::{App, Focus};
use crate::model::store::lookup::Lookup;
use crate::model::{Effect, NoObserver, SessionStatus};
use crate::source::decode::apply::apply_record_tapped;
use crate::source::msg::{SourceMsg, SourceState};

/// How a `--session` that opened nothing is said.
const WANTED_MISSED: &str = "--session";

impl App {
    /// Apply one source message. Returns whether anything visible changed.
    pub fn on_source(&mut self, msg: SourceMsg) -> bool {
        let changed = self.apply_source(msg);
        if changed {
            self.refresh_prompts();
        }
        changed
    }

    pub(crate) fn apply_source(&mut self, msg: SourceMsg) -> bool {
        match msg {
            SourceMsg::Indexed(opened) => self.on_indexed(*opened),
            SourceMsg::Aborted {
                session_id,
                outcome,
            } => {
                self.on_aborted(&session_id, outcome);
                true
            }
            SourceMsg::Replied {
                request_id,
                outcome,
            } => {
                self.on_replied(&request_id, outcome);
                true
            }
            SourceMsg::State(state) => self.on_state(state),
            SourceMsg::Messages {
                session_id,
                messages,
                older,
                complete,
            } => {
                if let Some(tap) = &self.archive.tap {
                    tap.loaded(&messages);
                }
                self.apply_page(&session_id, messages, older, complete);
                self.select_first_if_none(false);
                true
            }
            SourceMsg::Reconcile {
                server,
                sessions,
                pending_prompts,
            } => self.on_reconcile(server.as_deref(), &sessions, &pending_prompts),
            SourceMsg::MessageTotal { session_id, total } => {
                let changed = self.message_totals.total(&session_id) != Some(total);
                self.message_totals.set(session_id, total);
                changed
            }
            SourceMsg::Notice(text) => {
                tracing::warn!("source: {text}");
                self.notice = Some(text);
                true
            }
            SourceMsg::ArchivePage {
                session_id,
                messages,
                next,
                failed,
            } => self.on_archive_page(&session_id, messages, next, failed),
            SourceMsg::ArchiveTrouble(why) => {
                let why = why.map(|w| crate::model::wire::sanitize::line(&w).into_owned());
                std::mem::replace(&mut self.archive.list_trouble, why.clone()) != why
            }
            SourceMsg::ArchivePins(ids) => self.archive.set_pins(ids),
            SourceMsg::RecordingStopped(why) => {
                tracing::warn!("recording stopped: {why}");
                self.recording_stopped = Some(why);
                true
            }
            // A frame only when the size as shown changes.
            SourceMsg::RecordingGrew => {
                let shown = self.recording_size_shown();
                std::mem::replace(&mut self.recording_drawn, shown.clone()) != shown
            }
            SourceMsg::Form { form, lines } => {
                self.stats.form = Some(form.label());
                self.stats.lines = lines;
                self.stats.malformed > 0
            }
            SourceMsg::Record(record) => self.on_record(*record),
        }
    }

    /// A recording file, indexed: the player takes it, and `--session` is looked up in it.
    fn on_indexed(&mut self, opened: crate::source::timeline::Opened) -> bool {
        // The whole recording's sessions, before it rewinds.
        let lookup = self
            .wanted_session
            .as_deref()
            .map(|w| opened.store.find_session(w));
        self.install_player(opened, tokio::time::Instant::now());
        match lookup {
            // Opened now, or when the player reaches it.
            Some(Lookup::Found(id)) => {
                self.wanted_session = Some(id);
                self.open_wanted_session(false);
            }
            Some(miss) => {
                self.say_wanted_missed(miss);
                self.wanted_session = None;
            }
            None => {}
        }
        true
    }

    /// The source's state changed (live again: what went wrong is over).
    fn on_state(&mut self, state: SourceState) -> bool {
        let mut changed = self.source.state != state;
        if state == SourceState::Live {
            // What went wrong before is over; what `--session`
            // found (said as the sessions came) stays.
            let wanted_said = self
                .notice
                .as_deref()
                .is_some_and(|n| n.starts_with(WANTED_MISSED));
            if !wanted_said {
                changed |= self.notice.take().is_some();
            }
            changed |= self.retry_pages_now();
        }
        self.source.state = state;
        changed
    }

    /// After a (re)load: what the server no longer lists goes, and a reconnect that finds everything as it was draws nothing.
    fn on_reconcile(
        &mut self,
        server: Option<&str>,
        sessions: &std::collections::HashSet<String>,
        pending_prompts: &std::collections::HashSet<String>,
    ) -> bool {
        let kept = self.store.retain_sessions(server, sessions);
        let settled = self.store.settle_missing_prompts(server, pending_prompts);
        let selected = self.selected.clone();
        // What the other servers of a fleet list is not in `sessions`:
        // the store says what is gone.
        if self.selected.as_ref().is_some_and(|s| {
            !crate::app::session_tree::groups::is_group_key(s) && self.store.session(s).is_none()
        }) {
            self.selected = None;
        }
        self.select_first_if_none(true);
        // The server's sessions are all known now: a miss is said.
        let wanted = self.open_wanted_session(true);
        // A reconnect that finds everything as it was draws nothing.
        wanted || !kept.change.is_empty() || !settled.change.is_empty() || self.selected != selected
    }

    /// One record through the reducer (and to the archive, for a live source); whether it shows.
    fn on_record(&mut self, record: crate::source::decode::apply::Record) -> bool {
        self.note_answered_elsewhere(&record);
        self.watch(&record);
        // A live source's events are kept in the archive too.
        let archive = self.archive.tap.as_ref();
        let mut keep = |env: &crate::model::Envelope| {
            if let Some(tap) = archive
                && !from_archive(env)
            {
                tap.event(env);
            }
        };
        let Some(outcome) = apply_record_tapped(
            record,
            &mut self.store,
            &mut NoObserver,
            &mut self.stats,
            &mut keep,
        ) else {
            return false;
        };
        // A heartbeat, or a status said again, shows nothing new.
        if outcome.effect != Effect::Applied || outcome.change.is_empty() {
            return false;
        }
        if let Some(sid) = outcome.change.session.clone() {
            let content = outcome.change.message.is_some() || outcome.change.part.is_some();
            self.note_activity(&sid, content);
        }
        if let Some(t) = outcome
            .change
            .session
            .as_deref()
            .and_then(|id| self.store.session(id))
            .and_then(|s| s.info.time.updated)
        {
            self.event_clock_ms = self.event_clock_ms.max(t);
        }
        self.select_first_if_none(outcome.change.session_list);
        if outcome.change.session_list {
            self.open_wanted_session(false);
        }
        // Every applied change shows somewhere: the list always shows
        // each session's status, time and cost.
        true
    }

    /// Ring when a watched session (open in the turn view, or selected)
    /// finishes a busy spell or fails. Live only.
    pub(crate) fn watch(&mut self, record: &crate::source::decode::apply::Record) {
        use crate::model::Event;
        if self.source.recorded {
            return;
        }
        let Ok(crate::source::decode::record::Decoded::Event(env)) = &record.item else {
            return;
        };
        let (sid, what) = match &env.event {
            Event::SessionStatus {
                session_id,
                status: SessionStatus::Idle,
            }
            | Event::SessionIdle { session_id } => (session_id, "finished"),
            Event::SessionError {
                session_id: Some(session_id),
                ..
            } => (session_id, "failed"),
            _ => return,
        };
        let watched = self.selected.as_deref() == Some(sid) || self.panes.turns.contains_key(sid);
        let Some(session) = self.store.session(sid) else {
            return;
        };
        let was_busy = !matches!(session.status, SessionStatus::Idle);
        if watched && (was_busy || what == "failed") {
            let key = format!("{sid}:{what}:{}", session.revision);
            let text = crate::app::attention::about(&self.store, sid, what);
            self.attention.raise(&key, text);
        }
    }

    /// A prompt answered by another client leaves the queue with a notice.
    pub(crate) fn note_answered_elsewhere(
        &mut self,
        record: &crate::source::decode::apply::Record,
    ) {
        use crate::model::Event;
        let Ok(crate::source::decode::record::Decoded::Event(env)) = &record.item else {
            return;
        };
        let id = match &env.event {
            Event::PermissionReplied { request_id, .. }
            | Event::QuestionReplied { request_id, .. }
            | Event::QuestionRejected { request_id, .. } => request_id,
            _ => return,
        };
        let ours = self.panes.prompts.sent.contains(id) || self.panes.prompts.sending.contains(id);
        let Some(prompt) = self.store.prompt(id).filter(|p| p.is_pending()) else {
            return;
        };
        if self.source.recorded {
            // A replay shows the answer that was given, and when.
            let (kind, subject) = crate::model::entity::prompt::describe(&prompt.request);
            let answer = match &env.event {
                Event::PermissionReplied { reply, .. } => format!("answered {reply}"),
                Event::QuestionReplied { answers, .. } => format!(
                    "answered {}",
                    crate::app::panes::prompt_bar::audit::joined(answers)
                ),
                _ => "dismissed".into(),
            };
            let after = match (prompt.asked_at, env.received_ms) {
                (Some(a), Some(b)) if b >= a => format!(" after {:.1}s", (b - a) as f64 / 1000.0),
                _ => String::new(),
            };
            self.notice = Some(format!("{kind} ({subject}): {answer}{after}"));
        } else if !ours {
            self.notice = Some("a prompt was answered in another client".into());
            self.keep_answer_seen(&env.event);
        }
    }

    /// `--session ID`: open the session in the turn view once the store
    /// has it. `settled`: the source has listed every session it holds, so
    /// a miss is said (and, live, the wish kept: a session made later may
    /// be it). Returns whether anything visible changed.
    pub(crate) fn open_wanted_session(&mut self, settled: bool) -> bool {
        let Some(wanted) = self.wanted_session.as_deref() else {
            return false;
        };
        match self.store.find_session(wanted) {
            Lookup::Found(id) => {
                self.wanted_session = None;
                if let Some(cur) = self.selected.replace(id) {
                    self.history.retain(|h| *h != cur);
                }
                self.focus = Focus::Turns;
                self.navigated = true;
                if self
                    .notice
                    .as_deref()
                    .is_some_and(|n| n.starts_with(WANTED_MISSED))
                {
                    self.notice = None;
                }
                true
            }
            Lookup::Ambiguous { .. } if settled => {
                let miss = self.store.find_session(wanted);
                self.say_wanted_missed(miss);
                self.wanted_session = None;
                true
            }
            miss @ Lookup::Unknown { .. } if settled => {
                self.say_wanted_missed(miss);
                true
            }
            _ => false,
        }
    }

    /// Say in the status line why `--session` opened nothing.
    fn say_wanted_missed(&mut self, miss: Lookup) {
        use crate::model::wire::sanitize;
        let wanted =
            sanitize::line(self.wanted_session.as_deref().unwrap_or_default()).into_owned();
        let named = |ids: &[String]| {
            // Ids only: the status line is one line.
            ids.iter()
                .map(|id| sanitize::line(id).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.notice = Some(match miss {
            Lookup::Found(_) => return,
            Lookup::Ambiguous { count, ids } => {
                format!("{WANTED_MISSED} {wanted} matches {count}: {}", named(&ids))
            }
            Lookup::Unknown { near } if near.is_empty() => {
                format!("{WANTED_MISSED} {wanted}: no such session")
            }
            Lookup::Unknown { near } => format!(
                "{WANTED_MISSED} {wanted}: no such session; near: {}",
                named(&near)
            ),
        });
    }

    /// Select the session a viewer opens on when none is. Until the user
    /// moves (or `--session` names one), a selection on a copy (the
    /// archive's, the database's) moves to a live session once one is
    /// listed. `listed`: the list of sessions may have changed.
    pub(crate) fn select_first_if_none(&mut self, listed: bool) {
        use crate::app::session_tree::{copies, groups};
        let on_a_copy = self
            .selected
            .as_deref()
            .is_some_and(|id| !copies::is_live(id) && !groups::is_group_key(id));
        let repick = listed && on_a_copy && !self.navigated && self.wanted_session.is_none();
        if self.selected.is_some() && !repick {
            return;
        }
        let Some(first) = copies::first_choice(&self.store) else {
            return;
        };
        if self.selected.is_none() || copies::is_live(&first.info.id) {
            self.selected = Some(first.info.id.clone());
        }
    }
}

/// An event the archive's own list sent (`crate::archive::list_reader`):
/// kept already, never written back.
fn from_archive(env: &crate::model::Envelope) -> bool {
    env.event
        .session()
        .and_then(crate::model::store::fleet::server_of)
        .is_some_and(crate::archive::list_reader::is_archive_key)
}
