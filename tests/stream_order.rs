//! Order by the stream, not by clocks (issue 13, point 4), and SSE line ends
//! as the spec allows them (point 6). Hand-made streams, one rule each.

mod common;

use ocview::model::{Effect, Envelope, NoObserver, Store};
use ocview::source::record::{Decoded, decode};
use serde_json::{Value, json};

const SES: &str = "ses_dfd705bd5ffeOV3U02UYpF0oDi";
const USER: &str = "msg_2028fa44f001gm4v9MGQm4rEFu";
const ASSIST: &str = "msg_2028fa6e0001joJE6J14jiKoY1";
const TEXT: &str = "prt_2028fab06001U8u1PSr3Jn1twG";

/// An event whose id has position `pos` and the given random tail.
fn ev_at(pos: u64, tail: &str, kind: &str, props: Value) -> Envelope {
    let line = json!({"id": format!("evt_{pos:012x}{tail}"), "type": kind, "properties": props});
    match decode(&line.to_string()).unwrap() {
        Decoded::Event(e) => e,
        other => panic!("not an event: {other:?}"),
    }
}

fn ev(n: u64, kind: &str, props: Value) -> Envelope {
    ev_at(0x2028fb000000 + n, "abcdefghijklmn", kind, props)
}

fn apply(store: &mut Store, env: Envelope) -> Effect {
    store.apply(env, &mut NoObserver).effect
}

fn connected(n: u64) -> Envelope {
    ev(n, "server.connected", json!({}))
}

fn session_updated(n: u64, title: &str, updated: i64) -> Envelope {
    let info = json!({"id": SES, "title": title, "directory": "/p", "time": {"created": 1, "updated": updated}});
    ev(
        n,
        "session.updated",
        json!({"sessionID": SES, "info": info}),
    )
}

fn base() -> Store {
    let mut store = Store::new();
    apply(&mut store, connected(1));
    apply(&mut store, session_updated(2, "start", 10));
    let user = json!({"id": USER, "sessionID": SES, "role": "user", "time": {"created": 1}});
    apply(
        &mut store,
        ev(
            3,
            "message.updated",
            json!({"sessionID": SES, "info": user}),
        ),
    );
    let assistant = json!({"id": ASSIST, "sessionID": SES, "role": "assistant", "parentID": USER, "time": {"created": 2}});
    apply(
        &mut store,
        ev(
            4,
            "message.updated",
            json!({"sessionID": SES, "info": assistant}),
        ),
    );
    let part = json!({"id": TEXT, "messageID": ASSIST, "sessionID": SES, "type": "text", "text": "", "time": {"start": 1}});
    apply(
        &mut store,
        ev(
            5,
            "message.part.updated",
            json!({"sessionID": SES, "part": part, "time": 1}),
        ),
    );
    store
}

fn delta_at(pos: u64, tail: &str, text: &str) -> Envelope {
    ev_at(
        pos,
        tail,
        "message.part.delta",
        json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": text}),
    )
}

fn text(store: &Store) -> String {
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    m.parts[0].text().unwrap_or("").to_string()
}

fn title(store: &Store) -> String {
    store.session(SES).unwrap().title().to_string()
}

#[test]
fn the_same_event_again_is_stale() {
    let mut store = base();
    let d = || delta_at(0x2028fb000010, "sameTAILsameTA", "a");
    assert_eq!(apply(&mut store, d()), Effect::Applied);
    assert_eq!(apply(&mut store, d()), Effect::Stale);
    assert_eq!(text(&store), "a");
}

#[test]
fn two_events_at_one_position_are_both_applied() {
    let mut store = base();
    let pos = 0x2028fb000010;
    assert_eq!(
        apply(&mut store, delta_at(pos, "firstTAILfirst", "a")),
        Effect::Applied
    );
    assert_eq!(
        apply(&mut store, delta_at(pos, "secondTAILsecn", "b")),
        Effect::Applied
    );
    assert_eq!(text(&store), "ab");
}

#[test]
fn an_older_event_is_stale_on_its_connection_only() {
    let mut store = base();
    apply(&mut store, session_updated(20, "newer", 20));
    // Older, same connection: late, skipped.
    assert_eq!(
        apply(&mut store, session_updated(15, "late", 15)),
        Effect::Stale
    );
    assert_eq!(title(&store), "newer");
    // A new connection (a restarted server may count from anywhere): its
    // events are not judged by the old connection's positions.
    apply(&mut store, connected(8));
    assert_eq!(
        apply(&mut store, session_updated(9, "after reconnect", 30)),
        Effect::Applied
    );
    assert_eq!(title(&store), "after reconnect");
}

#[test]
fn a_clock_in_the_future_does_not_freeze_a_session() {
    let mut store = base();
    let future = 4_102_444_800_000; // 2100-01-01
    apply(&mut store, session_updated(20, "from the future", future));
    assert_eq!(
        apply(&mut store, session_updated(21, "renamed", 25)),
        Effect::Applied
    );
    assert_eq!(title(&store), "renamed");
    assert_eq!(
        apply(&mut store, session_updated(22, "again", 26)),
        Effect::Applied
    );
    assert_eq!(title(&store), "again");
}

#[test]
fn a_snapshot_older_than_the_stream_is_still_refused() {
    let mut store = base();
    apply(&mut store, session_updated(20, "streamed", 20));
    let mut snapshot = session_updated(0, "old snapshot", 15);
    snapshot.seq = 0;
    assert_eq!(apply(&mut store, snapshot), Effect::Stale);
    assert_eq!(title(&store), "streamed");
}

#[test]
fn a_reply_before_its_ask_resolves_the_ask() {
    let mut store = base();
    let replied = ev(
        10,
        "permission.replied",
        json!({"sessionID": SES, "requestID": "per_2028fb00000aXYZ", "reply": "once"}),
    );
    assert_eq!(apply(&mut store, replied), Effect::Held);
    let asked = ev(
        11,
        "permission.asked",
        json!({"id": "per_2028fb00000aXYZ", "sessionID": SES, "permission": "bash", "patterns": ["ls"], "metadata": {}, "always": []}),
    );
    assert_eq!(apply(&mut store, asked), Effect::Applied);
    let prompt = &store.prompts()[0];
    assert!(!prompt.is_pending(), "the early reply settled it");
    assert_eq!(store.prompts().iter().filter(|p| p.is_pending()).count(), 0);

    // The same for a question, answered before it is asked.
    let answered = ev(
        12,
        "question.replied",
        json!({"sessionID": SES, "requestID": "que_2028fb00000cQQQ", "answers": [["yes"]]}),
    );
    apply(&mut store, answered);
    let asked = ev(
        13,
        "question.asked",
        json!({"id": "que_2028fb00000cQQQ", "sessionID": SES, "questions": [{"question": "Go?", "header": "go", "options": [{"label": "yes", "description": ""}]}]}),
    );
    apply(&mut store, asked);
    assert_eq!(store.prompts().iter().filter(|p| p.is_pending()).count(), 0);
}

#[test]
fn a_part_without_its_session_belongs_to_the_events() {
    let mut store = base();
    let part = json!({"id": "prt_2028fb0000ffAAAA", "messageID": ASSIST, "type": "text", "text": "hi", "time": {"start": 1, "end": 2}});
    let outcome = store.apply(
        ev(
            30,
            "message.part.updated",
            json!({"sessionID": SES, "part": part, "time": 1}),
        ),
        &mut NoObserver,
    );
    assert_eq!(outcome.effect, Effect::Applied);
    assert!(outcome.orphan.is_none(), "{:?}", outcome.orphan);
    assert_eq!(store.sessions().len(), 1, "no placeholder session");
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    assert!(m.parts.iter().any(|p| p.id == "prt_2028fb0000ffAAAA"));

    // A message info without its own sessionID, likewise.
    let info = json!({"id": "msg_2028fb0000eeBBBB", "role": "user", "time": {"created": 5}});
    let outcome = store.apply(
        ev(
            31,
            "message.updated",
            json!({"sessionID": SES, "info": info}),
        ),
        &mut NoObserver,
    );
    assert_eq!(outcome.effect, Effect::Applied);
    assert!(
        store
            .session(SES)
            .unwrap()
            .message("msg_2028fb0000eeBBBB")
            .is_some()
    );
}

/// The same SSE stream with each line end the spec allows: LF, CRLF, CR,
/// and a mix; a file ending in `\r\r` ends with a whole frame.
#[test]
fn sse_files_with_any_line_ends_replay_alike() {
    let bytes = common::fixture("a_bash_permission_once", "event.sse");
    let text = String::from_utf8(bytes).unwrap();
    let lf = text.replace("\r\n", "\n");
    let (want, stats) = common::replay_bytes(lf.as_bytes());
    assert_eq!(stats.malformed, 0);
    let want = ocview::dump::render(&want, &Default::default());
    // A mix, frame by frame (a CR then an LF would be one CRLF line end).
    let mixed: String = lf
        .split_inclusive("\n\n")
        .enumerate()
        .map(|(i, frame)| frame.replace('\n', ["\n", "\r\n", "\r"][i % 3]))
        .collect();
    for (name, input) in [
        ("CRLF", lf.replace('\n', "\r\n")),
        ("CR", lf.replace('\n', "\r")),
        ("mixed", mixed),
    ] {
        let (store, stats) = common::replay_bytes(input.as_bytes());
        assert_eq!(stats.malformed, 0, "{name}: {:?}", stats.problems());
        assert_eq!(
            ocview::dump::render(&store, &Default::default()),
            want,
            "{name}"
        );
    }
    // A last frame ended by CR CR: whole, not truncated.
    let cr_cr = "data: {\"id\":\"evt_2028fb000001abc\",\"type\":\"server.connected\",\"properties\":{}}\r\r";
    let (_, stats) = common::replay_bytes(cr_cr.as_bytes());
    assert_eq!(
        (stats.events, stats.malformed),
        (1, 0),
        "{:?}",
        stats.problems()
    );
    let cr_crlf = cr_cr.replace("\r\r", "\r\r\n");
    let (_, stats) = common::replay_bytes(cr_crlf.as_bytes());
    assert_eq!(
        (stats.events, stats.malformed),
        (1, 0),
        "{:?}",
        stats.problems()
    );
    // Without its blank line the frame is truncated, whatever the line end.
    for cut in ["data: {}\r", "data: {}\n", "data: {}\r\n", "data: {}"] {
        let (_, stats) = common::replay_bytes(cut.as_bytes());
        assert_eq!(stats.malformed, 1, "{cut:?}");
    }
}
