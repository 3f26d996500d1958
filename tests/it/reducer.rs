//! Reducer behaviour on hand-written and recorded events.

use crate::common;

use ocview::model::{
    Envelope, MessageInfo, NoObserver, Part, ReplyObserver, SessionStatus, Store, ToolStatus,
};
use ocview::source::decode::record::{Decoded, decode};
use serde_json::{Value, json};

pub(crate) const SES: &str = "ses_dfd705bd5ffeOV3U02UYpF0oDi";
pub(crate) const USER: &str = "msg_2028fa44f001gm4v9MGQm4rEFu";
pub(crate) const ASSIST: &str = "msg_2028fa6e0001joJE6J14jiKoY1";
pub(crate) const TEXT: &str = "prt_2028fab06001U8u1PSr3Jn1twG";
pub(crate) const TOOL: &str = "prt_2028fab33001b4DAXr8xuZbAqw";

/// An envelope from event JSON; `n` makes the evt_ id (and so its order).
pub(crate) fn ev(n: u32, kind: &str, props: Value) -> Envelope {
    let line = json!({"id": format!("evt_{:012x}abc", 0x2028fb000000u64 + n as u64), "type": kind, "properties": props});
    match decode(&line.to_string()).unwrap() {
        Decoded::Event(e) => e,
        other => panic!("not an event: {other:?}"),
    }
}

pub(crate) fn apply(store: &mut Store, env: Envelope) -> ocview::model::Outcome {
    store.apply(env, &mut NoObserver)
}

pub(crate) fn session_created(n: u32, id: &str, parent: Option<&str>) -> Envelope {
    let mut info =
        json!({"id": id, "title": "t", "directory": "/p", "time": {"created": 1, "updated": n}});
    if let Some(p) = parent {
        info["parentID"] = json!(p);
    }
    ev(n, "session.created", json!({"sessionID": id, "info": info}))
}

pub(crate) fn user_msg(n: u32) -> Envelope {
    ev(
        n,
        "message.updated",
        json!({"sessionID": SES, "info": {"id": USER, "sessionID": SES, "role": "user", "time": {"created": 1}}}),
    )
}

pub(crate) fn assistant_msg(n: u32, id: &str, completed: bool) -> Envelope {
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

pub(crate) fn text_part(n: u32, text: &str, end: bool) -> Envelope {
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

pub(crate) fn delta(n: u32, text: &str) -> Envelope {
    ev(
        n,
        "message.part.delta",
        json!({"sessionID": SES, "messageID": ASSIST, "partID": TEXT, "field": "text", "delta": text}),
    )
}

pub(crate) fn tool_part(n: u32, status: &str) -> Envelope {
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

pub(crate) fn base() -> Store {
    let mut s = Store::new();
    apply(&mut s, session_created(1, SES, None));
    apply(&mut s, user_msg(2));
    apply(&mut s, assistant_msg(3, ASSIST, false));
    s
}

pub(crate) fn text_of(store: &Store) -> String {
    let m = store.session(SES).unwrap().message(ASSIST).unwrap();
    m.part(TEXT).unwrap().text().unwrap().to_string()
}

#[test]
pub(crate) fn delta_before_its_part_is_held_then_applied() {
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
pub(crate) fn duplicate_events_change_nothing() {
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
pub(crate) fn a_delta_said_again_later_is_applied_once_adjacent_or_not() {
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
pub(crate) fn every_recorded_event_applied_twice_gives_the_same_transcript() {
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
pub(crate) fn out_of_order_part_updates_never_go_backwards() {
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
pub(crate) fn parts_and_messages_stay_sorted_by_id_whatever_the_arrival_order() {
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
pub(crate) fn removals() {
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
pub(crate) struct Log(pub(crate) Vec<String>);

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
pub(crate) fn status_transitions_including_retry() {
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
