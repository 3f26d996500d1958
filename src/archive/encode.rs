//! An event as the archive's event log keeps it: the bus event's JSON
//! (`{"type":…,"properties":…}`), which the replay reader reads back like
//! any recording line. Every form ocview reads (SSE, run streams, durable
//! logs, exports) becomes these same events on the way into the store, so
//! the log holds one form whatever the source was.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::model::{Envelope, Event, SessionStatus};

/// The event's JSON for the log, or `None` for what the log does not keep:
/// events of no session (heartbeats, a fleet's reports). Prompts (asked,
/// replied, rejected) are kept, so a replay shows them as live did. A
/// fleet's event is kept with the ids its server gave (`fleet::bare`): one
/// session is one id in the archive, whichever way it was watched.
pub fn encode(env: &Envelope) -> Option<String> {
    if env
        .event
        .session()
        .is_some_and(|id| crate::model::store::fleet::server_of(id).is_some())
    {
        let mut own = env.clone();
        crate::model::store::fleet::unscope_event(&mut own.event);
        return encode_own(&own);
    }
    encode_own(env)
}

fn encode_own(env: &Envelope) -> Option<String> {
    let kind = env.event.kind();
    let properties = match &env.event {
        Event::SessionCreated(info) | Event::SessionUpdated(info) | Event::SessionDeleted(info) => {
            let info = session_info(info);
            return Some(line(kind, env, info.len(), |o| {
                around(o, "info", None, &info)
            }));
        }
        Event::SessionStatus { session_id, status } => {
            json!({"sessionID": session_id, "status": status_json(status)})
        }
        Event::SessionIdle { session_id } | Event::SessionCompacted { session_id } => {
            json!({ "sessionID": session_id })
        }
        Event::SessionError { session_id, error } => {
            let error: Value = match &error.raw {
                Some(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
                None => json!({"name": error.name, "data": {"message": error.message}}),
            };
            json!({"sessionID": session_id, "error": error})
        }
        Event::MessageUpdated(info) => {
            let raw = info.raw.as_ref()?.get();
            return Some(line(kind, env, raw.len(), |o| {
                around(o, "info", Some(&info.session_id), raw)
            }));
        }
        Event::MessageRemoved {
            session_id,
            message_id,
        } => json!({"sessionID": session_id, "messageID": message_id}),
        Event::PartUpdated(part) => {
            let raw = part.raw.get();
            return Some(line(kind, env, raw.len(), |o| {
                around(o, "part", Some(&part.session_id), raw)
            }));
        }
        Event::PartRemoved {
            session_id,
            message_id,
            part_id,
        } => json!({"sessionID": session_id, "messageID": message_id, "partID": part_id}),
        Event::PartDelta {
            session_id,
            message_id,
            part_id,
            field,
            delta,
        } => {
            return Some(line(kind, env, delta.len() + part_id.len() * 3, |o| {
                delta_properties(o, session_id, message_id, part_id, field, delta)
            }));
        }
        Event::TodoUpdated {
            session_id,
            raw_todos,
            ..
        } => {
            let raw = raw_todos.get();
            return Some(line(kind, env, raw.len(), |o| {
                around(o, "todos", Some(session_id), raw)
            }));
        }
        Event::PermissionAsked(p) => crate::archive::encode_prompt::permission(p),
        Event::QuestionAsked(q) => crate::archive::encode_prompt::question(q),
        Event::PermissionReplied {
            session_id,
            request_id,
            reply,
        } => json!({"sessionID": session_id, "requestID": request_id, "reply": reply}),
        Event::QuestionReplied {
            session_id,
            request_id,
            answers,
        } => json!({"sessionID": session_id, "requestID": request_id, "answers": answers}),
        Event::QuestionRejected {
            session_id,
            request_id,
        } => json!({"sessionID": session_id, "requestID": request_id}),
        _ => return None,
    };
    env.event.session()?;
    let properties = properties.to_string();
    Some(line(kind, env, properties.len(), |o| {
        push_one_line(o, &properties)
    }))
}

/// `{"sessionID":…,"<key>":<json>}` (without the session when `None`),
/// the JSON kept as it came but on one line.
fn around(out: &mut String, key: &str, session_id: Option<&str>, json: &str) {
    out.push('{');
    if let Some(id) = session_id {
        out.push_str("\"sessionID\":");
        push_string(out, id);
        out.push(',');
    }
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
    push_one_line(out, json);
    out.push('}');
}

/// A session's info as it came, or the little ocview knows of it.
fn session_info(info: &crate::model::SessionInfo) -> String {
    match &info.raw {
        Some(raw) => raw.get().to_string(),
        None => json!({"id": info.id, "title": info.title}).to_string(),
    }
}

/// A delta's properties: most of what streams, so written directly, in the
/// same bytes as a JSON object would give (its keys sorted), not built first.
fn delta_properties(
    p: &mut String,
    session_id: &str,
    message_id: &str,
    part_id: &str,
    field: &str,
    delta: &str,
) {
    for (i, (name, value)) in [
        ("delta", delta),
        ("field", field),
        ("messageID", message_id),
        ("partID", part_id),
        ("sessionID", session_id),
    ]
    .into_iter()
    .enumerate()
    {
        p.push(if i == 0 { '{' } else { ',' });
        p.push('"');
        p.push_str(name);
        p.push_str("\":");
        push_string(p, value);
    }
    p.push('}');
}

/// `value` as a JSON string.
fn push_string(out: &mut String, value: &str) {
    match serde_json::to_string(value) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn status_json(status: &SessionStatus) -> Value {
    match status {
        SessionStatus::Idle => json!({"type": "idle"}),
        SessionStatus::Busy => json!({"type": "busy"}),
        SessionStatus::Retry {
            attempt,
            message,
            next,
        } => json!({"type": "retry", "attempt": attempt, "message": message, "next": next}),
        SessionStatus::Other(kind) => json!({ "type": kind }),
    }
}

/// One line of the log: the event, its properties written by
/// `properties` (about `size` bytes, on one line), with its project
/// directory (a `/global/event` wrapper's) when it had one. Written
/// into one buffer: a part's JSON is copied once.
fn line(kind: &str, env: &Envelope, size: usize, properties: impl FnOnce(&mut String)) -> String {
    let mut out = String::with_capacity(size + 160);
    if let Some(dir) = &env.directory {
        out.push_str("{\"directory\":");
        push_string(&mut out, dir);
        out.push_str(",\"payload\":");
    }
    out.push('{');
    // The event's position in its stream is kept in an id of the same form
    // (a todo list becomes a part only when streamed, at a position).
    if env.seq != 0 && env.seq < 1 << 48 {
        let _ = write!(out, "\"id\":\"evt_{:012x}{:016x}\",", env.seq, env.tag);
    }
    out.push_str("\"type\":");
    push_string(&mut out, kind);
    out.push_str(",\"properties\":");
    properties(&mut out);
    out.push('}');
    if env.directory.is_some() {
        out.push('}');
    }
    out
}

/// JSON text on one line: each line break and the indentation after it
/// dropped. Both are whitespace between tokens (a JSON string holds no raw
/// line break), so the value is the same. A raw object from a
/// pretty-printed file (an export, a message list) has them; the log
/// holds one event a line.
pub fn one_line(json: &str) -> std::borrow::Cow<'_, str> {
    if memchr::memchr2(b'\n', b'\r', json.as_bytes()).is_none() {
        return json.into();
    }
    let mut out = String::with_capacity(json.len());
    push_one_line(&mut out, json);
    out.into()
}

/// `one_line(json)` after `out`.
fn push_one_line(out: &mut String, json: &str) {
    let mut rest = json;
    while let Some(at) = memchr::memchr2(b'\n', b'\r', rest.as_bytes()) {
        out.push_str(&rest[..at]);
        rest = rest[at..].trim_start_matches([' ', '\t', '\n', '\r']);
    }
    out.push_str(rest);
}

/// The event's key in the log: its `evt_` id's position and hash when it
/// had one, else a hash of its JSON. `occurrence` tells apart identical
/// deltas of one stream (the same word typed twice): it counts how often
/// this JSON came before in the same source.
pub fn key(env: &Envelope, json: &str, occurrence: u32) -> String {
    if env.tag == 0 {
        hashed_key(fnv(json.as_bytes()), occurrence)
    } else {
        id_key(env)
    }
}

/// The key of an event with an `evt_` id (`tag` not 0).
pub fn id_key(env: &Envelope) -> String {
    format!("e{:x}.{:x}", env.seq, env.tag)
}

/// The key of an event with no id whose JSON's `fnv` is `hash`, the same
/// JSON having come `occurrence` times before it.
pub fn hashed_key(hash: u64, occurrence: u32) -> String {
    if occurrence == 0 {
        format!("h{hash:016x}")
    } else {
        format!("h{hash:016x}.{occurrence}")
    }
}

/// A quick 64-bit hash, eight bytes at a time, with no seed: whether two
/// texts are the same state (a part's, also as stored). Keys use `fnv`.
pub fn quick_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^ (h >> 31)
}

const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// A stable 64-bit hash (FNV-1a): the same text gives the same key in every
/// process and version, which `std`'s hasher does not promise.
pub fn fnv(bytes: &[u8]) -> u64 {
    fnv_on(FNV_BASIS, bytes)
}

/// `fnv` of `bytes` from a hash made so far.
fn fnv_on(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h = fnv_step(h, *b);
    }
    h
}

fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
}

/// `fnv` of each of `texts`, four at a time. A text's hash is a chain of
/// multiplications each waiting on the one before, a few cycles a byte
/// (an import's events hashed one by one were a twentieth of its work);
/// four texts' chains side by side keep the core busy.
pub fn fnv_each(texts: &[&[u8]]) -> Vec<u64> {
    let mut hashes = vec![FNV_BASIS; texts.len()];
    // Each lane: the text it hashes, how far it is, and its hash so far.
    let mut lanes: Vec<(usize, usize, u64)> = Vec::with_capacity(4);
    let mut next = 0;
    loop {
        while lanes.len() < 4 && next < texts.len() {
            lanes.push((next, 0, FNV_BASIS));
            next += 1;
        }
        if lanes.len() < 4 {
            // Too few texts left to go side by side.
            for (text, at, h) in lanes {
                hashes[text] = fnv_on(h, &texts[text][at..]);
            }
            return hashes;
        }
        let step = lanes
            .iter()
            .map(|&(text, at, _)| texts[text].len() - at)
            .min()
            .unwrap_or(0);
        let part = |l: usize| &texts[lanes[l].0][lanes[l].1..lanes[l].1 + step];
        let [mut h0, mut h1, mut h2, mut h3] = [lanes[0].2, lanes[1].2, lanes[2].2, lanes[3].2];
        for (((&b0, &b1), &b2), &b3) in part(0).iter().zip(part(1)).zip(part(2)).zip(part(3)) {
            h0 = fnv_step(h0, b0);
            h1 = fnv_step(h1, b1);
            h2 = fnv_step(h2, b2);
            h3 = fnv_step(h3, b3);
        }
        for (lane, h) in lanes.iter_mut().zip([h0, h1, h2, h3]) {
            lane.1 += step;
            lane.2 = h;
        }
        // A lane at its text's end gives its hash and is free for the next.
        lanes.retain(|&(text, at, h)| {
            let done = at == texts[text].len();
            if done {
                hashes[text] = h;
            }
            !done
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_hashed_side_by_side_hash_as_each_alone() {
        // Lengths that end together, apart, empty, and more texts than lanes.
        for count in [0, 1, 3, 4, 5, 9, 40] {
            let texts: Vec<Vec<u8>> = (0..count)
                .map(|n: usize| (0..(n * 37) % 101).map(|i| (i * 7 + n) as u8).collect())
                .collect();
            let slices: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            let alone: Vec<u64> = slices.iter().map(|t| fnv(t)).collect();
            assert_eq!(fnv_each(&slices), alone, "{count} texts");
        }
        // FNV-1a's own test vector.
        assert_eq!(fnv_each(&[b"a"])[0], 0xaf63_dc4c_8601_ec8c);
    }
    use crate::source::decode::record::{Decoded, decode};

    fn event(line: &str) -> Envelope {
        match decode(line).unwrap() {
            Decoded::Event(env) => env,
            _ => panic!("not an event: {line}"),
        }
    }

    #[test]
    fn the_quick_hash_tells_apart_texts_one_byte_or_one_length_apart() {
        let base = "{\"id\":\"prt_1\",\"text\":\"hello world, hello again\"}";
        let mut hashes = std::collections::HashSet::new();
        assert!(hashes.insert(quick_hash(base.as_bytes())));
        for at in 0..base.len() {
            let mut other = base.as_bytes().to_vec();
            other[at] ^= 1;
            assert!(hashes.insert(quick_hash(&other)), "byte {at}");
        }
        for len in 0..base.len() {
            assert!(
                hashes.insert(quick_hash(&base.as_bytes()[..len])),
                "{len} bytes"
            );
        }
        // Zeros past the end are not the end.
        assert_ne!(quick_hash(b"ab"), quick_hash(b"ab\0"));
        assert_eq!(
            quick_hash(base.as_bytes()),
            quick_hash(base.to_string().as_bytes())
        );
    }

    #[test]
    fn encoded_events_decode_to_the_same_event() {
        for line in [
            r#"{"type":"session.updated","properties":{"info":{"id":"ses_1","title":"hi","time":{"created":1,"updated":2}}}}"#,
            r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"hello"}}}"#,
            r#"{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","field":"text","delta":" world"}}"#,
            r#"{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}"#,
            r#"{"type":"todo.updated","properties":{"sessionID":"ses_1","todos":[{"content":"a","status":"pending","priority":"high","id":"1"}]}}"#,
            r#"{"directory":"/p","payload":{"type":"session.idle","properties":{"sessionID":"ses_1"}}}"#,
        ] {
            let env = event(line);
            let json = encode(&env).unwrap();
            let again = event(&json);
            assert_eq!(again.event.kind(), env.event.kind(), "{json}");
            assert_eq!(again.directory, env.directory, "{json}");
            assert_eq!(encode(&again).unwrap(), json);
        }
        let beat = event(r#"{"type":"server.heartbeat","properties":{}}"#);
        assert!(encode(&beat).is_none());
    }

    #[test]
    fn a_pretty_printed_object_is_logged_on_one_line() {
        let env = event(
            "{\"type\":\"message.part.updated\",\"properties\":{\"part\":{\n  \"id\": \"prt_1\",\r\n  \"messageID\": \"msg_1\",\n\t\"sessionID\": \"ses_1\",\n  \"type\": \"text\",\n  \"text\": \"a\\nb  c\"\n}}}",
        );
        let json = encode(&env).unwrap();
        assert!(!json.contains(['\n', '\r']), "{json}");
        assert!(json.contains(r#"{"id": "prt_1","messageID""#), "{json}");
        let again = event(&json);
        match (&again.event, &env.event) {
            (Event::PartUpdated(a), Event::PartUpdated(b)) => {
                assert_eq!(format!("{:?}", a.body), format!("{:?}", b.body))
            }
            _ => panic!("{json}"),
        }
    }

    #[test]
    fn a_delta_is_logged_as_its_json_object_would_be() {
        // Keys in the log are hashes of these bytes: the same as before.
        let env = event(
            r#"{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","field":"text","delta":" a \"quoted\"\n\u001b word é"}}"#,
        );
        let Event::PartDelta {
            session_id,
            message_id,
            part_id,
            field,
            delta,
        } = &env.event
        else {
            panic!("not a delta");
        };
        let properties = json!({"sessionID": session_id, "messageID": message_id,
            "partID": part_id, "field": field, "delta": delta});
        assert_eq!(
            encode(&env).unwrap(),
            line(env.event.kind(), &env, 0, |o| o
                .push_str(&properties.to_string()))
        );
    }

    #[test]
    fn a_log_line_keeps_the_bytes_it_always_had() {
        // Keys of events without an id are hashes of these bytes: a line
        // written otherwise would be a second copy of its event.
        let global = r#"{"directory":"/home/dev/\"q\"","payload":{"id":"evt_00000000002a0000000000000007","type":"message.part.updated","properties":{"part":{
          "id": "prt_1",
          "sessionID": "ses_1",
          "messageID": "msg_1",
          "type": "text",
          "text": "two\nlines é \u001b"
        }}}}"#;
        let env = event(global);
        assert_eq!(encode(&env).unwrap(), EXPECTED_PART_LINE);
    }

    /// What `encode` wrote of it before it wrote into one buffer.
    const EXPECTED_PART_LINE: &str = r#"{"directory":"/home/dev/\"q\"","payload":{"id":"evt_00000000002a8a3a4973354c53e3","type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id": "prt_1","sessionID": "ses_1","messageID": "msg_1","type": "text","text": "two\nlines é \u001b"}}}}"#;

    #[test]
    fn keys_are_ids_or_hashes() {
        let env = event(
            r#"{"id":"evt_0123456789abXYZ","type":"session.idle","properties":{"sessionID":"s"}}"#,
        );
        assert!(key(&env, "x", 0).starts_with('e'));
        let env = event(r#"{"type":"session.idle","properties":{"sessionID":"s"}}"#);
        assert_eq!(key(&env, "x", 0), key(&env, "x", 0));
        assert_ne!(key(&env, "x", 0), key(&env, "x", 1));
        assert_ne!(key(&env, "x", 0), key(&env, "y", 0));
    }
}
