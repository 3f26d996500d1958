//! What a notification names.

use super::about;
use crate::model::store::fleet::scoped;
use crate::model::{Envelope, Event, NoObserver, Store};

fn store_with(id: &str, title: &str) -> Store {
    let mut store = Store::default();
    let line = format!(r#"{{"id":"{id}","title":"{title}","time":{{"created":1,"updated":1}}}}"#);
    let props = serde_json::value::RawValue::from_string(format!(r#"{{"info":{line}}}"#)).unwrap();
    let event = Event::parse("session.updated", Some(&props)).unwrap();
    store.apply(Envelope::new(event), &mut NoObserver);
    store
}

#[test]
fn a_notification_names_the_server_and_the_session() {
    let id = scoped("ses_1", "alpha:4096");
    let store = store_with(&id, "Fix the build");
    assert_eq!(
        about(&store, &id, "permission: bash"),
        "ocview: alpha:4096 · Fix the build: permission: bash"
    );
    let store = store_with("ses_2", "Write docs");
    assert_eq!(
        about(&store, "ses_2", "finished"),
        "ocview: Write docs: finished"
    );
    // A session not known yet is named by its id, without the server's key.
    assert_eq!(
        about(&Store::default(), &id, "failed"),
        "ocview: alpha:4096 · ses_1: failed"
    );
}
