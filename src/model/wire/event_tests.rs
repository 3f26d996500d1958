//! The event parser's tests: each type, each field shape, older releases' forms.

use super::*;

fn parsed(kind: &str, properties: &str) -> Event {
    let raw = serde_json::value::RawValue::from_string(properties.to_string()).unwrap();
    Event::parse(kind, Some(&raw)).unwrap()
}

#[test]
fn an_event_names_its_session_whatever_its_kind() {
    let info = parsed("session.updated", r#"{"info":{"id":"ses_a","title":"t"}}"#);
    assert_eq!(info.session(), Some("ses_a"));
    assert_eq!(
        info.session_id(),
        None,
        "a session's own info is no id to scope"
    );
    let idle = parsed("session.idle", r#"{"sessionID":"ses_b"}"#);
    assert_eq!(
        (idle.session(), idle.session_id()),
        (Some("ses_b"), Some("ses_b"))
    );
    let error = parsed("session.error", r#"{"sessionID":"ses_c","error":{}}"#);
    assert_eq!(error.session(), Some("ses_c"));
    assert_eq!(Event::ServerHeartbeat.session(), None);
    let nameless = parsed("session.idle", r#"{"sessionID":""}"#);
    assert_eq!(nameless.session(), None);
}
