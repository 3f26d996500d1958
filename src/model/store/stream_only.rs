//! Stream-only parts (seed 000) and finalisation.
//!
//! `todo.updated` carries the full todo list but opencode never stores it as a
//! part. We materialise it as a completed `todowrite` tool part of the
//! session's current assistant message, placed in stream order (right after
//! the part the stream last named, the call that caused it; never by the
//! ids' clock), stamped with its source, so it renders through the todo card; finalisation replaces streamed wire parts by the
//! server's authoritative ones and keeps these.

use serde_json::value::RawValue;
use std::sync::Arc;

use super::observer::ReplyObserver;
use super::{Change, Outcome, Store};
use crate::model::entity::message::{Message, MessageInfo};
use crate::model::entity::part::Part;
use crate::model::entity::part_source::{self, PartSource};
use crate::model::entity::prompt::Todo;
use crate::model::event_mark::EventMark;

impl Store {
    pub(crate) fn update_todos(
        &mut self,
        session_id: String,
        todos: Vec<Todo>,
        raw_todos: &RawValue,
        mark: EventMark,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let seq = mark.seq;
        obs.todos_changed(&session_id, &todos);
        let (si, created) = self.session_or_placeholder(&session_id);
        let count = todos.len();
        Arc::make_mut(&mut self.sessions[si]).todos = todos;
        let mut change = Change {
            session: Some(session_id.clone()),
            session_list: created,
            ..Default::default()
        };
        let session = Arc::make_mut(&mut self.sessions[si]);
        let mut touched_message = None;
        // Only a streamed event becomes a part: a todo list loaded over REST
        // (no position in the stream) updates the list and nothing else, as
        // a fresh attach would show it.
        if seq == 0 {
            self.touch(si, None);
            return Outcome::applied(change);
        }
        if let Some((mi, after)) = session.todo_place() {
            let message = &mut session.messages[mi];
            // The same event again replaces its own part; a new one sorts
            // right after `after`, in arrival order among its kind.
            let part_id = message
                .parts
                .iter()
                .find(|p| p.is_stream_only() && p.last_event.makes_stale(mark))
                .map(|p| p.id.clone())
                .unwrap_or_else(|| format!("{after}~todo{:016x}", mark.arrival));
            let part = todo_part(&part_id, &message.info, raw_todos, count);
            if let Some(mut part) = part {
                part.last_event = mark;
                match message.part_index(&part_id) {
                    Ok(pi) => {
                        part.revision = message.parts[pi].revision + 1;
                        message.parts[pi] = part;
                        obs.part_finalized(&message.parts[pi], pi);
                    }
                    Err(pi) => {
                        message.insert_part(pi, part);
                        obs.part_added(&message.parts[pi], pi);
                    }
                }
                change.message = Some(message.info.id.clone());
                change.part = Some(part_id);
                touched_message = Some(mi);
            }
        }
        self.touch(si, touched_message);
        let mut outcome = Outcome::applied(change);
        if created {
            outcome.orphan = Some(format!("todos for unknown session {session_id}"));
        }
        outcome
    }

    /// Replace a session's streamed messages by the server's authoritative
    /// list (`GET /session/{id}/message`, possibly only the newest page).
    /// Messages inside the fetched range (from its oldest message up to
    /// `before`, or to the end) that the server no longer has are dropped;
    /// messages outside it are untouched; stream-only parts survive, in
    /// their message when it is still there.
    pub fn finalize_session(
        &mut self,
        session_id: &str,
        fetched: Vec<(MessageInfo, Vec<Part>)>,
        before: Option<&str>,
        obs: &mut dyn ReplyObserver,
    ) -> Outcome {
        let (si, _) = self.session_or_placeholder(session_id);
        let mut fetched = page_messages(fetched, !self.keep_text_in_raw);
        let Some(oldest) = fetched.first().map(|m| m.info.id.clone()) else {
            return Outcome::applied(Change {
                session: Some(session_id.to_string()),
                ..Default::default()
            });
        };
        let session = Arc::make_mut(&mut self.sessions[si]);
        let split = session.messages.partition_point(|m| m.info.id < oldest);
        // An older page covers only up to the message it was fetched before.
        let end = match before {
            Some(b) => session
                .messages
                .partition_point(|m| m.info.id.as_str() < b)
                .max(split),
            None => session.messages.len(),
        };
        let replaced: Vec<Message> = session.messages.drain(split..end).collect();
        for old in &replaced {
            session.tally.forget(old);
        }
        let mut keep: Vec<Part> = Vec::new();
        for old in &replaced {
            keep.extend(old.parts.iter().filter(|p| p.is_stream_only()).cloned());
        }
        for message in &mut fetched {
            if let Some(old) = replaced.iter().find(|m| m.info.id == message.info.id) {
                message.revision = old.revision + 1;
                message.last_event = old.last_event;
                // A finished message is stored whole: the server's parts are
                // the final word. One still streaming keeps the text that
                // streaming got past what the server has stored so far.
                let finished = message.info.completed.is_some();
                for part in &mut message.parts {
                    if let Ok(oi) = old.part_index(&part.id) {
                        let streamed = &old.parts[oi];
                        // A new revision, so no cached rendering of the
                        // streamed part is taken for this one.
                        part.revision = streamed.revision + 1;
                        part.last_event = streamed.last_event;
                        if !finished {
                            super::part_rules::keep_streamed_text(streamed, part);
                        }
                    }
                }
            }
            obs.message_updated(&message.info);
        }
        for part in keep {
            // Its own message if still there, else the nearest earlier one.
            let target =
                match fetched.binary_search_by(|m| m.info.id.as_str().cmp(&part.message_id)) {
                    Ok(i) => i,
                    Err(0) => 0,
                    Err(i) => i - 1,
                };
            let message = &mut fetched[target];
            if let Err(pi) = message.part_index(&part.id) {
                message.insert_part(pi, part);
            }
        }
        // In place: the messages after it move once (a page put in front
        // of a long history must not copy the session twice).
        let count = fetched.len();
        session.messages.splice(split..split, fetched);
        for mi in split..split + count {
            session.recount_message(mi);
        }
        self.touch(si, None);
        Outcome::applied(Change {
            session: Some(session_id.to_string()),
            ..Default::default()
        })
    }
}

fn todo_part(id: &str, info: &MessageInfo, raw_todos: &RawValue, count: usize) -> Option<Part> {
    let source = PartSource::TodoUpdated.name();
    let json = format!(
        concat!(
            r#"{{"id":{id},"messageID":{mid},"sessionID":{sid},"type":"tool","tool":"todowrite","#,
            r#""callID":{src},"state":{{"status":"completed","input":{{"todos":{todos}}},"#,
            r#""output":"","title":{title},"metadata":{{"todos":{todos},"source":{src}}},"#,
            r#""time":{{"start":0,"end":0}}}}}}"#
        ),
        id = quote(id),
        mid = quote(&info.id),
        sid = quote(&info.session_id),
        src = quote(source),
        todos = raw_todos.get(),
        title = quote(&format!("{count} todos")),
    );
    let raw = RawValue::from_string(json).ok()?;
    let mut part = Part::from_raw(&raw).ok()?;
    part_source::stamp(&mut part, source).ok()?;
    Some(part)
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A fetched page as messages: each message's parts in order, once, held
/// in no more room than they take (a session holds them as long as it
/// lives; a source may have collected them loosely), their text shed from
/// `raw` when `shed`; the messages in order, once.
fn page_messages(fetched: Vec<(MessageInfo, Vec<Part>)>, shed: bool) -> Vec<Message> {
    let mut messages: Vec<Message> = fetched
        .into_iter()
        .map(|(info, mut parts)| {
            parts.sort_by(|a, b| a.id.cmp(&b.id));
            parts.dedup_by(|a, b| a.id == b.id);
            parts.shrink_to_fit();
            if shed {
                parts.iter_mut().for_each(Part::shed_text_from_raw);
            }
            Message {
                info,
                parts,
                ..Default::default()
            }
        })
        .collect();
    messages.sort_by(|a, b| a.info.id.cmp(&b.info.id));
    messages.dedup_by(|a, b| a.info.id == b.info.id);
    messages
}
