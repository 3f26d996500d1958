//! One card per `todowrite` call: the call and the `todo.updated` event it
//! causes are one thing to a reader, in the turn view, `--dump`, plain mode
//! and the Markdown export alike (model::shown decides for all of them).

use crate::common;

use ocview::headless::export;
use ocview::headless::plain::PlainPrinter;
use ocview::model::Store;

/// Every recorded input: each captured fixture and the demo.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = common::scenarios()
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(dir.join("event.jsonl")).unwrap())
        })
        .collect();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo.jsonl");
    out.push(("demo".into(), std::fs::read(demo).unwrap()));
    out
}

/// The todo cards of every session, as the turn view draws them on a
/// screen tall enough to hold each whole session.
fn tui_cards(bytes: &[u8]) -> usize {
    let mut app = common::app_with(bytes);
    common::screens_of_every_session(&mut app, 160, 1500)
        .iter()
        .flat_map(|screen| screen.lines())
        .filter(|l| l.contains("▾ todowrite ") || l.contains("▸ todowrite "))
        .count()
}

fn plain_cards(bytes: &[u8]) -> usize {
    let mut printer = PlainPrinter::new(Vec::new(), false);
    common::replay_with(bytes, &mut printer);
    let text = String::from_utf8(printer.into_inner()).unwrap();
    text.matches("tool todowrite").count()
}

fn dump_cards(store: &Store) -> usize {
    let stats = Default::default();
    ocview::headless::dump::render(store, &stats)
        .matches("tool todowrite [")
        .count()
}

fn markdown_cards(store: &Store) -> usize {
    store
        .sessions()
        .iter()
        .map(|s| {
            export::markdown(s, false)
                .matches("**Tool `todowrite`**")
                .count()
        })
        .sum()
}

#[test]
fn every_input_shows_one_todo_card_per_call_everywhere() {
    let mut with_calls = 0;
    for (name, bytes) in inputs() {
        let (store, _) = common::replay_bytes(&bytes);
        let calls = common::tool_calls(&store, "todowrite");
        with_calls += (calls > 0) as usize;
        assert_eq!(tui_cards(&bytes), calls, "{name}: turn view");
        assert_eq!(dump_cards(&store), calls, "{name}: --dump");
        assert_eq!(plain_cards(&bytes), calls, "{name}: --plain");
        assert_eq!(markdown_cards(&store), calls, "{name}: Markdown export");
    }
    assert!(with_calls >= 2, "the inputs must hold todowrite calls");
}

#[test]
fn the_todo_scenario_keeps_its_stream_only_parts_in_the_model() {
    let bytes = common::fixture("c_todowrite", "event.jsonl");
    let (store, _) = common::replay_bytes(&bytes);
    let stream_only = store
        .sessions()
        .iter()
        .flat_map(|s| &s.messages)
        .flat_map(|m| &m.parts)
        .filter(|p| p.is_stream_only())
        .count();
    assert_eq!(common::tool_calls(&store, "todowrite"), 3);
    assert_eq!(stream_only, 3, "seed 000: the todo.updated parts stay");
}

/// The lines of c_todowrite up to and including the first `todo.updated`:
/// the call is still pending, its input not known yet.
fn up_to_first_todo_event() -> Vec<u8> {
    let bytes = common::fixture("c_todowrite", "event.jsonl");
    let text = String::from_utf8(bytes).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if line.contains("\"todo.updated\"") {
            break;
        }
    }
    out.into_bytes()
}

#[test]
fn a_pending_call_shows_the_list_of_its_event_in_one_card() {
    let mut app = common::app_with(&up_to_first_todo_event());
    let screen = common::screen(&mut app, 100, 16);
    let cards: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("▾ todowrite "))
        .collect();
    assert_eq!(cards.len(), 1, "{screen}");
    assert!(cards[0].contains("0/3 done"), "{screen}");
    insta::assert_snapshot!("pending_call_with_event_list", screen);
}

#[test]
fn the_whole_todo_session_in_the_turn_view() {
    let mut app = common::app_with(&common::fixture("c_todowrite", "event.jsonl"));
    let screen = common::screen(&mut app, 100, 36);
    insta::assert_snapshot!("c_todowrite_turns", screen);
}

/// A todo event with no call before it in its message (a list changed some
/// other way) is shown on its own; so is a second event after one call.
#[test]
fn a_todo_event_without_its_call_is_shown() {
    let bytes = common::fixture("c_todowrite", "event.jsonl");
    let text = String::from_utf8(bytes).unwrap();
    // Drop every todowrite tool part: only the events remain.
    let without_calls: String = text
        .lines()
        .filter(|l| {
            !(l.contains("\"message.part.updated\"") && l.contains("\"tool\": \"todowrite\""))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let (store, _) = common::replay_bytes(without_calls.as_bytes());
    assert_eq!(common::tool_calls(&store, "todowrite"), 0);
    assert_eq!(dump_cards(&store), 3);
    assert_eq!(markdown_cards(&store), 3);
    assert_eq!(plain_cards(without_calls.as_bytes()), 3);
    assert_eq!(tui_cards(without_calls.as_bytes()), 3);

    // Each event followed by a second update (a new id one step later):
    // the first belongs to the call, the second is shown on its own.
    let mut twice = String::new();
    for line in text.lines() {
        twice.push_str(line);
        twice.push('\n');
        if line.contains("\"todo.updated\"") {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            let id = v["event"]["id"].as_str().unwrap().to_string();
            let seq = u64::from_str_radix(&id[4..16], 16).unwrap();
            v["event"]["id"] = format!("evt_{:012x}later", seq + 1).into();
            twice.push_str(&v.to_string());
            twice.push('\n');
        }
    }
    let (store, _) = common::replay_bytes(twice.as_bytes());
    assert_eq!(common::tool_calls(&store, "todowrite"), 3);
    assert_eq!(dump_cards(&store), 6);
    assert_eq!(markdown_cards(&store), 6);
    assert_eq!(plain_cards(twice.as_bytes()), 6);
    assert_eq!(tui_cards(twice.as_bytes()), 6);
}
