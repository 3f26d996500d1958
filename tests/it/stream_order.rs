//! Order by the stream, not by clocks (issue 13, point 4; issue 22, point
//! 6), and SSE line ends as the spec allows them (issue 13, point 6).
//! Hand-made streams, one rule each.

use crate::common;

use ocview::model::{Effect, Envelope, NoObserver, Store};
use ocview::source::decode::record::{Decoded, decode};
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

/// An event stamped by the server's clock after it stepped back: opencode's
/// `evt_`, `msg_` and `prt_` ids are that clock (ms × 0x1000 plus a
/// counter), so the position is lower than before the step, as is every
/// time in the payload.
fn after_step(n: u64, kind: &str, props: Value) -> Envelope {
    ev_at(0x2028f0000000 + n, "steppedBACKxyz", kind, props)
}

const TOOL: &str = "prt_2028fab07001ToolPartXXXXXX";

fn tool_state(status: &str) -> Value {
    let part = json!({"id": TOOL, "messageID": ASSIST, "sessionID": SES, "type": "tool", "tool": "bash", "callID": "call_1",
        "state": {"status": status, "input": {"command": "ls"}, "output": "a", "title": "ls", "time": {"start": 1, "end": 2}}});
    json!({"sessionID": SES, "part": part, "time": 1})
}

fn tool_status(store: &Store) -> String {
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    let part = m.part(TOOL).unwrap();
    match &part.body {
        ocview::model::PartBody::Tool(t) => t.state.status.label().to_string(),
        other => panic!("not a tool: {other:?}"),
    }
}

#[test]
fn a_clock_stepping_back_never_makes_later_updates_stale() {
    let mut store = base();
    apply(&mut store, session_updated(20, "before the step", 20_000));
    apply(&mut store, delta_at(0x2028fb000021, "beforeTAILxxxx", "a"));
    apply(
        &mut store,
        ev(22, "message.part.updated", tool_state("pending")),
    );
    // The clock steps back: every position and time below is lower.
    let renamed = json!({"id": SES, "title": "after the step", "directory": "/p", "time": {"created": 1, "updated": 5_000}});
    let outcome = after_step(
        1,
        "session.updated",
        json!({"sessionID": SES, "info": renamed}),
    );
    assert_eq!(apply(&mut store, outcome), Effect::Applied);
    assert_eq!(title(&store), "after the step");
    for (n, delta) in [(2, "b"), (3, "c")] {
        let d = after_step(
            n,
            "message.part.delta",
            json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": delta}),
        );
        assert_eq!(apply(&mut store, d), Effect::Applied);
    }
    assert_eq!(text(&store), "abc");
    for (n, status) in [(4, "running"), (5, "completed")] {
        let e = after_step(n, "message.part.updated", tool_state(status));
        assert_eq!(apply(&mut store, e), Effect::Applied, "{status}");
        assert_eq!(tool_status(&store), status);
    }
    let cost = json!({"id": ASSIST, "sessionID": SES, "role": "assistant", "parentID": USER, "cost": 0.5, "time": {"created": 2}});
    let e = after_step(
        6,
        "message.updated",
        json!({"sessionID": SES, "info": cost}),
    );
    assert_eq!(apply(&mut store, e), Effect::Applied);
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    assert_eq!(m.info.cost, 0.5);
    // The same event again is still recognised, whatever its position.
    let again = after_step(
        3,
        "message.part.delta",
        json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": "c"}),
    );
    assert_eq!(apply(&mut store, again), Effect::Stale);
    assert_eq!(text(&store), "abc");
}

/// A todo list the stream sends goes right after the part the stream named
/// last (the `todowrite` call that caused it), not where its id's clock
/// would sort it: after a step back the event's position sorts before the
/// call, and the list would show as a card of its own, before its call.
#[test]
fn a_todo_list_goes_after_its_call_in_stream_order() {
    let mut store = base();
    let call = json!({"id": TOOL, "messageID": ASSIST, "sessionID": SES, "type": "tool", "tool": "todowrite", "callID": "call_t",
        "state": {"status": "pending", "input": {}, "raw": ""}});
    apply(
        &mut store,
        ev(
            30,
            "message.part.updated",
            json!({"sessionID": SES, "part": call, "time": 1}),
        ),
    );
    let todos = json!([{"content": "rename add", "status": "in_progress", "priority": "high"}]);
    let e = after_step(7, "todo.updated", json!({"sessionID": SES, "todos": todos}));
    assert_eq!(apply(&mut store, e), Effect::Applied);
    let dump = ocview::headless::dump::render(&store, &Default::default());
    assert_eq!(dump.matches("tool todowrite").count(), 1, "{dump}");
    assert!(!dump.contains("stream-only"), "{dump}");
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    let ids: Vec<&str> = m.parts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[2].starts_with(TOOL) && ids[1] == TOOL, "{ids:?}");
}

/// The last status event in stream order wins: their ids (the server's
/// clock) go backwards here, a retry's `next` is long past, and a
/// snapshot's status carries no position at all.
#[test]
fn session_status_follows_stream_order_whatever_the_times_say() {
    let mut store = base();
    let status = |pos: u64, status: Value| {
        ev_at(
            pos,
            "statusTAILxxxx",
            "session.status",
            json!({"sessionID": SES, "status": status}),
        )
    };
    let label = |store: &Store| store.session(SES).unwrap().status.label().to_string();
    let steps = [
        (0x2028fb000300, json!({"type": "busy"}), "busy"),
        (
            0x2028fb000200,
            json!({"type": "retry", "attempt": 1, "message": "overloaded", "next": 1}),
            "retry",
        ),
        (0x2028fa000100, json!({"type": "busy"}), "busy"),
        (0x2028f0000000, json!({"type": "idle"}), "idle"),
        (0x2028ef000000, json!({"type": "busy"}), "busy"),
    ];
    for (pos, s, want) in steps {
        apply(&mut store, status(pos, s));
        assert_eq!(label(&store), want);
    }
    let mut snapshot = status(0, json!({"type": "idle"}));
    (snapshot.seq, snapshot.tag) = (0, 0);
    apply(&mut store, snapshot);
    assert_eq!(label(&store), "idle");
    apply(&mut store, status(0x2028e0000000, json!({"type": "busy"})));
    assert_eq!(label(&store), "busy");
    let idle = ev_at(
        0x2028d0000000,
        "idleTAILxxxxxx",
        "session.idle",
        json!({"sessionID": SES}),
    );
    apply(&mut store, idle);
    assert_eq!(label(&store), "idle");
}

/// A permission or question naming no session (no `sessionID`, or an empty
/// one), and the replies to them: counted as ignored with the reason, in
/// the stats and `--dump`, never a session whose id is "".
#[test]
fn a_prompt_without_a_session_is_ignored_with_its_reason() {
    let lines = [
        json!({"type": "session.created", "properties": {"sessionID": SES, "info": {"id": SES, "title": "t", "time": {"created": 1, "updated": 1}}}}),
        json!({"type": "permission.asked", "properties": {"id": "per_2028fb000001NoSession01", "permission": "bash", "patterns": ["ls"], "metadata": {}, "always": []}}),
        json!({"type": "question.asked", "properties": {"id": "que_2028fb000002NoSession02", "sessionID": "", "questions": [{"question": "Go?", "header": "go", "options": []}]}}),
        json!({"type": "permission.replied", "properties": {"requestID": "per_2028fb000001NoSession01", "reply": "once"}}),
        json!({"type": "question.rejected", "properties": {"requestID": "que_2028fb000002NoSession02"}}),
        json!({"type": "permission.asked", "properties": {"id": "per_2028fb000003WithSession", "sessionID": SES, "permission": "bash", "patterns": ["ls"], "metadata": {}, "always": []}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (store, stats) = common::replay_bytes(text.as_bytes());
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(stats.ignored, 4);
    assert!(store.session("").is_none(), "a session with an empty id");
    assert_eq!(store.sessions().len(), 1);
    let pending: Vec<&str> = store.pending_prompts().map(|p| p.request.id()).collect();
    assert_eq!(pending, ["per_2028fb000003WithSession"]);
    let dump = ocview::headless::dump::render(&store, &stats);
    assert!(
        dump.contains(
            "ignored types: permission.asked without sessionID×1, permission.replied without sessionID×1, \
             question.asked without sessionID×1, question.rejected without sessionID×1"
        ),
        "{dump}"
    );
    assert!(
        dump.contains("summary: 2 events applied, 4 ignored"),
        "{dump}"
    );
    assert!(dump.contains("sessions: 1\n"), "{dump}");
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

/// A reconnect's snapshot comes after everything the stream said before
/// the gap: it applies, even when the server's clock stepped back and its
/// `time.updated` is earlier than the last one streamed.
#[test]
fn a_snapshot_applies_in_stream_order_whatever_its_time_says() {
    let mut store = base();
    apply(&mut store, session_updated(20, "streamed", 20_000));
    apply(&mut store, connected(21));
    let mut snapshot = session_updated(0, "renamed while away", 15_000);
    (snapshot.seq, snapshot.tag) = (0, 0);
    assert_eq!(apply(&mut store, snapshot), Effect::Applied);
    assert_eq!(title(&store), "renamed while away");
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
    let want = ocview::headless::dump::render(&want, &Default::default());
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
            ocview::headless::dump::render(&store, &Default::default()),
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
