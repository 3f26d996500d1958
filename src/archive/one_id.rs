//! One session, one id (schema 12). Before it, a fleet's sessions were
//! kept under the fleet's ids (`ses_x@127.0.0.1:4096`, `model::store::fleet`)
//! while attach, files and opencode's database kept the same session under
//! its own: two sessions in the archive for one, the rows going to
//! whichever wrote last. The collector now keeps every id as its server
//! gave it, the server being the session's origin; the migration moves
//! what was kept before. Each engine's step (`sqlite::one_id`,
//! `postgres::one_id`) moves the rows and rewrites each logged event of a
//! scoped session through `own_event`, in place (a part's place in the log
//! stays where it was).

use crate::archive::encode;
use crate::model::store::fleet;
use crate::model::{Event, SessionInfo};
use crate::source::decode::record::{Decoded, decode};

/// A logged event of a session a fleet watched, as the log keeps it now:
/// its (key, JSON), every id in it its server's own. A key made of the old
/// JSON's hash is made again of the new one, so the same event read again
/// (the fleet's recording imported once more) is known. An event that does
/// not read as one is kept as it is.
pub fn own_event(key: &str, json: &str) -> (String, String) {
    let Ok(Decoded::Event(mut env)) = decode(json) else {
        return (key.to_string(), json.to_string());
    };
    fleet::unscope_event(&mut env.event);
    if let Event::SessionCreated(info) | Event::SessionUpdated(info) | Event::SessionDeleted(info) =
        &mut env.event
    {
        own_info(info);
    }
    let Some(own) = encode::encode(&env) else {
        return (key.to_string(), json.to_string());
    };
    let key = match key.strip_prefix('h') {
        Some(hash) => {
            let occurrence = hash
                .split_once('.')
                .and_then(|(_, n)| n.parse().ok())
                .unwrap_or(0);
            encode::key(&env, &own, occurrence)
        }
        None => key.to_string(),
    };
    (key, own)
}

/// A session the log knew only by its id and title was logged as the
/// fleet named it: its info's own JSON says the fleet's ids too.
fn own_info(info: &mut SessionInfo) {
    if let Some(raw) = &info.raw
        && let Some(own) = own_session_json(raw.get())
    {
        info.raw = serde_json::value::RawValue::from_string(own).ok();
    }
}

/// A session's info JSON with its server's own ids, when it named the
/// fleet's (`None`: it did not).
pub fn own_session_json(raw: &str) -> Option<String> {
    let mut value = serde_json::from_str::<serde_json::Value>(raw).ok()?;
    let mut changed = false;
    for field in ["id", "parentID"] {
        if let Some(serde_json::Value::String(id)) = value.get_mut(field)
            && let Some(own) = id.split_once('@').map(|(own, _)| own.to_string())
        {
            *id = own;
            changed = true;
        }
    }
    changed.then(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleets_logged_event_gets_its_servers_own_ids() {
        let scoped = r#"{"type":"message.part.delta","properties":{"delta":"hi","field":"text","messageID":"msg_1","partID":"prt_1","sessionID":"ses_1@127.0.0.1:4096"}}"#;
        let (key, json) = own_event("h00000000000000ff.2", scoped);
        assert!(!json.contains('@'), "{json}");
        assert!(json.contains(r#""sessionID":"ses_1""#), "{json}");
        let hash = encode::fnv(json.as_bytes());
        assert_eq!(key, format!("h{hash:016x}.2"));

        let session = r#"{"id":"evt_00000000000700000000000000000003","type":"session.updated","properties":{"info":{"id":"ses_2@k:1","parentID":"ses_1@k:1","title":"t","time":{"created":1,"updated":2}}}}"#;
        let (key, json) = own_event("e7.3", session);
        assert_eq!(key, "e7.3", "a key from the event's id stays");
        assert!(json.contains(r#""parentID":"ses_1""#), "{json}");

        let prompt = r#"{"type":"permission.replied","properties":{"sessionID":"ses_1@k:1","requestID":"per_1@k:1","reply":"once"}}"#;
        let (_, json) = own_event("h1", prompt);
        assert!(json.contains(r#""requestID":"per_1""#), "{json}");

        assert_eq!(
            own_event("h1", "not json"),
            ("h1".to_string(), "not json".to_string())
        );
    }
}
