//! The archive search on the real binary in a real terminal (tmux), at
//! 80×24 and 200×50, over an archive `ocview archive import` built from
//! every scenario: `F` opens it, results come while a word is still being
//! typed, each filter typed with the words narrows them (a tool, a
//! project, a date), enter opens an archived session the viewer did not
//! have at the hit, esc returns, and the terminal is whole afterwards.

use crate::support;

use support::scenarios::{archive_of_every_scenario, scenarios};
use support::tmux::Tmux;

/// "Archive 3/10": the hits the overlay's title counts.
fn hits_shown(screen: &str) -> Option<usize> {
    let line = screen.lines().find(|l| l.contains(" Archive "))?;
    let after = line.split(" Archive ").nth(1)?;
    let count = after.split_whitespace().next()?;
    count.split('/').nth(1)?.parse().ok()
}

/// Type `text` a key at a time, as a person does.
fn typed(t: &Tmux, text: &str) {
    let keys: Vec<String> = text
        .chars()
        .map(|c| match c {
            ' ' => "Space".to_string(),
            c => c.to_string(),
        })
        .collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    t.keys(&keys);
}

/// What is typed, as the overlay's input line shows it.
fn input_is(screen: &str, text: &str) -> bool {
    screen.contains(&format!("› {text}▏"))
}

/// Erase what is typed.
fn erased(t: &Tmux, text: &str) {
    let keys = vec!["BSpace"; text.chars().count()];
    t.keys(&keys);
    t.wait_for("the input erased", |s| input_is(s, ""));
}

fn search_view_at(width: u16, height: u16) {
    let dir = tempfile::tempdir().unwrap();
    let db = archive_of_every_scenario(dir.path());
    let t = Tmux::start_sized(&format!("archive{width}"), width, height);
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
    t.keys(&["F"]);
    let empty = t.wait_for("the search, empty", |s| {
        hits_shown(s) == Some(0) && input_is(s, "")
    });
    // The filters are said where they are typed.
    assert!(
        empty.contains("tool:") && empty.contains("since:"),
        "{empty}"
    );

    // Results while typing: a prefix of a word finds it.
    typed(&t, "lis");
    let prefix = t.wait_for("hits for the prefix `lis`", |s| {
        input_is(s, "lis") && hits_shown(s).is_some_and(|n| n >= 3)
    });
    let all = hits_shown(&prefix).unwrap();
    assert!(prefix.contains("List project files"), "{prefix}");
    typed(&t, "t");
    t.wait_for("hits for `list`", |s| {
        input_is(s, "list") && hits_shown(s).is_some()
    });

    // A tool filter narrows them to the task call.
    typed(&t, " tool:task");
    let by_tool = t.wait_for("hits of the task tool", |s| {
        input_is(s, "list tool:task") && hits_shown(s) == Some(1)
    });
    assert!(by_tool.contains("Delegate util inspection"), "{by_tool}");
    erased(&t, "list tool:task");

    // A project filter: every scenario ran in demo-project.
    typed(&t, "list project:demo-project");
    t.wait_for("hits in the project", |s| {
        input_is(s, "list project:demo-project") && hits_shown(s).is_some_and(|n| n >= 3)
    });
    typed(&t, "x");
    t.wait_for("no hits in another project", |s| {
        input_is(s, "list project:demo-projectx")
            && hits_shown(s) == Some(0)
            && s.contains("nothing found")
    });
    erased(&t, "list project:demo-projectx");

    // Date filters: every scenario is after 2000 and before 2100.
    typed(&t, "list until:2000-01-01");
    t.wait_for("no hits before 2000", |s| {
        input_is(s, "list until:2000-01-01") && s.contains("nothing found")
    });
    erased(&t, "list until:2000-01-01");
    typed(&t, "list since:2000-01-01 until:2100-01-01");
    t.wait_for("every hit within the dates", |s| {
        input_is(s, "list since:2000-01-01 until:2100-01-01") && hits_shown(s) == Some(all)
    });
    erased(&t, "list since:2000-01-01 until:2100-01-01");

    // Enter opens the archived session (not in the viewer) at the hit.
    typed(&t, "util tool:task");
    t.wait_for("the task call", |s| {
        input_is(s, "util tool:task") && hits_shown(s) == Some(1)
    });
    t.keys(&["Enter"]);
    let opened = t.wait_for("the hit's session, at the hit", |s| {
        hits_shown(s).is_none() && s.contains("Delegate util inspection")
    });
    // At the hit: the task call's card, in the turn view.
    assert!(
        opened.contains("task  @general: Inspect util module"),
        "{opened}"
    );

    // From the list again, the search; esc returns to the opened session.
    t.keys(&["Tab", "F"]);
    t.wait_for("the search again", |s| hits_shown(s).is_some());
    t.keys(&["Escape"]);
    let back = t.wait_for("the search closed", |s| hits_shown(s).is_none());
    assert!(back.contains("Delegate util inspection"), "{back}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

#[test]
fn the_archive_search_at_80x24() {
    search_view_at(80, 24);
}

#[test]
fn the_archive_search_at_200x50() {
    search_view_at(200, 50);
}
