//! `ocview archive export`: archived sessions' event logs as JSON lines,
//! the form `ocview replay` plays and `ocview archive import` reads back.

use std::io::Write;

use crate::archive::engine::Engine;

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exported {
    pub sessions: u64,
    pub events: u64,
    /// The secrets redacted, by rule.
    pub redacted: crate::redact::Tally,
}

/// Write the event log of `session` (its exact id), or of every session,
/// least recently updated first (then those the log holds without a row of
/// their own), to `out`, one event a line. With `redact`, the secrets in
/// them are redacted, and text deltas are left out (a secret streamed in
/// pieces is in no one piece; the parts' states hold the whole text). An
/// error is one line.
pub fn export(
    engine: &mut dyn Engine,
    session: Option<&str>,
    redact: bool,
    out: &mut dyn Write,
) -> Result<Exported, String> {
    let ids: Vec<String> = match session {
        Some(id) => vec![id.to_string()],
        None => {
            let mut ids: Vec<String> = engine
                .oldest_sessions(None, u32::MAX)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            ids.extend(engine.unlisted_sessions().map_err(|e| e.to_string())?);
            ids
        }
    };
    let mut done = Exported::default();
    let redactor = redact.then(crate::redact::Redactor::shared);
    for id in ids {
        let events = session_log(engine, &id)?;
        for event in &events {
            let line = match redactor {
                Some(_) if crate::archive::redacted::is_delta(event) => continue,
                Some(r) => r.redact_json(event, &mut done.redacted),
                None => event.as_str().into(),
            };
            out.write_all(line.as_bytes())
                .and_then(|_| out.write_all(b"\n"))
                .map_err(|e| format!("cannot write: {e}"))?;
            done.events += 1;
        }
        done.sessions += 1;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))?;
    Ok(done)
}

/// A session's log as a recording plays it: one event a line (archives
/// written before events were kept on one line), and the stand-ins a file
/// gave a session it did not name (`saved messages` of a message list)
/// first. Read from that file the stand-in came before the session's
/// real state; in a log that holds several files it may come after, and
/// played there it would replace the session's title and times.
///
/// An event the log holds twice under one id (opencode's `evt_` id) is
/// played once: archives from before one session had one id
/// (`super::one_id`) kept a fleet's copy beside attach's.
pub fn session_log(engine: &mut dyn Engine, id: &str) -> Result<Vec<String>, String> {
    let events = engine.events(id).map_err(|e| e.to_string())?;
    let mut seen = std::collections::HashSet::new();
    let (mut first, rest): (Vec<String>, Vec<String>) = events
        .into_iter()
        .map(|e| crate::archive::encode::one_line(&e).into_owned())
        .filter(|e| logged_id(e).is_none_or(|id| seen.insert(id.to_string())))
        .partition(|e| is_stand_in(e));
    first.extend(rest);
    Ok(first)
}

/// A logged event's own id (`encode::wrap` writes it first, in the
/// payload when a directory wraps it).
fn logged_id(line: &str) -> Option<&str> {
    const ID: &str = r#"{"id":""#;
    let rest = match line.strip_prefix(ID) {
        Some(rest) => rest,
        None if line.starts_with(r#"{"directory":"#) => {
            const PAYLOAD: &str = r#""payload":{"id":""#;
            let at = line.find(PAYLOAD)?;
            &line[at + PAYLOAD.len()..]
        }
        None => return None,
    };
    rest.split_once('"').map(|(id, _)| id)
}

/// Whether a logged event is one of the replay reader's stand-ins for a
/// session or message a file did not name (no event id; `stand_in_info`).
fn is_stand_in(event: &str) -> bool {
    if !(event.starts_with(r#"{"type":"session.created","#)
        || event.starts_with(r#"{"type":"message.updated","#))
    {
        return false;
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(event) else {
        return false;
    };
    value.pointer("/properties/info").is_some_and(stand_in_info)
}

/// Whether a session's or message's info is a stand-in: only an id, a
/// title or role, its session and its creation time, which is what the
/// replay reader knows of a session or message a message list or a run
/// stream names without saying it. A real state always says more.
pub fn stand_in_info(info: &serde_json::Value) -> bool {
    let Some(info) = info.as_object() else {
        return false;
    };
    info.keys()
        .all(|k| matches!(k.as_str(), "id" | "title" | "sessionID" | "role" | "time"))
        && info
            .get("time")
            .and_then(serde_json::Value::as_object)
            .is_none_or(|t| t.keys().all(|k| k == "created" || k == "updated"))
}
