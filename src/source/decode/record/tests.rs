//! Decoding record lines: every form, faults named, surrogates repaired.

use super::*;

fn kind(text: &str) -> String {
    match decode(text).unwrap() {
        Decoded::Event(e) => e.event.kind().to_string(),
        Decoded::Skip(why) => format!("skip:{why}"),
        Decoded::Run(r) => format!("run:{}", r.part.as_ref().map_or("error", |p| p.kind())),
        Decoded::Durable(d) => format!("durable:{}", d.kind),
        Decoded::Message(m) => format!("message:{}", m.id),
    }
}

#[test]
fn accepts_every_shape() {
    let bare = r#"{"id":"evt_2028fa41b001x","type":"server.connected","properties":{}}"#;
    assert_eq!(kind(bare), "server.connected");
    let wrapped = format!(r#"{{"t":5,"event":{bare}}}"#);
    assert_eq!(kind(&wrapped), "server.connected");
    let global =
        format!(r#"{{"t":5,"event":{{"directory":"/p","project":"x","payload":{bare}}}}}"#);
    assert_eq!(kind(&global), "server.connected");
    assert_eq!(
        kind(r#"{"payload":{"type":"sync","syncEvent":{}}}"#),
        "skip:sync"
    );
    assert_eq!(
        kind(r#"{"type":"brand.new","properties":{"x":1}}"#),
        "brand.new"
    );
    match decode(&wrapped).unwrap() {
        Decoded::Event(e) => {
            assert_eq!(e.received_ms, Some(5));
            assert!(e.seq > 0);
        }
        _ => panic!(),
    }
}

#[test]
fn reads_opencode_run_json_lines() {
    let line = r#"{"type":"text","timestamp":1795339000000,"sessionID":"ses_r","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_r","type":"text","text":"hi"}}"#;
    assert_eq!(kind(line), "run:text");
    let err = r#"{"type":"error","timestamp":1,"sessionID":"ses_r","error":{"name":"APIError","data":{"message":"x"}}}"#;
    assert_eq!(kind(err), "run:error");
    assert!(decode(r#"{"type":"text","sessionID":"ses_r"}"#).is_err());
}

#[test]
fn tells_durable_stream_events_by_their_keys() {
    let line = r#"{"id":"01JQ8Z","type":"execution.step_start","stream_id":"ses_a","correlation_id":"01JQ8Y","actor":"build","timestamp":1,"payload":{"snapshot":"abc"}}"#;
    assert_eq!(kind(line), "durable:execution.step_start");
    // An unknown type in the envelope is still one (mapped as ignored).
    let newer = r#"{"id":"01JQ8Z","type":"agent.error","stream_id":"ses_a","payload":{}}"#;
    assert_eq!(kind(newer), "durable:agent.error");
    // The `/global/event` wrapper's `payload` is not mistaken for one.
    let global = r#"{"directory":"/p","payload":{"id":"evt_2028fa41b001x","type":"server.connected","properties":{}}}"#;
    assert_eq!(kind(global), "server.connected");
    let no_stream = r#"{"id":"01JQ8Z","type":"lifecycle.session.idle","payload":{}}"#;
    assert!(decode(no_stream).unwrap_err().message.contains("stream_id"));
    // Whatever the key order: sorted (as jq -S or Go maps write), or the
    // payload first with contents that fail as a `/global/event` one.
    let sorted = r#"{"actor":"build","correlation_id":"01R","id":"01A","payload":{"snapshot":"abc"},"stream_id":"ses_a","timestamp":5,"type":"execution.step_start"}"#;
    assert_eq!(kind(sorted), "durable:execution.step_start");
    let first = r#"{"payload":{"type":"session.status","properties":{}},"id":"01A","type":"execution.step_start","stream_id":"ses_a"}"#;
    assert_eq!(kind(first), "durable:execution.step_start");
}

#[test]
fn rejects_non_events() {
    assert!(decode("[1,2]").is_err());
    assert!(decode(r#"{"hello":1}"#).is_err());
    assert!(decode(r#"{"type":"session.status","properties":{}}"#).is_err());
}

#[test]
fn repairs_lone_surrogates_only() {
    let good = r#"{"a":"\ud83d\ude00 \\ud800 \u00e9"}"#;
    assert_eq!(repair_surrogates(good), None);
    let bad = r#"{"a":"cut \ud83d","b":"\udc00x"}"#;
    let fixed = repair_surrogates(bad).unwrap();
    let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
    assert_eq!(v["a"], "cut \u{fffd}");
    assert_eq!(v["b"], "\u{fffd}x");
}
