//! Output bounded by the input, not by its shape (issue 14, point 3).

use crate::common;

use serde_json::json;

/// A chain of nested sessions, each the child of the one before.
fn session_chain(n: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..n {
        // `ses_` ids descend with creation; any distinct ids will do here.
        let id = format!("ses_{:012x}chain", 0xffff_ffff_ffffu64 - i as u64);
        let mut info =
            json!({"id": id, "title": format!("level {i}"), "time": {"created": i, "updated": i}});
        if i > 0 {
            info["parentID"] = json!(format!(
                "ses_{:012x}chain",
                0xffff_ffff_ffffu64 - i as u64 + 1
            ));
        }
        let event = json!({"id": format!("evt_{:012x}x", 0x2028_0000_0000u64 + i as u64), "type": "session.created", "properties": {"sessionID": id, "info": info}});
        out.push_str(&event.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn the_dump_of_a_deep_session_tree_is_linear_in_its_size() {
    let n = 8_000;
    let (store, stats) = common::replay_bytes(&session_chain(n));
    assert_eq!(stats.malformed, 0);
    // Run on a thread with a small stack: the tree walk must not recurse.
    let dump = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || ocview::headless::dump::render(&store, &Default::default()))
        .unwrap()
        .join()
        .unwrap();
    let tree: Vec<&str> = dump
        .lines()
        .take_while(|l| !l.starts_with("\n== session") && !l.is_empty())
        .skip(1)
        .collect();
    assert_eq!(tree.len(), n, "every session once in the tree");
    assert!(tree[n - 1].contains("[depth 8000]"), "{}", tree[n - 1]);
    assert!(
        dump.len() < 400 * n,
        "{} bytes for {n} sessions: not linear",
        dump.len()
    );
}
