//! The archive search overlay (`F` in the list): results while typing,
//! a filter typed with the words, enter opening a hit's session (loaded
//! from the archive when the viewer lacks it), at 80×24 and 200×50.

use crate::common;

use common::{app_with, fixture, press, screen};
use ocview::app::Overlay;
use ocview::archive::Setting;

/// An archive holding every scenario's session; a viewer showing one.
fn viewer_with_archive(dir: &std::path::Path) -> ocview::app::App {
    let path = dir.join("archive.db");
    let setting = Setting::Sqlite(path);
    let mut archive = setting.open().unwrap().unwrap();
    for f in common::scenarios() {
        ocview::archive::import::import_file(&mut *archive, &f.join("event.jsonl")).unwrap();
    }
    let mut app = app_with(&fixture("a_bash_permission_once", "event.jsonl"));
    app.archive.setting = Some(setting);
    app
}

/// Wait for the archive's answer and hand it to the app, as the loop does.
fn answered(
    app: &mut ocview::app::App,
    done: &mut tokio::sync::mpsc::UnboundedReceiver<ocview::app::msg::AppMsg>,
) {
    let started = std::time::Instant::now();
    loop {
        match done.try_recv() {
            Ok(d) => {
                app.on_done(d);
                if !app.archive.view.waiting {
                    return;
                }
            }
            Err(_) if started.elapsed() < std::time::Duration::from_secs(10) => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(e) => panic!("no answer from the archive: {e}"),
        }
    }
}

fn typed(app: &mut ocview::app::App, text: &str) {
    let keys: Vec<String> = text.chars().map(|c| c.to_string()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    press(app, &keys);
}

#[test]
fn typing_finds_filters_and_opens_archived_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = viewer_with_archive(dir.path());
    let mut done = app.verbs.take_done();
    press(&mut app, &["F"]);
    assert_eq!(app.overlay, Some(Overlay::ArchiveSearch));
    insta::assert_snapshot!("archive_search_empty_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("archive_search_empty_200x50", screen(&mut app, 200, 50));

    // Results while typing: "lis" already finds "list".
    typed(&mut app, "lis");
    answered(&mut app, &mut done);
    assert!(
        app.archive.view.hits.len() >= 3,
        "{:?}",
        app.archive.view.hits
    );
    insta::assert_snapshot!("archive_search_typing_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("archive_search_typing_200x50", screen(&mut app, 200, 50));

    // A filter typed with the words.
    typed(&mut app, "t tool:task");
    answered(&mut app, &mut done);
    let hits = &app.archive.view.hits;
    assert!(
        !hits.is_empty() && hits.iter().all(|h| h.kind == "tool"),
        "{hits:?}"
    );
    insta::assert_snapshot!("archive_search_filtered_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("archive_search_filtered_200x50", screen(&mut app, 200, 50));

    // Enter: a session the viewer did not have is loaded and opened at the hit.
    let hit = app.archive.view.hits[0].clone();
    assert!(app.store.session(&hit.session_id).is_none());
    press(&mut app, &["enter"]);
    answered(&mut app, &mut done);
    assert_eq!(app.overlay, None);
    assert_eq!(app.selected.as_deref(), Some(hit.session_id.as_str()));
    let shown = screen(&mut app, 200, 50);
    assert!(shown.contains("Delegate util inspection"), "{shown}");
    insta::assert_snapshot!("archive_search_opened_200x50", shown);
    insta::assert_snapshot!("archive_search_opened_80x24", screen(&mut app, 80, 24));
}

#[test]
fn no_match_and_a_corrupt_archive_are_said_in_the_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = viewer_with_archive(dir.path());
    let mut done = app.verbs.take_done();
    press(&mut app, &["F"]);
    typed(&mut app, "zzqqx");
    answered(&mut app, &mut done);
    assert!(app.archive.view.hits.is_empty());
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("nothing found"), "{shown}");
    insta::assert_snapshot!("archive_search_no_match_80x24", shown);
    insta::assert_snapshot!("archive_search_no_match_200x50", screen(&mut app, 200, 50));

    // A file that is not a database: said where the results would be. Its
    // folder's name is as long everywhere, and masked in the snapshots.
    let fixed = tempfile::Builder::new()
        .prefix("ocv")
        .rand_bytes(6)
        .tempdir_in("/tmp")
        .unwrap();
    let masked =
        |shown: String| shown.replace(&fixed.path().display().to_string(), "/tmp/ocvXXXXXX");
    let bad = fixed.path().join("corrupt.db");
    std::fs::write(&bad, vec![0x5a; 8192]).unwrap();
    let mut app = app_with(&fixture("a_bash_permission_once", "event.jsonl"));
    app.archive.setting = Some(Setting::Sqlite(bad));
    let mut done = app.verbs.take_done();
    press(&mut app, &["F"]);
    typed(&mut app, "list");
    answered(&mut app, &mut done);
    let why = app.archive.view.status.clone().unwrap_or_default();
    assert!(why.contains("corrupt.db"), "{why}");
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("corrupt.db"), "{shown}");
    insta::assert_snapshot!("archive_search_corrupt_80x24", masked(shown));
    insta::assert_snapshot!(
        "archive_search_corrupt_200x50",
        masked(screen(&mut app, 200, 50))
    );
}

#[test]
fn without_an_archive_the_key_says_so() {
    let mut app = app_with(&fixture("a_bash_permission_once", "event.jsonl"));
    press(&mut app, &["F"]);
    assert_eq!(app.overlay, None);
    assert!(
        app.notice.as_deref().unwrap_or("").contains("no archive"),
        "{:?}",
        app.notice
    );
}

#[test]
fn snippets_from_the_archive_are_inert() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let evil = dir.path().join("evil.jsonl");
    std::fs::write(
        &evil,
        concat!(
            r#"{"type":"session.updated","properties":{"info":{"id":"ses_x","title":"evil \u001b]0;pwned\u0007 title","time":{"created":1795339297871,"updated":1795339297871}}}}"#,
            "\n",
            r#"{"type":"message.updated","properties":{"info":{"id":"msg_x","sessionID":"ses_x","role":"user","time":{"created":1795339297871}}}}"#,
            "\n",
            r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_x","messageID":"msg_x","sessionID":"ses_x","type":"text","text":"needle \u001b[2J\u001b[31m red \u0002fake\u0003 mark"}}}"#,
            "\n"
        ),
    )
    .unwrap();
    let setting = Setting::Sqlite(path);
    let mut archive = setting.open().unwrap().unwrap();
    ocview::archive::import::import_file(&mut *archive, &evil).unwrap();
    let mut app = app_with(&fixture("a_bash_permission_once", "event.jsonl"));
    app.archive.setting = Some(setting);
    let mut done = app.verbs.take_done();
    press(&mut app, &["F"]);
    typed(&mut app, "needle");
    answered(&mut app, &mut done);
    assert_eq!(app.archive.view.hits.len(), 1);
    let shown = screen(&mut app, 120, 30);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("needle"), "{shown}");
    // The text's own control characters never pass for the engine's marks.
    let pieces = app.archive.view.hits[0].pieces();
    assert_eq!(pieces.iter().filter(|(_, m)| *m).count(), 1, "{pieces:?}");
}

#[test]
fn a_live_sources_events_reach_the_archive_through_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut app = app_with(b"");
    app.archive.tap = Some(ocview::archive::writer::spawn(
        Setting::Sqlite(path.clone()),
        ocview::archive::Origin {
            server: Some("http://box:4096".into()),
            host: "h".into(),
            file: None,
        },
        Box::new(|line| panic!("{line}")),
    ));
    common::feed(&mut app, &fixture("f_reasoning_markdown", "event.jsonl"));
    app.archive.tap = None; // writes what is queued
    let mut archive = Setting::Sqlite(path).open().unwrap().unwrap();
    let hits = archive
        .search(&ocview::archive::Query::new("headings"))
        .unwrap();
    assert!(!hits.is_empty());
    assert_eq!(hits[0].server.as_deref(), Some("http://box:4096"));
}

#[test]
fn the_command_line_imports_and_searches_for_scripts() {
    // The test environment keeps no archive unless told (.cargo/config.toml).
    assert_eq!(std::env::var("OCVIEW_ARCHIVE").as_deref(), Ok("off"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let run = |args: &[&str]| ocview_on(&db, args);
    let file = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    let file = file.to_str().unwrap();
    let out = run(&["archive", "import", file]);
    assert!(out.status.success(), "{out:?}");
    let again = run(&["archive", "import", file]);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already archived"),
        "{again:?}"
    );
    let out = run(&["search", "files", "--tool", "bash", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hit = &hits[0];
    assert_eq!(hit["session_id"], "ses_dfd705bd5ffeOV3U02UYpF0oDi");
    assert_eq!(hit["title"], "List project files");
    assert_eq!(hit["kind"], "tool");
    assert!(hit["file"].as_str().unwrap().ends_with("event.jsonl"));
    let snippet = hit["snippet"].as_str().unwrap();
    let mark = &hit["marks"][0];
    let (a, b) = (
        mark[0].as_u64().unwrap() as usize,
        mark[1].as_u64().unwrap() as usize,
    );
    let marked: String = snippet.chars().skip(a).take(b - a).collect();
    assert_eq!(marked.to_lowercase(), "files");
    let plain = run(&["search", "files"]);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("«files»"));
    let none = run(&["search", "zzzqqq"]);
    assert_eq!(none.status.code(), Some(1));
    let dump = run(&["archive", "replay", "ses_dfd705", "--dump"]);
    assert!(
        String::from_utf8_lossy(&dump.stdout).contains("List project files"),
        "{dump:?}"
    );
    let off = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["search", "files"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&off.stderr).contains("the archive is off"));
}

/// A session whose title and text carry a clipboard write (OSC 52), C1
/// and bidi controls and a line separator: `search --json` prints none of
/// them, not even escaped (`jq -r` would print them again), and the marks
/// still point at the word in what is printed.
#[test]
fn search_json_prints_no_control_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let evil = r"\u001b]52;c;ZWNobyBoaQ==\u0007\u009b31m\u202egpj\u2028";
    let lines = [
        format!(r#"{{"type":"session.updated","properties":{{"info":{{"id":"ses_evil","title":"Evil{evil}title","directory":"/p","time":{{"created":1795339000000,"updated":1795339000000}}}}}}}}"#),
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_e","sessionID":"ses_evil","role":"user","time":{"created":1795339000100}}}}"#.to_string(),
        format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_e","messageID":"msg_e","sessionID":"ses_evil","type":"text","text":"tab\there {evil} hostile words"}}}}}}"#),
    ];
    let file = dir.path().join("evil.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let run = |args: &[&str]| ocview_on(&db, args);
    let out = run(&["archive", "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let out = run(&["search", "hostile", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let printed = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let hit = &hits[0];
    for field in ["title", "snippet", "session_id"] {
        let text = printed(&hit[field]);
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{2028}'] {
            assert!(!text.contains(bad), "{field} holds {bad:?}: {text:?}");
        }
    }
    assert!(printed(&hit["title"]).starts_with("Evil␛]52"), "{hit}");
    let snippet = printed(&hit["snippet"]);
    let mark = &hit["marks"][0];
    let (a, b) = (
        mark[0].as_u64().unwrap() as usize,
        mark[1].as_u64().unwrap() as usize,
    );
    let marked: String = snippet.chars().skip(a).take(b - a).collect();
    assert_eq!(marked, "hostile", "{snippet:?}");
}

/// Beside a live server (`attach`): enter on a hit of a session no server
/// serves opens the archive's copy, under the Archive heading, read from
/// the archive alone: nothing is asked of the server for it.
#[test]
fn beside_a_live_server_a_hit_no_server_serves_opens_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = viewer_with_archive(dir.path());
    let rt = common::background_runtime();
    let _entered = rt.enter();
    let (live_tx, mut live_rx) = tokio::sync::mpsc::unbounded_channel();
    app.live = Some(ocview::app::launch::archive_list::route(
        Some(live_tx),
        None,
        None,
    ));
    let mut done = app.verbs.take_done();
    screen(&mut app, 120, 30);
    press(&mut app, &["F"]);
    typed(&mut app, "util");
    answered(&mut app, &mut done);
    let hit = app
        .archive
        .view
        .hits
        .iter()
        .position(|h| app.store.session(&h.session_id).is_none())
        .expect("a hit of a session the server does not serve");
    for _ in 0..hit {
        press(&mut app, &["down"]);
    }
    let hit = app.archive.view.hits[hit].clone();
    press(&mut app, &["enter"]);
    answered(&mut app, &mut done);
    let selected = app.selected.clone().unwrap_or_default();
    assert!(
        selected.starts_with(&format!("{}@archive · ", hit.session_id)),
        "{selected}"
    );
    let shown = screen(&mut app, 200, 50);
    assert!(shown.contains(" ▾ Archive"), "{shown}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut asked = Vec::new();
    while let Ok(cmd) = live_rx.try_recv() {
        asked.push(format!("{cmd:?}"));
    }
    assert!(
        asked.iter().all(|c| !c.contains(&hit.session_id)),
        "the server was asked for an archived session: {asked:?}"
    );
}

/// The command line on the archive `db`.
fn ocview_on(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .arg("--archive")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// A phrase whose words are together in more parts than one search reads
/// says, above what it found, how far back it looked, and `until:` that
/// time searches the older parts.
#[test]
fn a_phrase_past_the_bound_says_how_far_back_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    // Rounds of up to 2,000 parts go past 20,000 by one round at most.
    drop(crate::archive_words::apart_archive(dir.path(), 23_000));
    let mut app = app_with(&fixture("a_bash_permission_once", "event.jsonl"));
    app.archive.setting = Some(Setting::Sqlite(dir.path().join("archive.db")));
    let mut done = app.verbs.take_done();
    press(&mut app, &["F"]);
    typed(&mut app, "\"cargo build\"");
    answered(&mut app, &mut done);
    let view = &app.archive.view;
    assert!(
        view.hits.is_empty(),
        "{} {:?}",
        view.input,
        view.hits.first()
    );
    let before = app.archive.view.unchecked_before.expect("says it stopped");
    let shown = screen(&mut app, 80, 24);
    assert!(
        shown.contains(&format!("until:{before} searches them")),
        "{shown}"
    );
    insta::assert_snapshot!("archive_search_bounded_80x24", shown);
    insta::assert_snapshot!("archive_search_bounded_200x50", screen(&mut app, 200, 50));
    typed(&mut app, &format!(" until:{before}"));
    answered(&mut app, &mut done);
    let hits = &app.archive.view.hits;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].part_id.as_deref(), Some("prt_apart00000"));
    assert_eq!(app.archive.view.unchecked_before, None);
    assert!(!screen(&mut app, 80, 24).contains("not searched"));

    // `ocview search` says it on standard error, the JSON left as it is.
    let search = |more: &[&str]| {
        crate::archive_import_db::ocview()
            .args(["search", "\"cargo build\"", "--json", "--archive"])
            .arg(dir.path().join("archive.db"))
            .args(more)
            .output()
            .unwrap()
    };
    let out = search(&[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("were not searched"), "{said}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    // Its own bound: it asks fewer hits than the overlay, in smaller rounds.
    let until: String = said
        .split("--until ")
        .nth(1)
        .unwrap_or_default()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert!(until.len() == 13, "{said}");
    let out = search(&["--until", &until]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not searched"));
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["part_id"], "prt_apart00000");
}
