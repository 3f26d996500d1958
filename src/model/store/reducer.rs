//! The reducer: the one function that applies bus events to the store.
//!
//! Rules that make it safe to feed from overlapping sources (a REST snapshot
//! plus buffered stream events, a reconnect, a duplicated line):
//! - order is the stream's: events apply in the order they arrive. Clocks
//!   never decide, neither the times inside payloads (`time.updated`) nor
//!   the `evt_` ids (which are the server's clock too): a clock in the
//!   future must not freeze an entity, and one that steps back must not
//!   make the updates after it stale. A REST snapshot, loaded after the
//!   stream it follows, applies like the stream's next event;
//! - an entity remembers the mark of the last event applied to it, and the
//!   same event again (its whole id) is stale;
//! - a reply that arrives before its request is kept, and settles the
//!   request when it comes;
//! - state never moves backwards: a finished part is not replaced by an
//!   unfinished one, a tool never returns to a lower state, a completed
//!   message is not replaced by an uncompleted one;
//! - a delta for a finished part is already in its text and is skipped;
//! - an event for a session with no id (a prompt without `sessionID`) is
//!   ignored, counted with its reason, never shown under an empty id.

use super::observer::ReplyObserver;
use super::part_rules::{keep_streamed_text, regresses};
use super::{
    Change, Effect, HeldDelta, MAX_EARLY_REPLIES, Outcome, Store, orphan, part_outcome,
    session_outcome,
};
use crate::model::entity::message::{Message, MessageInfo};
use crate::model::entity::part::{Part, PartBody};
use crate::model::entity::prompt::{Prompt, PromptRequest, Resolution};
use crate::model::entity::session::{ErrorInfo, Session, SessionInfo, SessionStatus};
use crate::model::event_mark::EventMark;
use crate::model::ids::find_by_id;
use crate::model::wire::event::{Envelope, Event};
use std::sync::Arc;

impl Store {
    /// Apply one event. Returns what changed; never fails.
    pub fn apply(&mut self, env: Envelope, obs: &mut dyn ReplyObserver) -> Outcome {
        self.arrivals += 1;
        let mark = EventMark {
            seq: env.seq,
            tag: env.tag,
            arrival: self.arrivals,
        };
        let at = env.received_ms;
        let mut env = env;
        if let Some(kind) = env.event.without_session() {
            let reason = format!("{kind} without sessionID");
            *self.ignored.entry(reason).or_default() += 1;
            return Outcome::with(Effect::Ignored);
        }
        match env.event {
            // Neither shows on screen: the change is empty, so no frame.
            Event::ServerConnected => self.server_connected(),
            Event::ServerHeartbeat => Outcome::with(Effect::Applied),
            Event::InstanceDisposed => self.instance_disposed(),
            Event::SessionCreated(info) | Event::SessionUpdated(info) => {
                self.upsert_session(*info, mark, env.directory)
            }
            Event::SessionDeleted(info) => self.delete_session(info.id),
            Event::SessionStatus { session_id, status } => {
                self.set_status(&session_id, status, obs)
            }
            Event::SessionIdle { session_id } => {
                self.set_status(&session_id, SessionStatus::Idle, obs)
            }
            Event::SessionError { session_id, error } => self.session_error(session_id, error, obs),
            Event::SessionCompacted { session_id } => {
                self.change_session(session_id, |s| s.compactions += 1)
            }
            Event::SessionDiff { session_id, diff } => {
                self.change_session(session_id, |s| s.diff = diff)
            }
            Event::MessageUpdated(info) => self.upsert_message(*info, mark, obs),
            Event::MessageRemoved {
                session_id,
                message_id,
            } => self.remove_message(session_id, message_id),
            Event::PartUpdated(part) => self.upsert_part(*part, mark, obs),
            Event::PartRemoved {
                session_id,
                message_id,
                part_id,
            } => self.remove_part(session_id, message_id, part_id),
            Event::PartDelta {
                session_id,
                message_id,
                part_id,
                field,
                delta,
            } => self.apply_delta(session_id, message_id, part_id, field, delta, mark, obs),
            Event::PermissionAsked(request) => {
                obs.permission_asked(&request);
                self.add_prompt(PromptRequest::Permission(*request), at, obs)
            }
            Event::QuestionAsked(request) => {
                obs.question_asked(&request);
                self.add_prompt(PromptRequest::Question(*request), at, obs)
            }
            Event::PermissionReplied {
                session_id,
                request_id,
                reply,
            } => self.resolve_prompt(
                &session_id,
                &request_id,
                Resolution::Replied(reply),
                at,
                obs,
            ),
            Event::QuestionReplied {
                session_id,
                request_id,
                answers,
            } => self.resolve_prompt(
                &session_id,
                &request_id,
                Resolution::Answered(answers),
                at,
                obs,
            ),
            Event::QuestionRejected {
                session_id,
                request_id,
            } => self.resolve_prompt(&session_id, &request_id, Resolution::Rejected, at, obs),
            Event::TodoUpdated {
                session_id,
                todos,
                raw_todos,
            } => self.update_todos(session_id, todos, &raw_todos, mark, obs),
            Event::ModelLimits(models) => self.add_model_limits(models),
            Event::Server(report) => self.report_server(*report),
            Event::PendingPrompts { server, ids } => {
                self.settle_missing_prompts(server.as_deref(), &ids.into_iter().collect())
            }
            Event::SessionList { server, ids } => {
                self.retain_sessions(server.as_deref(), &ids.into_iter().collect())
            }
            Event::Other(kind) => {
                *self.ignored.entry(kind).or_default() += 1;
                Outcome::with(Effect::Ignored)
            }
        }
    }

    fn server_connected(&mut self) -> Outcome {
        self.connected += 1;
        Outcome::applied(Change::default())
    }

    /// The server's instance went away: everything is read again.
    fn instance_disposed(&mut self) -> Outcome {
        self.needs_resync = true;
        self.revision += 1;
        Outcome::applied(Change {
            session_list: true,
            ..Default::default()
        })
    }

    fn delete_session(&mut self, id: String) -> Outcome {
        match self.session_index(&id) {
            Ok(i) => {
                self.sessions.remove(i);
                self.revision += 1;
                Outcome::applied(Change {
                    session_list: true,
                    session: Some(id),
                    ..Default::default()
                })
            }
            Err(_) => orphan(Outcome::with(Effect::Stale), "deleted", &id),
        }
    }

    /// An error of a session (made as a placeholder if unknown), or of the
    /// whole stream when it names none.
    fn session_error(
        &mut self,
        session_id: Option<String>,
        error: ErrorInfo,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let text = error.summary();
        obs.session_errored(session_id.as_deref(), &text, &error);
        match session_id {
            Some(id) => self.change_session(id, |s| s.note_error(error)),
            None => {
                self.global_errors.push(error);
                self.revision += 1;
                Outcome::applied(Change::default())
            }
        }
    }

    /// Change a session (a placeholder if it is not known yet).
    fn change_session(&mut self, id: String, change: impl FnOnce(&mut Session)) -> Outcome {
        let (si, created) = self.session_or_placeholder(&id);
        change(Arc::make_mut(&mut self.sessions[si]));
        self.touch(si, None);
        session_outcome(id, created)
    }

    fn remove_message(&mut self, session_id: String, message_id: String) -> Outcome {
        let found = self.session_index(&session_id).ok().and_then(|si| {
            let mi = self.sessions[si].message_index(&message_id).ok()?;
            Some((si, mi))
        });
        let Some((si, mi)) = found else {
            return orphan(Outcome::with(Effect::Stale), "removed message", &message_id);
        };
        let session = Arc::make_mut(&mut self.sessions[si]);
        let gone = session.messages.remove(mi);
        session.tally.forget(&gone);
        self.touch(si, None);
        Outcome::applied(Change {
            session: Some(session_id),
            message: Some(message_id),
            ..Default::default()
        })
    }

    fn remove_part(&mut self, session_id: String, message_id: String, part_id: String) -> Outcome {
        let Some((si, mi, pi)) = self.locate_part(&session_id, &message_id, &part_id) else {
            self.held_deltas.remove(&part_id);
            return orphan(Outcome::with(Effect::Stale), "removed part", &part_id);
        };
        Arc::make_mut(&mut self.sessions[si]).messages[mi]
            .parts
            .remove(pi);
        self.touch(si, Some(mi));
        part_outcome(session_id, message_id, part_id)
    }

    /// A server's context limits: a fleet's servers each send theirs, and
    /// they add up.
    fn add_model_limits(
        &mut self,
        models: Vec<crate::model::entity::context::ModelLimit>,
    ) -> Outcome {
        self.model_limits.extend(
            models
                .into_iter()
                .map(|m| ((m.provider_id.clone(), m.model_id.clone()), m)),
        );
        self.revision += 1;
        Outcome::applied(Change {
            models: true,
            ..Default::default()
        })
    }

    fn upsert_session(
        &mut self,
        info: SessionInfo,
        mark: EventMark,
        directory: Option<String>,
    ) -> Outcome {
        let id = info.id.clone();
        let (si, _) = self.session_or_placeholder(&id);
        let session = Arc::make_mut(&mut self.sessions[si]);
        if !session.placeholder && session.last_event.makes_stale(mark) {
            return Outcome::with(Effect::Stale);
        }
        session.info = info;
        session.placeholder = false;
        session.last_event.advance(mark);
        if directory.is_some() {
            session.project_directory = directory;
        }
        self.touch(si, None);
        Outcome::applied(Change {
            session_list: true,
            session: Some(id),
            ..Default::default()
        })
    }

    fn set_status(
        &mut self,
        session_id: &str,
        status: SessionStatus,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        if let SessionStatus::Retry {
            attempt, message, ..
        } = &status
        {
            obs.session_retried(session_id, *attempt, message);
        }
        let (si, created) = self.session_or_placeholder(session_id);
        let session = Arc::make_mut(&mut self.sessions[si]);
        // opencode repeats "busy" several times per turn: nothing to redraw then.
        if session.status == status && !created {
            return Outcome::with(Effect::Applied);
        }
        session.status = status;
        self.touch(si, None);
        let mut outcome = session_outcome(session_id.to_string(), created);
        outcome.change.session_list = true;
        outcome
    }

    fn upsert_message(
        &mut self,
        info: MessageInfo,
        mark: EventMark,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let session_id = info.session_id.clone();
        let message_id = info.id.clone();
        let (si, new_session) = self.session_or_placeholder(&session_id);
        let session = Arc::make_mut(&mut self.sessions[si]);
        let mi = match session.message_index(&message_id) {
            Ok(mi) => {
                let message = &mut session.messages[mi];
                if !message.placeholder {
                    if message.last_event.makes_stale(mark) {
                        return Outcome::with(Effect::Stale);
                    }
                    if message.info.completed.is_some() && info.completed.is_none() {
                        return Outcome::with(Effect::Stale);
                    }
                }
                message.info = info;
                message.placeholder = false;
                message.last_event.advance(mark);
                mi
            }
            Err(mi) => {
                let mut message = Message::new(info);
                message.last_event = mark;
                session.messages.insert(mi, message);
                mi
            }
        };
        obs.message_updated(&self.sessions[si].messages[mi].info);
        self.touch(si, Some(mi));
        let mut outcome = Outcome::applied(Change {
            session: Some(session_id.clone()),
            message: Some(message_id),
            ..Default::default()
        });
        if new_session {
            outcome.change.session_list = true;
            outcome.orphan = Some(format!("message for unknown session {session_id}"));
        }
        outcome
    }

    fn upsert_part(
        &mut self,
        mut part: Part,
        mark: EventMark,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let session_id = part.session_id.clone();
        let message_id = part.message_id.clone();
        let part_id = part.id.clone();
        let (si, mi, created) = self.message_or_placeholder(&session_id, &message_id);
        // Where the stream stands, even when this update changes nothing
        // (a part loaded over REST already holds it): a todo list placed
        // next goes after this part.
        if mark.seq != 0 {
            Arc::make_mut(&mut self.sessions[si]).note_streamed_part(&message_id, &part_id);
        }
        let held = self.held_deltas.remove(&part_id);
        if !self.keep_text_in_raw {
            part.shed_text_from_raw();
        }
        let message = &mut Arc::make_mut(&mut self.sessions[si]).messages[mi];
        // The server's stored part of a finished message is its final word
        // (seed 000): it replaces what streaming captured, even a shorter
        // text (a provider retry leaves the failed attempt's part empty).
        let final_word = mark.seq == 0 && message.info.completed.is_some();
        part.last_event = mark;
        let pi = match message.part_index(&part_id) {
            Ok(pi) => {
                let existing = &mut message.parts[pi];
                if existing.last_event.makes_stale(mark) {
                    return Outcome::with(Effect::Stale);
                }
                if !final_word && regresses(existing, &part) {
                    return Outcome::with(Effect::Stale);
                }
                if !final_word {
                    keep_streamed_text(existing, &mut part);
                }
                if mark.seq == 0 {
                    part.last_event = existing.last_event;
                }
                if !part.is_final() {
                    part.deltas_applied = existing.deltas_applied.take();
                }
                part.revision = existing.revision + 1;
                part.source = existing.source;
                *existing = part;
                let existing = &message.parts[pi];
                match &existing.body {
                    PartBody::Tool(t) => obs.tool_progressed(existing, pi, &t.state.status),
                    _ => obs.part_finalized(existing, pi),
                }
                pi
            }
            Err(pi) => {
                message.insert_part(pi, part);
                let added = &message.parts[pi];
                obs.part_added(added, pi);
                if let PartBody::StepFinish(step) = &added.body {
                    obs.step_finished(&added.session_id, step.cost, &step.tokens);
                }
                pi
            }
        };
        // Deltas that raced ahead of this part, newer than it.
        if let Some(held) = held {
            let part = &mut message.parts[pi];
            for d in held {
                if !part.is_final()
                    && !part.last_event.makes_stale(d.mark)
                    && !part.has_delta(d.mark)
                {
                    part.append_delta(&d.field, &d.delta);
                    part.last_event.advance(d.mark);
                    part.note_delta(d.mark);
                    obs.part_changed(part, pi, &d.delta);
                }
            }
        }
        self.touch(si, Some(mi));
        let orphan = created.then(|| format!("part for unknown message {message_id}"));
        let mut outcome = Outcome::applied(Change {
            session: Some(session_id),
            message: Some(message_id),
            part: Some(part_id),
            session_list: created,
            ..Default::default()
        });
        outcome.orphan = orphan;
        outcome
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_delta(
        &mut self,
        session_id: String,
        message_id: String,
        part_id: String,
        field: String,
        delta: String,
        mark: EventMark,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let Some((si, mi, pi)) = self.locate_part(&session_id, &message_id, &part_id) else {
            let held = self.held_deltas.entry(part_id).or_default();
            // The same delta again (its whole id) is held once.
            if mark.seq != 0
                && held
                    .iter()
                    .any(|d| (d.mark.seq, d.mark.tag) == (mark.seq, mark.tag))
            {
                return Outcome::with(Effect::Stale);
            }
            held.push(HeldDelta { mark, field, delta });
            return Outcome::with(Effect::Held);
        };
        let part = &mut Arc::make_mut(&mut self.sessions[si]).messages[mi].parts[pi];
        if part.last_event.makes_stale(mark) || part.is_final() || part.has_delta(mark) {
            return Outcome::with(Effect::Stale);
        }
        if !part.append_delta(&field, &delta) {
            return Outcome::with(Effect::Stale);
        }
        part.last_event.advance(mark);
        part.note_delta(mark);
        part.revision += 1;
        obs.part_changed(part, pi, &delta);
        self.touch(si, Some(mi));
        part_outcome(session_id, message_id, part_id)
    }

    fn add_prompt(
        &mut self,
        request: PromptRequest,
        at: Option<i64>,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let session_id = request.session_id().to_string();
        let request_id = request.id().to_string();
        let (si, created) = self.session_or_placeholder(&session_id);
        let pi = match find_by_id(&self.prompts, request.id(), |p| p.request.id()) {
            Ok(pi) => {
                let prompt = &mut self.prompts[pi];
                if prompt.request == request {
                    return Outcome::with(Effect::Stale);
                }
                prompt.request = request;
                pi
            }
            Err(pi) => {
                self.prompts.insert(
                    pi,
                    Prompt {
                        request,
                        asked_at: at,
                        resolution: None,
                        resolved_at: None,
                    },
                );
                pi
            }
        };
        let _ = pi;
        self.touch(si, None);
        // Its reply came first (reordered input): it is already answered.
        if let Some((resolution, replied_at)) = self.early_replies.remove(&request_id) {
            self.resolve_prompt(&session_id, &request_id, resolution, replied_at, obs);
        }
        let mut outcome = session_outcome(session_id, created);
        outcome.change.prompts = true;
        outcome.change.session_list = true;
        outcome
    }

    fn resolve_prompt(
        &mut self,
        session_id: &str,
        request_id: &str,
        resolution: Resolution,
        at: Option<i64>,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let Ok(pi) = find_by_id(&self.prompts, request_id, |p| p.request.id()) else {
            // Kept for the request, which may still come.
            let effect = if self.early_replies.len() < MAX_EARLY_REPLIES {
                self.early_replies
                    .entry(request_id.to_string())
                    .or_insert((resolution, at));
                Effect::Held
            } else {
                Effect::Stale
            };
            return orphan(
                Outcome::with(effect),
                "reply to unknown request",
                request_id,
            );
        };
        let prompt = &mut self.prompts[pi];
        if prompt.resolution.is_some() {
            return Outcome::with(Effect::Stale);
        }
        let asked_at = prompt.asked_at;
        match &resolution {
            Resolution::Replied(reply) => {
                obs.permission_replied(session_id, request_id, reply, asked_at)
            }
            Resolution::Answered(answers) => {
                obs.question_replied(session_id, request_id, answers, asked_at)
            }
            Resolution::Rejected => obs.question_rejected(session_id, request_id, asked_at),
        }
        prompt.resolution = Some(resolution);
        prompt.resolved_at = at;
        let owner = prompt.request.session_id().to_string();
        self.revision += 1;
        if let Ok(si) = self.session_index(&owner) {
            self.touch(si, None);
        }
        Outcome::applied(Change {
            session_list: true,
            session: Some(owner),
            prompts: true,
            ..Default::default()
        })
    }
}
