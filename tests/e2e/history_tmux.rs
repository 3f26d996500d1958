//! The history source in a real terminal: `ocview history` with no server, a history session replayed, plain `ocview` falling back to history, a fleet and history each routing to its source, and no sequence from a hostile database reaching the terminal.

use crate::common;
use crate::history_db::*;
use crate::support;
use common::screen;
use ocview::app::App;
use ocview::source::msg::SourceMsg;
use ocview::source::opencode_db::history;
use serde_json::json;
use std::time::Duration;
use tokio::sync::mpsc;

/// `ocview history` on a terminal: the database's sessions by project,
/// one opened, no server anywhere.
#[test]
fn tmux_history_with_no_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let t = support::tmux::Tmux::start_sized("history", 120, 30);
    t.line(&format!(
        "OPENCODE_DB={} {} history",
        db.display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    let list = t.wait_for("the history listed", |s| {
        s.contains("Parent session title") && s.contains("/work/alpha")
    });
    assert!(list.contains("history"), "{list}");
    // From the first row down to the parent session (headings come first):
    // each step waits for the selection mark to move, so a slow frame
    // never makes it overshoot.
    let selected = |s: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with('›'))
            .unwrap_or("")
            .to_string()
    };
    t.keys(&["g"]);
    t.wait_for("the first row selected", |s| {
        selected(s).contains("history")
    });
    for _ in 0..4 {
        let row = selected(&t.capture());
        if row.contains("Parent session title") {
            break;
        }
        t.keys(&["j"]);
        t.wait_for("the selection moved", |s| selected(s) != row);
    }
    t.keys(&["Enter"]);
    t.wait_for("the session opened", |s| {
        s.contains("Please list the files") && s.contains("Here are the files")
    });
    t.keys(&["q"]);
}

/// `ocview replay DB --session ID`: the player on the event log; seek to
/// the end shows what opening the session shows, back to the start hides it.
#[test]
fn tmux_replay_of_a_history_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let t = support::tmux::Tmux::start_sized("dbreplay", 120, 30);
    t.line(&format!(
        "{} replay {} --session ses_par --speed 0.25",
        env!("CARGO_BIN_EXE_ocview"),
        db.display()
    ));
    // The log spans well under a second: the player may already be at its
    // end (■) by the first look.
    t.wait_for("the player", |s| {
        s.contains("replay ses_par") && (s.contains('▶') || s.contains("❚❚") || s.contains('■'))
    });
    t.keys(&["$"]);
    let end = t.wait_for("the end", |s| {
        s.contains("Please list the files") && s.contains("Here are the files")
    });
    assert!(end.contains("Parent session title"), "{end}");
    t.keys(&["0"]);
    t.wait_for("the start", |s| !s.contains("Here are the files"));
    t.keys(&["q"]);
}

/// A fleet and the database together: a session both hold shows once,
/// live (the database's child of it under the live copy); opening a
/// history session asks the database's reader, opening a live one its
/// server, never the other.
#[test]
fn fleet_and_history_route_each_session_to_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut app = App::new(ocview::app::config::Config::default(), "fleet", false).unwrap();
    let (tx, mut rx) = mpsc::channel(8192);
    let handle = history::spawn(db.clone(), tx);
    let (live_tx, mut live_rx) = mpsc::unbounded_channel();
    {
        let _guard = rt.enter();
        app.live = Some(ocview::app::launch::archive_list::route(
            Some(live_tx),
            Some(handle),
            None,
        ));
    }
    app.source.state = ocview::source::msg::SourceState::Live;
    // A live server holding the parent session (same id as the database's).
    common::feed(
        &mut app,
        concat!(
            r#"{"server":"a:1","type":"ocview.server","properties":{"url":"http://a:1","state":"live"}}"#,
            "\n",
            r#"{"server":"a:1","type":"session.created","properties":{"info":{"id":"ses_parent","title":"Parent session title","directory":"/work/alpha","time":{"created":1795547214000,"updated":1795547214000}}}}"#,
            "\n"
        )
        .as_bytes(),
    );
    let text = pump(&rt, &mut app, &mut rx, |t| t.contains("Child task"));
    // The list (left of the divider): the parent once, under the server,
    // the database's child under it.
    let list: Vec<&str> = text
        .lines()
        .map(|l| l.split('│').next().unwrap_or(""))
        .collect();
    let at = |needle: &str| list.iter().position(|l| l.contains(needle));
    assert_eq!(
        list.iter()
            .filter(|l| l.contains("Parent session title"))
            .count(),
        1,
        "{text}"
    );
    let (live, parent, child) = (
        at("a:1").unwrap(),
        at("Parent session title").unwrap(),
        at("Child task").unwrap(),
    );
    assert!(live < parent && parent < child, "{text}");

    // The history child: its page comes from the database's reader.
    app.selected = Some("ses_child@history".into());
    screen(&mut app, 120, 30);
    let answered = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match rx.recv().await {
                    Some(SourceMsg::Messages { session_id, .. }) => break session_id,
                    Some(other) => {
                        app.on_source(other);
                    }
                    None => panic!("the reader stopped"),
                }
            }
        })
        .await
        .expect("the database's reader answered")
    });
    assert_eq!(answered, "ses_child@history");
    // The live parent: asked of its server, not of the database.
    app.selected = Some("ses_parent@a:1".into());
    screen(&mut app, 120, 30);
    let asked = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), live_rx.recv())
            .await
            .expect("the live server was asked")
            .unwrap()
    });
    assert!(
        matches!(&asked, ocview::source::live::LiveCommand::Open(id) if id == "ses_parent@a:1"),
        "{asked:?}"
    );
    // Nothing of the database's went to the server.
    while let Ok(cmd) = live_rx.try_recv() {
        assert!(!format!("{cmd:?}").contains("@history"), "{cmd:?}");
    }
}

/// Plain `ocview`, no server anywhere (discovery looks only at an empty
/// private /proc and no config): the database's sessions, as history.
#[test]
fn tmux_plain_ocview_with_no_server_falls_back_to_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = make_db(dir.path());
    let proc_dir = tempfile::tempdir().unwrap();
    let t = support::tmux::Tmux::start_sized("nosrv", 120, 30);
    t.line(&format!(
        "unset OPENCODE_SERVER_URL OPENCODE_SERVER_PASSWORD; OCVIEW_DISCOVER_PROC={} XDG_CONFIG_HOME=/nonexistent-ocview-config OPENCODE_DB={} {}",
        proc_dir.path().display(),
        db.display(),
        env!("CARGO_BIN_EXE_ocview")
    ));
    let list = t.wait_for("the history listed", |s| {
        s.contains("Parent session title") && s.contains("Child task")
    });
    assert!(list.contains("history"), "{list}");
}

/// Everything a database can name, hostile: the project folder, the
/// session's id, title and folder, the model, the agent, a tool's name,
/// title and output, a message's text. `ocview history` in a real terminal
/// (every byte it writes captured): the list, the opened session and its
/// tool card show the names with visible marks, and no sequence, C1,
/// bidi or separator character from the data reaches the terminal.
#[test]
fn no_sequence_from_the_database_reaches_the_terminal() {
    use support::history_db as db;
    use support::tmux::Tmux;
    // OSC 52 (a clipboard write), DCS, C1 CSI, a bidi override, the line
    // and paragraph separators, NEL.
    const EVIL: &str =
        "\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}Pq\u{9b}2J\u{202e}gpj\u{2028}\u{2029}\u{85}";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    let c = db::create(&path, false);
    db::project(&c, "prj_evil", &format!("/work/evil{EVIL}"), T0);
    let sid = format!("ses_evil{EVIL}");
    db::session(
        &c,
        &sid,
        "prj_evil",
        None,
        &format!("Hostile {EVIL} title"),
        T0 + 10,
        None,
    );
    c.execute(
        "UPDATE session SET directory = ?1",
        [format!("/work/dir{EVIL}")],
    )
    .unwrap();
    let user = json!({"role": "user", "time": {"created": T0 + 1}, "agent": format!("agent{EVIL}"),
        "model": {"providerID": "mock", "modelID": format!("model{EVIL}")}});
    db::message(&c, "msg_u1", &sid, T0 + 1, &user.to_string());
    let text = json!({"type": "text", "text": format!("Question with {EVIL} inside")});
    db::part(&c, "prt_u1", "msg_u1", &sid, T0 + 1, &text.to_string());
    let answer = json!({"role": "assistant", "time": {"created": T0 + 2, "completed": T0 + 3},
        "parentID": "msg_u1", "modelID": format!("model{EVIL}"), "providerID": format!("prov{EVIL}"),
        "mode": "build", "agent": format!("agent{EVIL}"), "path": {"cwd": "/w", "root": "/w"}, "cost": 0.01,
        "tokens": {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}, "finish": "stop"});
    db::message(&c, "msg_a1", &sid, T0 + 2, &answer.to_string());
    let tool = json!({"type": "tool", "callID": "call_1", "tool": format!("tool{EVIL}"),
        "state": {"status": "completed", "input": {"command": format!("ls {EVIL}")}, "output": format!("out{EVIL}"),
            "title": format!("title{EVIL}"), "metadata": {}, "time": {"start": T0 + 2, "end": T0 + 3}}});
    db::part(&c, "prt_a1", "msg_a1", &sid, T0 + 2, &tool.to_string());
    let text = json!({"type": "text", "text": format!("Answer with {EVIL} inside")});
    db::part(&c, "prt_a2", "msg_a1", &sid, T0 + 3, &text.to_string());
    drop(c);

    let raw = dir.path().join("pane.raw");
    let t = Tmux::start_sized("historyevil", 160, 40);
    t.pipe_output_to(&raw);
    t.line(&format!(
        "{} history --no-archive {}",
        env!("CARGO_BIN_EXE_ocview"),
        path.display()
    ));
    t.wait_for("the hostile session listed", |s| s.contains("Hostile ␛]52"));
    t.keys(&["Enter"]);
    t.wait_for("the session opened", |s| {
        s.contains("Answer with") && s.contains("tool␛")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
    let bytes = std::fs::read(&raw).unwrap();
    let shown = String::from_utf8_lossy(&bytes);
    assert!(shown.contains("Question with"), "the text was drawn");
    for (what, bad) in [
        ("OSC 52", "\u{1b}]52"),
        ("DCS", "\u{1b}P"),
        ("C1 CSI", "\u{9b}"),
        ("NEL", "\u{85}"),
        ("bidi override", "\u{202e}"),
        ("line separator", "\u{2028}"),
        ("paragraph separator", "\u{2029}"),
    ] {
        assert!(!shown.contains(bad), "{what} reached the terminal");
    }
}
