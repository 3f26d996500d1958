//! The insights on the real binary in a real terminal (tmux), at 80×24 and
//! 200×50, over an archive `ocview archive import` built from every
//! scenario of the real opencode 1.18.33: `I` shows the failures by model
//! and tool, a row drilled into lists its failed calls by error, enter
//! opens the archived session at the failed call; `tab` shows the waits,
//! `tab` again the cost, where enter opens the costliest session. Each
//! view's settled screen, as tmux shows it, is a snapshot.

use crate::support;

use support::scenarios::{archive_of_every_scenario, scenarios};
use support::tmux::Tmux;

fn insights_at(width: u16, height: u16) {
    let dir = tempfile::tempdir().unwrap();
    let db = archive_of_every_scenario(dir.path());
    let t = Tmux::start_sized(&format!("insights{width}"), width, height);
    // The viewer shows one session; the archive holds every scenario's.
    t.line(&format!(
        "{} --archive {} replay --start end {}",
        env!("CARGO_BIN_EXE_ocview"),
        db.display(),
        scenarios()
            .join("a_bash_permission_once/event.jsonl")
            .display()
    ));
    t.wait_for("the viewer", |s| s.contains("List project files"));
    // All time: the scenarios ran on their own dates.
    t.keys(&["I", "5"]);
    let rows = t.settled("the failures by model and tool", |s| {
        s.contains("Failures by model and tool · all time") && s.contains("mock/mock-1")
    });
    insta::assert_snapshot!(format!("insights_tmux_failures_{width}x{height}"), rows);
    // Most failed first: the two rejected bash calls.
    assert!(
        rows.lines()
            .any(|l| l.contains('›') && l.contains("mock/mock-1") && l.contains("bash")),
        "{rows}"
    );
    assert!(rows.contains("REJ"), "{rows}");
    t.keys(&["Enter"]);
    let drill = t.settled("the row's failed calls", |s| {
        s.contains("bash by mock/mock-1") && s.contains("rejected")
    });
    insta::assert_snapshot!(format!("insights_tmux_drill_{width}x{height}"), drill);
    assert!(drill.contains("The user rejected permission"), "{drill}");
    t.keys(&["Enter"]);
    t.wait_for("the archived session at the rejected call", |s| {
        !s.contains("bash by mock/mock-1") && s.contains("Rejected permission")
    });
    // The waits, a tab away.
    t.keys(&["I", "Tab"]);
    let waits = t.settled("the waits", |s| {
        s.contains("Waits on people · all time") && s.contains("prompts asked")
    });
    insta::assert_snapshot!(format!("insights_tmux_waits_{width}x{height}"), waits);
    // Where the money went, a tab further: enter opens the costliest.
    t.keys(&["Tab"]);
    let cost = t.settled("the cost", |s| {
        s.contains("Cost · all time") && s.contains("assistant messages")
    });
    insta::assert_snapshot!(format!("insights_tmux_cost_{width}x{height}"), cost);
    assert!(
        cost.contains("COSTLIEST SESSIONS") && cost.contains("mock/mock-1"),
        "{cost}"
    );
    t.keys(&["Enter"]);
    t.wait_for("a costly session opened", |s| {
        !s.contains("Cost · all time")
    });
    t.keys(&["q"]);
    t.wait_for("the shell again", |s| !s.contains("assistant messages"));
}

#[test]
fn the_insights_in_a_terminal_of_80_by_24() {
    insights_at(80, 24);
}

#[test]
fn the_insights_in_a_terminal_of_200_by_50() {
    insights_at(200, 50);
}
