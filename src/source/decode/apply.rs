//! A decoded record into the store: the unit every source shares (a live
//! stream's frames, a recording's lines, an export's messages). `Record` is
//! one line or frame decoded, with where it was and how it was cured;
//! `apply_record` turns it into bus events (a run line, a Durable Stream
//! event or a saved message stands for several) and counts the outcome.

use crate::model::{Outcome, ReplyObserver, Store};
use crate::source::decode::lines::decode_utf8;
use crate::source::decode::record::{self, Decoded, RecordError};
use crate::source::decode::stats::{IngestStats, ProblemKind};

/// One record of a recording, decoded.
#[derive(Debug)]
pub struct Record {
    /// Line number (1-based) of the record, or of an SSE frame's first line.
    pub line: u64,
    /// Set when the record had to be cured before use.
    pub repaired: Option<&'static str>,
    pub item: Result<Decoded, RecordError>,
}

impl Record {
    /// When the record happened (ms since the epoch), if it says.
    pub fn time(&self) -> Option<i64> {
        match &self.item {
            Ok(Decoded::Event(env)) => env.received_ms,
            Ok(Decoded::Run(run)) => run.timestamp,
            Ok(Decoded::Durable(event)) => event.timestamp,
            Ok(Decoded::Message(m)) => m.created,
            _ => None,
        }
    }
}

/// Decode one JSON record, curing invalid UTF-8 and lone surrogates.
pub fn decode_record(bytes: &[u8], line: u64, terminated: bool) -> Record {
    let (text, lossy) = decode_utf8(bytes);
    let mut repaired = lossy.then_some("invalid UTF-8 replaced");
    let mut item = record::decode(&text);
    if let Err(e) = &item
        && record::is_surrogate_error(e)
        && let Some(fixed) = record::repair_surrogates(&text)
    {
        item = record::decode(&fixed);
        if item.is_ok() {
            repaired = Some("lone UTF-16 surrogate replaced");
        }
    }
    if let Err(e) = &mut item
        && !terminated
    {
        let detail = e.message.strip_prefix("truncated: ").unwrap_or(&e.message);
        *e = RecordError::truncated(format!("truncated last line ({detail})"));
    }
    if let Err(e) = &mut item {
        let mut end = text.len().min(record::RAW_KEPT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        e.raw = Some(text[..end].to_string());
    }
    Record {
        line,
        repaired,
        item,
    }
}

/// Apply one record and count the result; the unit every source shares.
pub fn apply_record(
    record: Record,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
    stats: &mut IngestStats,
) -> Option<Outcome> {
    apply_record_tapped(record, store, obs, stats, &mut |_| {})
}

/// `apply_record`, showing `tap` each event before the store takes it
/// (the archive keeps them: every form read becomes these events).
pub fn apply_record_tapped(
    record: Record,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
    stats: &mut IngestStats,
    tap: &mut dyn FnMut(&crate::model::Envelope),
) -> Option<Outcome> {
    if let Some(why) = record.repaired
        && record.item.is_ok()
    {
        stats.problem(record.line, ProblemKind::Repaired, why);
    }
    let events = match record.item {
        Ok(Decoded::Event(env)) => {
            tap(&env);
            let outcome = store.apply(env, obs);
            stats.count(record.line, &outcome);
            return Some(outcome);
        }
        Ok(Decoded::Skip(why)) => {
            stats.skip(why);
            return None;
        }
        Ok(Decoded::Run(run)) => run_events(*run, store, stats),
        Ok(Decoded::Durable(event)) => {
            crate::source::decode::record::durable::durable_events(*event, store)
        }
        Ok(Decoded::Message(info)) => message_events(*info, store),
        Err(e) => {
            stats.malformed(record.line, &e);
            return None;
        }
    };
    let mut last = None;
    for env in events {
        tap(&env);
        let outcome = store.apply(env, obs);
        stats.count(record.line, &outcome);
        last = Some(outcome);
    }
    last
}

/// A session a saved form names only by id (a run stream, a message
/// list): announced with what is known, so its messages have a home.
fn announce_session(
    store: &Store,
    id: &str,
    title: &str,
    at: i64,
    out: &mut Vec<crate::model::Envelope>,
) {
    use crate::model::{Envelope, Event, SessionInfo};
    if store.session(id).is_some() {
        return;
    }
    let info =
        serde_json::json!({"id": id, "title": title, "time": {"created": at, "updated": at}});
    if let Ok(raw) = serde_json::value::to_raw_value(&info)
        && let Ok(info) = SessionInfo::from_raw(&raw)
    {
        out.push(Envelope::new(Event::SessionCreated(Box::new(info))));
    }
}

/// A message of a message list: its session first, if not yet known.
fn message_events(info: crate::model::MessageInfo, store: &Store) -> Vec<crate::model::Envelope> {
    use crate::model::{Envelope, Event};
    let mut out = Vec::new();
    let at = info.created.unwrap_or(0);
    announce_session(store, &info.session_id, "saved messages", at, &mut out);
    out.push(Envelope {
        received_ms: info.created,
        ..Envelope::new(Event::MessageUpdated(Box::new(info)))
    });
    out
}

/// The events a line of `opencode run --format json` stands for. It names
/// only the session and the part: the session and the assistant message
/// are announced the first time they are seen, so the part has a home. A
/// line that names no session (older versions name it on the part only,
/// some not at all) goes where its message is, else to the stream's session.
pub(crate) fn run_events(
    run: crate::source::decode::record::RunLine,
    store: &Store,
    stats: &mut IngestStats,
) -> Vec<crate::model::Envelope> {
    use crate::model::{Envelope, Event, MessageInfo};
    let mut out = Vec::new();
    let at = run.timestamp.unwrap_or(0);
    let envelope = |event| Envelope {
        received_ms: run.timestamp,
        ..Envelope::new(event)
    };
    let mut part = run.part;
    let session_id = Some(run.session_id)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            part.as_ref()
                .map(|p| p.session_id.clone())
                .filter(|s| !s.is_empty())
        })
        .or_else(|| {
            let message = &part.as_ref()?.message_id;
            store
                .sessions()
                .iter()
                .find(|s| s.message(message).is_some())
                .map(|s| s.info.id.clone())
        })
        .or_else(|| stats.stream_session.clone())
        .or_else(|| {
            // Nothing names a session: one made of the message id, never "".
            part.as_ref().map(|p| format!("ses_run_{}", p.message_id))
        });
    let Some(session_id) = session_id else {
        // An error line naming no session: the stream's error.
        if let Some(error) = run.error {
            out.push(envelope(Event::SessionError {
                session_id: None,
                error,
            }));
        }
        return out;
    };
    stats.stream_session = Some(session_id.clone());
    let mut announced = Vec::new();
    announce_session(store, &session_id, "opencode run", at, &mut announced);
    out.extend(announced.into_iter().map(|e| Envelope {
        received_ms: run.timestamp,
        ..e
    }));
    if let Some(part) = &mut part {
        if part.session_id.is_empty() {
            part.session_id = session_id.clone();
        }
        let known = store
            .session(&session_id)
            .is_some_and(|s| s.message(&part.message_id).is_some());
        if !known {
            let info = serde_json::json!({"id": part.message_id, "sessionID": session_id, "role": "assistant", "time": {"created": at}});
            if let Ok(raw) = serde_json::value::to_raw_value(&info)
                && let Ok(info) = MessageInfo::from_raw(&raw)
            {
                out.push(envelope(Event::MessageUpdated(Box::new(info))));
            }
        }
    }
    if let Some(part) = part {
        out.push(envelope(Event::PartUpdated(Box::new(part))));
    }
    if let Some(error) = run.error {
        out.push(envelope(Event::SessionError {
            session_id: Some(session_id),
            error,
        }));
    }
    out
}
