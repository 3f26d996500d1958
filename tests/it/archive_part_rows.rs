//! A part's row as the collector makes it from the events: the JSON kept is
//! the part's own as it arrived when nothing about it changed (and then it
//! may point into the log), the body's text when deltas grew it, and odd
//! shapes from other OpenCode versions still give a row.

use ocview::archive::Origin;
use ocview::archive::collect::Collector;
use ocview::archive::rows::PartRow;
use ocview::source::ReplayReader;

const SESSION: &str = "ses_rows";
const MESSAGE: &str = "msg_rows";

fn rows_of(lines: &[String]) -> Vec<PartRow> {
    let mut collector = Collector::new(Origin {
        server: None,
        host: "testhost".into(),
        file: Some("rows.jsonl".into()),
    });
    let mut text = format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{SESSION}","title":"rows","time":{{"created":1,"updated":2}}}}}}}}"#
    );
    text.push('\n');
    text.push_str(&format!(
        r#"{{"type":"message.updated","properties":{{"info":{{"id":"{MESSAGE}","sessionID":"{SESSION}","role":"assistant","time":{{"created":3}}}}}}}}"#
    ));
    text.push('\n');
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    let mut reader = ReplayReader::new(std::io::Cursor::new(text.into_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take().parts
}

fn part_updated(part: &str) -> String {
    format!(r#"{{"type":"message.part.updated","properties":{{"part":{part}}}}}"#)
}

fn delta(part_id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message.part.delta","properties":{{"sessionID":"{SESSION}","messageID":"{MESSAGE}","partID":"{part_id}","field":"text","delta":"{text}"}}}}"#
    )
}

#[test]
fn a_part_unchanged_since_its_update_keeps_its_json_as_it_came() {
    // Keys in an order of their own, as a server may send them.
    let raw = format!(
        r#"{{"type":"text","text":"the invoice total","sessionID":"{SESSION}","messageID":"{MESSAGE}","id":"prt_a","time":{{"start":5}}}}"#
    );
    let rows = rows_of(&[part_updated(&raw)]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].raw, raw);
    assert_eq!(rows[0].kind, "text");
    assert_eq!(rows[0].text, "the invoice total");
    assert!(rows[0].logged_as.is_some(), "the log holds it as it is");
}

#[test]
fn a_part_grown_by_deltas_keeps_the_bodys_text_and_is_not_the_logs() {
    let raw = format!(
        r#"{{"id":"prt_b","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"text","text":"the "}}"#
    );
    let rows = rows_of(&[
        part_updated(&raw),
        delta("prt_b", "invoice"),
        delta("prt_b", " total"),
    ]);
    assert_eq!(rows.len(), 1);
    let kept: serde_json::Value = serde_json::from_str(&rows[0].raw).unwrap();
    assert_eq!(kept["text"], "the invoice total");
    assert_eq!(kept["id"], "prt_b");
    assert_eq!(rows[0].text, "the invoice total");
    assert!(rows[0].logged_as.is_none());
}

#[test]
fn a_tools_input_is_indexed_and_odd_shapes_still_give_rows() {
    let tool = format!(
        r#"{{"id":"prt_t","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"tool","tool":"bash","callID":"c1","state":{{"status":"completed","input":{{"command":"grep -r billing src/"}},"output":"src/billing.rs","title":"grep","metadata":{{}},"time":{{"start":7,"end":8}}}}}}"#
    );
    let step = format!(
        r#"{{"id":"prt_s","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"step-start"}}"#
    );
    // A text part whose text is not a string, and an unknown kind whose
    // state is not an object: read as well as they can be, never refused.
    let odd_text = format!(
        r#"{{"id":"prt_o","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"text","text":42}}"#
    );
    let odd_kind = format!(
        r#"{{"id":"prt_k","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"hologram","state":"shimmering"}}"#
    );
    let rows = rows_of(&[
        part_updated(&tool),
        part_updated(&step),
        part_updated(&odd_text),
        part_updated(&odd_kind),
    ]);
    let row = |id: &str| rows.iter().find(|r| r.id == id);
    let tool = row("prt_t").expect("the tool's row");
    assert_eq!(tool.kind, "tool");
    assert_eq!(tool.tool.as_deref(), Some("bash"));
    assert!(tool.text.contains("grep -r billing src/"), "{}", tool.text);
    assert!(tool.text.contains("src/billing.rs"), "{}", tool.text);
    assert_eq!(row("prt_s").expect("the step's row").kind, "step-start");
    for id in ["prt_o", "prt_k"] {
        let r = row(id).unwrap_or_else(|| panic!("a row for {id}: {rows:?}"));
        let kept: serde_json::Value = serde_json::from_str(&r.raw).unwrap();
        assert_eq!(kept["id"], id);
    }
}

#[test]
fn a_tools_input_is_found_wherever_its_state_puts_it() {
    let call = |id: &str, state: &str| {
        format!(
            r#"{{"id":"{id}","sessionID":"{SESSION}","messageID":"{MESSAGE}","type":"tool","tool":"bash","callID":"c_{id}","state":{state}}}"#
        )
    };
    let parts = [
        // Input last, after an output holding braces, quotes and a key's name.
        call(
            "prt_late",
            r#"{"status":"completed","output":"{\"input\": \"decoy\"} }","metadata":{"input":"decoy"},"title":"t","time":{"start":1,"end":2},"input":{"command":"make deploy-staging","env":["REGION=eu \"west\""]}}"#,
        ),
        // No input at all, and an input that is not an object.
        call("prt_none", r#"{"status":"running","time":{"start":3}}"#),
        call(
            "prt_flat",
            r#"{"status":"pending","input":"plain words","time":{"start":4}}"#,
        ),
    ];
    let lines: Vec<String> = parts.iter().map(|p| part_updated(p)).collect();
    let rows = rows_of(&lines);
    let row = |id: &str| rows.iter().find(|r| r.id == id).expect(id);
    let late = row("prt_late");
    assert!(late.text.contains("make deploy-staging"), "{}", late.text);
    assert!(late.text.contains("REGION=eu \"west\""), "{}", late.text);
    assert!(!late.text.contains("decoy\n"), "{}", late.text);
    assert!(row("prt_flat").text.contains("plain words"));
    for (id, raw) in [
        ("prt_late", &parts[0]),
        ("prt_none", &parts[1]),
        ("prt_flat", &parts[2]),
    ] {
        let r = row(id);
        assert_eq!(&r.raw, raw, "{id} kept as it came");
        assert!(r.logged_as.is_some(), "{id}: the log holds it");
        assert_eq!(r.kind, "tool");
    }
}
