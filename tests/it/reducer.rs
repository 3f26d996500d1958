//! Reducer behaviour on hand-written and recorded events.

use crate::common;

use ocview::model::entity::part_source::{self, UnknownSource};
use ocview::model::{
    Envelope, MessageInfo, NoObserver, Part, PartBody, ReplyObserver, SessionStatus, Store,
    ToolStatus,
};
use ocview::source::record::{Decoded, decode};
use serde_json::{Value, json};

const SES: &str = "ses_dfd705bd5ffeOV3U02UYpF0oDi";
const USER: &str = "msg_2028fa44f001gm4v9MGQm4rEFu";
const ASSIST: &str = "msg_2028fa6e0001joJE6J14jiKoY1";
const TEXT: &str = "prt_2028fab06001U8u1PSr3Jn1twG";
const TOOL: &str = "prt_2028fab33001b4DAXr8xuZbAqw";

/// An envelope from event JSON; `n` makes the evt_ id (and so its order).
fn ev(n: u32, kind: &str, props: Value) -> Envelope {
    let line = json!({"id": format!("evt_{:012x}abc", 0x2028fb000000u64 + n as u64), "type": kind, "properties": props});
    match decode(&line.to_string()).unwrap() {
        Decoded::Event(e) => e,
        other => panic!("not an event: {other:?}"),
    }
}

fn apply(store: &mut Store, env: Envelope) -> ocview::model::Outcome {
    store.apply(env, &mut NoObserver)
}

fn session_created(n: u32, id: &str, parent: Option<&str>) -> Envelope {
    let mut info =
        json!({"id": id, "title": "t", "directory": "/p", "time": {"created": 1, "updated": n}});
    if let Some(p) = parent {
        info["parentID"] = json!(p);
    }
    ev(n, "session.created", json!({"sessionID": id, "info": info}))
}

fn user_msg(n: u32) -> Envelope {
    ev(
        n,
        "message.updated",
        json!({"sessionID": SES, "info": {"id": USER, "sessionID": SES, "role": "user", "time": {"created": 1}}}),
    )
}

fn assistant_msg(n: u32, id: &str, completed: bool) -> Envelope {
    let mut info = json!({"id": id, "sessionID": SES, "role": "assistant", "parentID": USER, "time": {"created": 2}});
    if completed {
        info["time"]["completed"] = json!(3);
    }
    ev(
        n,
        "message.updated",
        json!({"sessionID": SES, "info": info}),
    )
}

fn text_part(n: u32, text: &str, end: bool) -> Envelope {
    let mut part = json!({"id": TEXT, "messageID": ASSIST, "sessionID": SES, "type": "text", "text": text, "time": {"start": 1}});
    if end {
        part["time"]["end"] = json!(2);
    }
    ev(
        n,
        "message.part.updated",
        json!({"sessionID": SES, "part": part, "time": 1}),
    )
}

fn delta(n: u32, text: &str) -> Envelope {
    ev(
        n,
        "message.part.delta",
        json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": text}),
    )
}

fn tool_part(n: u32, status: &str) -> Envelope {
    let mut state = json!({"status": status, "input": {"command": "ls"}});
    if status == "completed" {
        state["output"] = json!("a\nb");
        state["title"] = json!("ls");
    }
    ev(
        n,
        "message.part.updated",
        json!({"sessionID": SES, "part": {"id": TOOL, "messageID": ASSIST, "sessionID": SES, "type": "tool", "tool": "bash", "callID": "call_1", "state": state}}),
    )
}

fn base() -> Store {
    let mut s = Store::new();
    apply(&mut s, session_created(1, SES, None));
    apply(&mut s, user_msg(2));
    apply(&mut s, assistant_msg(3, ASSIST, false));
    s
}

fn text_of(store: &Store) -> String {
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    m.part(TEXT).unwrap().text().unwrap().to_string()
}

#[test]
fn delta_before_its_part_is_held_then_applied() {
    let mut s = base();
    let out = apply(&mut s, delta(11, "Hello "));
    assert_eq!(out.effect, ocview::model::Effect::Held);
    apply(&mut s, delta(12, "world"));
    assert_eq!(s.held_delta_count(), 2);
    apply(&mut s, text_part(10, "", false));
    assert_eq!(text_of(&s), "Hello world");
    assert_eq!(s.held_delta_count(), 0);
    // A held delta older than the part version that arrives is already in it.
    let mut s = base();
    apply(&mut s, delta(11, "stale"));
    apply(&mut s, text_part(20, "final", true));
    assert_eq!(text_of(&s), "final");
}

#[test]
fn duplicate_events_change_nothing() {
    let mut once = base();
    let mut twice = base();
    let events = [
        text_part(10, "", false),
        delta(11, "ab"),
        delta(12, "cd"),
        tool_part(13, "running"),
    ];
    for e in &events {
        apply(&mut once, e.clone());
        apply(&mut twice, e.clone());
        let out = apply(&mut twice, e.clone());
        assert_eq!(out.effect, ocview::model::Effect::Stale);
    }
    assert_eq!(text_of(&once), "abcd");
    assert_eq!(text_of(&twice), "abcd");
}

/// A delta said again later, not next to its twin (a reconnect's replay,
/// a recording stitched together), is applied once: held before its part,
/// while streaming, and after a part update that already holds it.
#[test]
fn a_delta_said_again_later_is_applied_once_adjacent_or_not() {
    let mut s = base();
    apply(&mut s, delta(11, "ab"));
    apply(&mut s, delta(12, "cd"));
    // Both held: the first again, before the part comes.
    assert_eq!(
        apply(&mut s, delta(11, "ab")).effect,
        ocview::model::Effect::Stale
    );
    apply(&mut s, text_part(10, "", false));
    assert_eq!(text_of(&s), "abcd");
    apply(&mut s, delta(13, "ef"));
    for (n, text) in [(11, "ab"), (12, "cd"), (13, "ef")] {
        let out = apply(&mut s, delta(n, text));
        assert_eq!(out.effect, ocview::model::Effect::Stale, "delta {n}");
    }
    assert_eq!(text_of(&s), "abcdef");
    // An update that is not final holds the text so far: the deltas in
    // it stay applied.
    apply(&mut s, text_part(14, "abcdef", false));
    assert_eq!(
        apply(&mut s, delta(12, "cd")).effect,
        ocview::model::Effect::Stale
    );
    apply(&mut s, delta(15, "gh"));
    assert_eq!(text_of(&s), "abcdefgh");
}

#[test]
fn every_recorded_event_applied_twice_gives_the_same_transcript() {
    for scenario in common::scenarios() {
        let bytes = std::fs::read(scenario.join("event.jsonl")).unwrap();
        let doubled: Vec<u8> = String::from_utf8(bytes.clone())
            .unwrap()
            .lines()
            .flat_map(|l| [l, "\n", l, "\n"])
            .collect::<String>()
            .into_bytes();
        let (a, _) = common::replay_bytes(&bytes);
        let (b, stats) = common::replay_bytes(&doubled);
        let empty = ocview::source::IngestStats::default();
        // Ignored events are counted per copy; everything else must match.
        let state = |s| {
            ocview::headless::dump::render(s, &empty)
                .lines()
                .filter(|l| !l.starts_with("ignored types:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(state(&a), state(&b), "{}", scenario.display());
        assert!(stats.stale > 0);
    }
}

#[test]
fn out_of_order_part_updates_never_go_backwards() {
    let mut s = base();
    apply(&mut s, tool_part(20, "completed"));
    assert_eq!(
        apply(&mut s, tool_part(15, "running")).effect,
        ocview::model::Effect::Stale
    );
    // Without ordering information (a snapshot) the state machine still holds.
    let mut snapshot = tool_part(0, "running");
    snapshot.seq = 0;
    apply(&mut s, snapshot);
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    assert_eq!(
        m.part(TOOL).unwrap().tool().unwrap().state.status,
        ToolStatus::Completed
    );
    // A final text is not replaced by an older unfinished one, and a
    // mid-stream snapshot does not cut text we already streamed.
    let mut s = base();
    apply(&mut s, text_part(10, "", false));
    apply(&mut s, delta(11, "streamed so far"));
    let mut mid = text_part(0, "streamed", false);
    mid.seq = 0;
    apply(&mut s, mid);
    assert_eq!(text_of(&s), "streamed so far");
    apply(&mut s, text_part(30, "all of it", true));
    let mut old = text_part(0, "", false);
    old.seq = 0;
    apply(&mut s, old);
    assert_eq!(text_of(&s), "all of it");
    // Deltas after the final text are already in it.
    apply(&mut s, delta(31, "late"));
    assert_eq!(text_of(&s), "all of it");
}

#[test]
fn parts_and_messages_stay_sorted_by_id_whatever_the_arrival_order() {
    let mut s = base();
    for (n, id) in [
        (10, "prt_2028fab09001c"),
        (11, "prt_2028fab01001a"),
        (12, "prt_2028fab05001b"),
    ] {
        apply(
            &mut s,
            ev(
                n,
                "message.part.updated",
                json!({"sessionID": SES, "part": {"id": id, "messageID": ASSIST, "sessionID": SES, "type": "step-start"}}),
            ),
        );
    }
    let ids: Vec<_> = s
        .session(SES)
        .unwrap()
        .message(ASSIST)
        .unwrap()
        .parts
        .iter()
        .map(|p| p.id.clone())
        .collect();
    assert_eq!(
        ids,
        [
            "prt_2028fab01001a",
            "prt_2028fab05001b",
            "prt_2028fab09001c"
        ]
    );
    // Sessions: ses_ ids descend with time, so string order is newest first.
    apply(&mut s, session_created(20, "ses_aaaa", None));
    apply(&mut s, session_created(21, "ses_zzzz", None));
    let order: Vec<_> = s.sessions().iter().map(|x| x.id().to_string()).collect();
    assert_eq!(order, ["ses_aaaa", SES, "ses_zzzz"]);
}

#[test]
fn removals() {
    let mut s = base();
    apply(&mut s, text_part(10, "x", true));
    apply(&mut s, tool_part(11, "pending"));
    let out = apply(
        &mut s,
        ev(
            12,
            "message.part.removed",
            json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT}),
        ),
    );
    assert_eq!(out.change.part.as_deref(), Some(TEXT));
    let m = s.session(SES).unwrap().message(ASSIST).unwrap();
    assert!(m.part(TEXT).is_none() && m.part(TOOL).is_some());
    apply(
        &mut s,
        ev(
            13,
            "message.removed",
            json!({"sessionID": SES, "messageID": ASSIST}),
        ),
    );
    assert!(s.session(SES).unwrap().message(ASSIST).is_none());
    let out = apply(
        &mut s,
        ev(
            14,
            "session.deleted",
            json!({"sessionID": SES, "info": {"id": SES}}),
        ),
    );
    assert!(out.change.session_list);
    assert!(s.session(SES).is_none());
    // Removing what is not there is reported, not fatal.
    let out = apply(
        &mut s,
        ev(
            15,
            "message.removed",
            json!({"sessionID": SES, "messageID": ASSIST}),
        ),
    );
    assert!(out.orphan.is_some());
}

#[derive(Default)]
struct Log(Vec<String>);

impl ReplyObserver for Log {
    fn message_updated(&mut self, info: &MessageInfo) {
        self.0.push(format!("message_updated {}", info.id));
    }
    fn part_added(&mut self, part: &Part, index: usize) {
        self.0.push(format!("part_added {} #{index}", part.kind()));
    }
    fn part_changed(&mut self, part: &Part, _: usize, delta: &str) {
        self.0
            .push(format!("part_changed {} {delta:?}", part.kind()));
    }
    fn part_finalized(&mut self, part: &Part, _: usize) {
        self.0.push(format!("part_finalized {}", part.kind()));
    }
    fn tool_progressed(&mut self, part: &Part, _: usize, status: &ToolStatus) {
        self.0.push(format!(
            "tool_progressed {} {}",
            part.tool().unwrap().tool,
            status.label()
        ));
    }
    fn step_finished(&mut self, _: &str, _: f64, tokens: &ocview::model::Tokens) {
        self.0.push(format!("step_finished {}", tokens.sum()));
    }
    fn todos_changed(&mut self, _: &str, todos: &[ocview::model::Todo]) {
        self.0.push(format!("todos_changed {}", todos.len()));
    }
    fn permission_asked(&mut self, r: &ocview::model::PermissionRequest) {
        self.0.push(format!("permission_asked {}", r.permission));
    }
    fn permission_replied(&mut self, _: &str, _: &str, reply: &str, asked_at: Option<i64>) {
        self.0.push(format!(
            "permission_replied {reply} asked_at={}",
            asked_at.is_some()
        ));
    }
    fn question_asked(&mut self, r: &ocview::model::QuestionRequest) {
        self.0.push(format!("question_asked {}", r.questions.len()));
    }
    fn question_replied(&mut self, _: &str, _: &str, answers: &[Vec<String>], _: Option<i64>) {
        self.0.push(format!("question_replied {answers:?}"));
    }
    fn question_rejected(&mut self, _: &str, _: &str, _: Option<i64>) {
        self.0.push("question_rejected".into());
    }
    fn session_errored(&mut self, _: Option<&str>, text: &str, _: &ocview::model::ErrorInfo) {
        self.0.push(format!("session_errored {text}"));
    }
    fn session_retried(&mut self, _: &str, attempt: Option<u64>, message: &str) {
        self.0
            .push(format!("session_retried {attempt:?} {message}"));
    }
}

#[test]
fn status_transitions_including_retry() {
    let mut s = base();
    let mut log = Log::default();
    let status = |n, st: Value| ev(n, "session.status", json!({"sessionID": SES, "status": st}));
    s.apply(status(10, json!({"type": "busy"})), &mut log);
    assert_eq!(s.session(SES).unwrap().status, SessionStatus::Busy);
    // Repeated busy: nothing to redraw.
    let out = s.apply(status(11, json!({"type": "busy"})), &mut log);
    assert_eq!(out.change, Default::default());
    let out = s.apply(status(12, json!({"type": "retry", "attempt": 2, "message": "Rate limited", "next": 1795339393393u64})), &mut log);
    assert!(out.change.session_list);
    assert_eq!(
        s.session(SES).unwrap().status,
        SessionStatus::Retry {
            attempt: Some(2),
            message: "Rate limited".into(),
            next: Some(1795339393393)
        }
    );
    s.apply(status(13, json!({"type": "busy"})), &mut log);
    s.apply(ev(14, "session.error", json!({"sessionID": SES, "error": {"name": "APIError", "data": {"message": "bad key"}}})), &mut log);
    s.apply(ev(15, "session.idle", json!({"sessionID": SES})), &mut log);
    s.apply(status(16, json!({"type": "shiny-new"})), &mut log);
    let session = s.session(SES).unwrap();
    assert_eq!(session.status, SessionStatus::Other("shiny-new".into()));
    assert_eq!(
        session.error.as_ref().unwrap().summary(),
        "APIError: bad key"
    );
    assert_eq!(
        log.0,
        [
            "session_retried Some(2) Rate limited",
            "session_errored APIError: bad key"
        ]
    );
}

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
