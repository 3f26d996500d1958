//! The server's final word wins (issue 13, point 3; seed 000): a finished
//! message's stored parts replace what streaming built, even a shorter or
//! empty text; a message still streaming keeps what streaming got past
//! what the server has stored; stream-only parts are kept either way.

use ocview::model::{Envelope, MessageInfo, NoObserver, Part, Store};
use ocview::source::decode::record::{Decoded, decode};
use serde_json::{Value, json};

const SES: &str = "ses_dfd705bd5ffeOV3U02UYpF0oDi";
const USER: &str = "msg_2028fa44f001gm4v9MGQm4rEFu";
const ASSIST: &str = "msg_2028fa6e0001joJE6J14jiKoY1";
const TEXT: &str = "prt_2028fab06001U8u1PSr3Jn1twG";

fn ev(n: u64, kind: &str, props: Value) -> Envelope {
    let id = format!("evt_{:012x}abcdefghijklmn", 0x2028fb000000u64 + n);
    let line = json!({"id": id, "type": kind, "properties": props});
    match decode(&line.to_string()).unwrap() {
        Decoded::Event(e) => e,
        other => panic!("not an event: {other:?}"),
    }
}

/// The same event as a REST load would give it: no stream position.
fn loaded(kind: &str, props: Value) -> Envelope {
    let mut e = ev(0, kind, props);
    e.seq = 0;
    e.tag = 0;
    e
}

fn assistant_info(completed: bool) -> Value {
    let mut info = json!({"id": ASSIST, "sessionID": SES, "role": "assistant", "parentID": USER, "time": {"created": 2}});
    if completed {
        info["time"]["completed"] = json!(9);
    }
    info
}

fn text_part(text: &str) -> Value {
    json!({"id": TEXT, "messageID": ASSIST, "sessionID": SES, "type": "text", "text": text, "time": {"start": 1}})
}

/// A session whose assistant message streamed "partial answer" into a text
/// part that never got its final update (the provider failed midway).
fn streamed() -> Store {
    let mut s = Store::new();
    let user = json!({"id": USER, "sessionID": SES, "role": "user", "time": {"created": 1}});
    s.apply(
        ev(
            1,
            "message.updated",
            json!({"sessionID": SES, "info": user}),
        ),
        &mut NoObserver,
    );
    s.apply(
        ev(
            2,
            "message.updated",
            json!({"sessionID": SES, "info": assistant_info(false)}),
        ),
        &mut NoObserver,
    );
    s.apply(
        ev(
            3,
            "message.part.updated",
            json!({"sessionID": SES, "part": text_part("")}),
        ),
        &mut NoObserver,
    );
    let delta = json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": "partial answer"});
    s.apply(ev(4, "message.part.delta", delta), &mut NoObserver);
    // A todo list from the stream, stream-only (seed 000).
    let todos = json!({"sessionID": SES, "todos": [{"content": "a", "status": "pending", "priority": "low"}]});
    s.apply(ev(5, "todo.updated", todos), &mut NoObserver);
    assert_eq!(text(&s), "partial answer");
    s
}

fn text(s: &Store) -> String {
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    m.parts
        .iter()
        .find(|p| p.id == TEXT)
        .and_then(|p| p.text())
        .unwrap_or("")
        .to_string()
}

fn stream_only(s: &Store) -> usize {
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    m.parts.iter().filter(|p| p.is_stream_only()).count()
}

fn page(completed: bool, stored_text: &str) -> Vec<(MessageInfo, Vec<Part>)> {
    let raw = |v: Value| serde_json::value::to_raw_value(&v).unwrap();
    let user = json!({"id": USER, "sessionID": SES, "role": "user", "time": {"created": 1}});
    vec![
        (MessageInfo::from_raw(&raw(user)).unwrap(), vec![]),
        (
            MessageInfo::from_raw(&raw(assistant_info(completed))).unwrap(),
            vec![Part::from_raw(&raw(text_part(stored_text))).unwrap()],
        ),
    ]
}

#[test]
fn a_finished_messages_stored_parts_replace_the_streamed_ones() {
    let mut s = streamed();
    s.finalize_session(SES, page(true, ""), None, &mut NoObserver);
    assert_eq!(text(&s), "", "the server stored the failed attempt empty");
    assert_eq!(stream_only(&s), 1, "stream-only parts are kept");
}

#[test]
fn a_message_still_streaming_keeps_what_streaming_got() {
    // Opening a busy session loads its messages mid-stream: the server has
    // stored the text part empty so far.
    let mut s = streamed();
    s.finalize_session(SES, page(false, ""), None, &mut NoObserver);
    assert_eq!(text(&s), "partial answer");
    assert_eq!(stream_only(&s), 1);
}

/// A recording holds what the viewer loaded over REST as unpositioned
/// events (`"from":"rest"`): replayed, they finalise the same way.
#[test]
fn loaded_parts_of_a_finished_message_are_the_final_word_in_a_replay() {
    let mut s = streamed();
    s.apply(
        loaded("message.updated", json!({"info": assistant_info(true)})),
        &mut NoObserver,
    );
    s.apply(
        loaded("message.part.updated", json!({"part": text_part("")})),
        &mut NoObserver,
    );
    assert_eq!(text(&s), "");
    assert_eq!(stream_only(&s), 1);

    // While the message is unfinished, a loaded part does not undo streaming.
    let mut s = streamed();
    s.apply(
        loaded("message.part.updated", json!({"part": text_part("")})),
        &mut NoObserver,
    );
    assert_eq!(text(&s), "partial answer");
}
