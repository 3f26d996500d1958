//! Reducer rules, continued: todos as stream-only parts, part sources, unknown types kept, what a change names, turns, snapshots overlapping the stream, the observer's order, an older page's range.

use crate::common;
use crate::reducer::*;
use ocview::model::entity::part_source::{self, UnknownSource};
use ocview::model::{Envelope, MessageInfo, NoObserver, Part, PartBody, Store};
use serde_json::{Value, json};

fn todo_event(n: u32, statuses: &[&str]) -> Envelope {
    let todos: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, st)| json!({"content": format!("task {i}"), "status": st, "priority": "high"}))
        .collect();
    ev(n, "todo.updated", json!({"sessionID": SES, "todos": todos}))
}

#[test]
fn todo_updates_materialise_as_stream_only_parts_that_survive_finalisation() {
    let mut s = base();
    apply(&mut s, text_part(10, "hi", true));
    let out = apply(&mut s, todo_event(20, &["pending", "in_progress"]));
    let todo_id = out.change.part.clone().expect("a part was materialised");
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    let part = m.part(&todo_id).unwrap();
    assert!(part.is_stream_only());
    assert_eq!(part.tool().unwrap().tool, "todowrite");
    assert_eq!(
        part.tool_state_field("input").unwrap()["todos"][1]["status"],
        "in_progress"
    );
    assert_eq!(
        m.parts.last().unwrap().id,
        todo_id,
        "placed after the parts before it"
    );
    assert_eq!(s.session(SES).unwrap().todos.len(), 2);
    // The same event twice: still one part.
    apply(&mut s, todo_event(20, &["pending", "in_progress"]));
    assert_eq!(
        s.session(SES).unwrap().message(ASSIST).unwrap().parts.len(),
        2
    );

    // Finalisation: the server's list replaces wire parts and keeps ours.
    let info = MessageInfo::from_raw(
        &serde_json::value::to_raw_value(&json!({"id": ASSIST, "sessionID": SES, "role": "assistant", "parentID": USER, "time": {"created": 2, "completed": 3}})).unwrap(),
    )
    .unwrap();
    let server_text = Part::from_raw(
        &serde_json::value::to_raw_value(&json!({"id": TEXT, "messageID": ASSIST, "sessionID": SES, "type": "text", "text": "hi (final)", "time": {"start": 1, "end": 2}})).unwrap(),
    )
    .unwrap();
    let user = s.session(SES).unwrap().message(USER).unwrap().info.clone();
    s.finalize_session(
        SES,
        vec![(user, vec![]), (info, vec![server_text])],
        None,
        &mut NoObserver,
    );
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    assert_eq!(m.info.completed, Some(3));
    assert_eq!(m.part(TEXT).unwrap().text(), Some("hi (final)"));
    assert!(m.part(&todo_id).unwrap().is_stream_only());
    assert_eq!(m.parts.len(), 2);
}

#[test]
fn part_sources_are_registered() {
    let mut part = Part::from_raw(
        &serde_json::value::to_raw_value(
            &json!({"id": "prt_1", "messageID": "msg_1", "type": "text", "text": ""}),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(!part.is_stream_only());
    assert_eq!(
        part_source::stamp(&mut part, "todo.updatd"),
        Err(UnknownSource("todo.updatd".into()))
    );
    assert!(!part.is_stream_only());
    part_source::stamp(&mut part, "todo.updated").unwrap();
    assert!(part.is_stream_only());
}

#[test]
fn unknown_part_and_event_types_are_kept_not_errors() {
    let mut s = base();
    let out = apply(
        &mut s,
        ev(
            10,
            "message.part.updated",
            json!({"sessionID": SES, "part": {"id": "prt_x", "messageID": ASSIST, "sessionID": SES, "type": "hologram", "beam": [1, 2]}}),
        ),
    );
    assert_eq!(out.effect, ocview::model::Effect::Applied);
    let part = s
        .session(SES)
        .unwrap()
        .message(ASSIST)
        .unwrap()
        .part("prt_x")
        .unwrap()
        .clone();
    assert!(matches!(part.body, PartBody::Unknown { ref kind } if kind == "hologram"));
    assert_eq!(part.to_value()["beam"], json!([1, 2]));
    // A known type with fields of the wrong shape degrades the same way.
    apply(
        &mut s,
        ev(
            11,
            "message.part.updated",
            json!({"sessionID": SES, "part": {"id": "prt_y", "messageID": ASSIST, "sessionID": SES, "type": "text", "text": {"oops": 1}}}),
        ),
    );
    assert!(matches!(
        s.session(SES)
            .unwrap()
            .message(ASSIST)
            .unwrap()
            .part("prt_y")
            .unwrap()
            .body,
        PartBody::Unknown { .. }
    ));
    let out = apply(&mut s, ev(12, "lsp.diagnostics", json!({"x": 1})));
    assert_eq!(out.effect, ocview::model::Effect::Ignored);
    assert_eq!(s.ignored_counts()["lsp.diagnostics"], 1);
}

#[test]
fn changes_name_exactly_what_to_redraw() {
    let mut s = base();
    apply(&mut s, text_part(10, "", false));
    let before = s
        .session(SES)
        .unwrap()
        .message(ASSIST)
        .unwrap()
        .part(TEXT)
        .unwrap()
        .revision;
    let out = apply(&mut s, delta(11, "x"));
    assert_eq!(out.change.session.as_deref(), Some(SES));
    assert_eq!(out.change.message.as_deref(), Some(ASSIST));
    assert_eq!(out.change.part.as_deref(), Some(TEXT));
    assert!(!out.change.session_list);
    let after = s
        .session(SES)
        .unwrap()
        .message(ASSIST)
        .unwrap()
        .part(TEXT)
        .unwrap()
        .revision;
    assert!(after > before);
    let out = apply(&mut s, session_created(12, "ses_new", None));
    assert!(out.change.session_list);
}

#[test]
fn turns_group_a_user_message_with_its_assistant_messages() {
    let mut s = base();
    apply(&mut s, assistant_msg(4, "msg_2028fa6e0002x", true));
    apply(
        &mut s,
        ev(
            5,
            "message.updated",
            json!({"sessionID": SES, "info": {"id": "msg_2028fa6e0003u", "sessionID": SES, "role": "user"}}),
        ),
    );
    apply(
        &mut s,
        ev(
            6,
            "message.updated",
            json!({"sessionID": SES, "info": {"id": "msg_2028fa6e0004a", "sessionID": SES, "role": "assistant", "parentID": "msg_2028fa6e0003u"}}),
        ),
    );
    let session = s.session(SES).unwrap();
    let turns = session.turns();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].user.unwrap().id(), USER);
    let ids: Vec<_> = turns[0].assistants.iter().map(|m| m.id()).collect();
    assert_eq!(ids, [ASSIST, "msg_2028fa6e0002x"]);
    assert_eq!(turns[1].assistants.len(), 1);
}

#[test]
fn a_snapshot_overlapping_the_stream_gives_the_same_state() {
    // Apply the server's final messages as if loaded over REST (no event
    // ids), then the whole recorded stream on top: same state as the stream alone.
    for scenario in common::scenarios() {
        let bytes = std::fs::read(scenario.join("event.jsonl")).unwrap();
        let (alone, _) = common::replay_bytes(&bytes);
        let messages: Value =
            serde_json::from_str(&std::fs::read_to_string(scenario.join("messages.json")).unwrap())
                .unwrap();
        let mut snapshot = String::new();
        for m in messages.as_array().unwrap() {
            let sid = m["info"]["sessionID"].clone();
            snapshot += &json!({"type": "message.updated", "properties": {"sessionID": sid, "info": m["info"]}}).to_string();
            snapshot.push('\n');
            for p in m["parts"].as_array().unwrap() {
                snapshot += &json!({"type": "message.part.updated", "properties": {"sessionID": sid, "part": p}}).to_string();
                snapshot.push('\n');
            }
        }
        let mut combined = snapshot.into_bytes();
        combined.extend_from_slice(&bytes);
        let (both, _) = common::replay_bytes(&combined);
        let empty = ocview::source::IngestStats::default();
        assert_eq!(
            ocview::headless::dump::render(&both, &empty),
            ocview::headless::dump::render(&alone, &empty),
            "{}",
            scenario.display()
        );
    }
}

#[test]
fn observer_callbacks_fire_in_order_for_a_recorded_stream() {
    let path = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    let mut log = Log::default();
    common::replay_with(&std::fs::read(path).unwrap(), &mut log);
    let got: Vec<&str> = log.0.iter().map(String::as_str).collect();
    insta_like(&got);
}

/// The expected sequence for a_bash_permission_once, checked by reading the
/// capture: user prompt; step 1 streams text, runs bash after a permission
/// answered once, finishes; step 2 answers.
fn insta_like(got: &[&str]) {
    let compact: Vec<String> = got
        .iter()
        .filter(|l| !l.starts_with("message_updated") && !l.starts_with("part_changed"))
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        compact,
        [
            "part_added text #0",
            "part_added step-start #0",
            "part_added text #1",
            "part_added tool #2",
            "tool_progressed bash running",
            "part_finalized text",
            "permission_asked bash",
            "permission_replied once asked_at=true",
            "tool_progressed bash running",
            "tool_progressed bash running",
            "tool_progressed bash completed",
            "part_added step-finish #3",
            "step_finished 1070",
            "part_added step-start #0",
            "part_added text #1",
            "part_finalized text",
            "part_added step-finish #2",
            "step_finished 1090",
        ]
    );
    let deltas = got.iter().filter(|l| l.starts_with("part_changed")).count();
    assert_eq!(
        deltas, 12,
        "every delta in the capture reaches the observer"
    );
    assert!(got[0].starts_with("message_updated msg_2028fa44f001"));
}

#[test]
fn an_older_page_replaces_only_its_own_range() {
    let mut s = Store::new();
    let info = |id: &str| {
        MessageInfo::from_raw(
            &serde_json::value::to_raw_value(&json!({"id": id, "sessionID": SES, "role": "user"}))
                .unwrap(),
        )
        .unwrap()
    };
    s.finalize_session(
        SES,
        vec![(info("msg_3"), vec![]), (info("msg_4"), vec![])],
        None,
        &mut NoObserver,
    );
    // The page before msg_3, from the server: msg_1 and msg_2.
    s.finalize_session(
        SES,
        vec![(info("msg_1"), vec![]), (info("msg_2"), vec![])],
        Some("msg_3"),
        &mut NoObserver,
    );
    let ids: Vec<&str> = s
        .session(SES)
        .unwrap()
        .messages
        .iter()
        .map(|m| m.id())
        .collect();
    assert_eq!(ids, ["msg_1", "msg_2", "msg_3", "msg_4"]);
    // The newest page again, without msg_4 (removed on the server): it goes,
    // the older page stays.
    s.finalize_session(SES, vec![(info("msg_3"), vec![])], None, &mut NoObserver);
    let ids: Vec<&str> = s
        .session(SES)
        .unwrap()
        .messages
        .iter()
        .map(|m| m.id())
        .collect();
    assert_eq!(ids, ["msg_1", "msg_2", "msg_3"]);
}

/// Every message's parts, as (count, room): a message holds tens of
/// thousands of siblings in a long session, so empty room is paid for
/// tens of thousands of times (issue 36, point 7).
fn part_room(s: &Store) -> Vec<(usize, usize)> {
    s.sessions()
        .iter()
        .flat_map(|session| session.messages.iter())
        .map(|m| (m.parts.len(), m.parts.capacity()))
        .collect()
}

#[test]
fn a_message_holds_no_room_for_parts_that_never_come() {
    // Streamed: parts arrive one event at a time.
    let mut streamed = 0;
    for scenario in common::scenarios() {
        let file = scenario.join("event.jsonl");
        let (s, _) = common::replay_file(&file);
        for (len, room) in part_room(&s) {
            if len <= 8 {
                assert_eq!(
                    room,
                    len,
                    "{}: {len} parts, room for {room}",
                    file.display()
                );
                streamed += 1;
            }
        }
    }
    assert!(streamed > 10, "the scenarios stream messages ({streamed})");
    // Loaded: a page whose source collected each message's parts loosely.
    let mut s = Store::new();
    let info = MessageInfo::from_raw(
        &serde_json::value::to_raw_value(&json!({"id": "msg_1", "sessionID": SES, "role": "user"}))
            .unwrap(),
    )
    .unwrap();
    let part = Part::from_raw(
        &serde_json::value::to_raw_value(&json!({
            "id": "prt_1", "messageID": "msg_1", "sessionID": SES, "type": "text", "text": "hi"
        }))
        .unwrap(),
    )
    .unwrap();
    let mut loose = Vec::with_capacity(4);
    loose.push(part);
    s.finalize_session(SES, vec![(info, loose)], None, &mut NoObserver);
    assert_eq!(part_room(&s), [(1, 1)]);
}
