//! The archive end to end (issue 28's acceptance): the real opencode
//! 1.18.33 is watched by `ocview attach URL --archive PATH` in tmux; a
//! bash tool prints a word found nowhere else; ocview quits; the server is
//! stopped and its whole data directory deleted; the archive still finds
//! the word (`ocview search --json`) and replays the session with that
//! output, as the live view showed it.

use crate::support;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, last_turn};
use support::opencode::Server;
use support::tmux::Tmux;

/// What the bash tool prints: the command holds its two halves apart, so
/// only the output holds the word.
const WORD: &str = "quartz77nebula";

fn ocview(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(args)
        .output()
        .unwrap()
}

/// The card's output lines as a screen shows them: each line holding the
/// word, without the list's border, the card's frame and indentation.
fn output_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(WORD) && !l.contains("printf"))
        .map(|l| {
            l.rsplit(['│', '┃', '|'])
                .next()
                .unwrap_or(l)
                .trim()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_archive_outlives_the_servers_data() {
    let model = FakeModel::start(std::sync::Arc::new(|req: &Value, _: usize| {
        match last_turn(req).1 {
            0 => Step::text("Printing it.").then_tool(
                "bash",
                json!({"command": "printf 'quartz%s\\n' 77nebula", "description": "print the word"}),
            ),
            _ => Step::text("Printed."),
        }
    }))
    .await;
    let mut server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let db_arg = db.display().to_string();

    let t = Tmux::start_sized("archive-e2e", 120, 40);
    t.line(&format!(
        "{} --archive {db_arg} attach {}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    t.wait_for("the viewer, live", |s| {
        s.contains("live") && s.contains("Sessions")
    });
    server.prompt(&session, "print the word").await;
    t.wait_for("the permission", |s| s.contains("permission · bash"));
    t.wait_for("the prompt armed", |s| !s.contains("arming"));
    t.keys(&["y"]);
    server.wait_idle(&session, 60).await;
    let live = t.wait_for("the output, live", |s| {
        !output_lines(s).is_empty() && s.contains("Printed.")
    });
    let shown_live = output_lines(&live);
    assert_eq!(shown_live, [WORD], "{live}");
    t.keys(&["q"]);
    t.assert_terminal_restored();

    // The server gone, and everything it kept.
    server.kill();
    let data = server.home.join("data");
    assert!(
        data.join("opencode").exists(),
        "no data directory at {data:?}"
    );
    std::fs::remove_dir_all(&data).unwrap();
    assert!(!data.exists());

    // The archive finds the word from the tool's output.
    let found = ocview(&["search", WORD, "--archive", &db_arg, "--json"]);
    assert!(found.status.success(), "{found:?}");
    let hits: Value = serde_json::from_slice(&found.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty(), "{hits:?}");
    assert!(
        hits.iter()
            .all(|h| h["session_id"] == session.as_str() && h["kind"] == "tool"),
        "{hits:?}"
    );
    assert_eq!(hits[0]["server"], server.url().as_str(), "{hits:?}");
    assert!(
        hits[0]["snippet"].as_str().unwrap().contains(WORD),
        "{hits:?}"
    );

    // And replays the session from its log to the end: the same output.
    let replayed = ocview(&[
        "archive",
        "replay",
        &session,
        "--archive",
        &db_arg,
        "--dump",
    ]);
    assert!(replayed.status.success(), "{replayed:?}");
    let dump = String::from_utf8_lossy(&replayed.stdout);
    assert!(dump.contains("print the word"), "{dump}");
    assert!(dump.contains("Printed."), "{dump}");
    assert!(
        dump.contains(r#"tool bash [completed] "printf 'quartz%s\\n' 77nebula""#),
        "{dump}"
    );

    // The same log, played in the viewer to its end, shows it as live did.
    let t = Tmux::start_sized("archive-e2e-replay", 120, 40);
    t.line(&format!(
        "{} --archive {db_arg} archive replay --start end {session}",
        env!("CARGO_BIN_EXE_ocview"),
    ));
    let played = t.wait_for("the archived session, at its end", |s| {
        s.contains("Printed.") && !output_lines(s).is_empty()
    });
    assert_eq!(output_lines(&played), shown_live, "{played}");
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// Prompt `session` with turns `from..to` ("turn N", answered "answer-N"),
/// each to its end.
async fn turns(server: &Server, session: &str, from: usize, to: usize) {
    for n in from..to {
        server.prompt(session, &format!("turn {n}")).await;
        let want = format!("answer-{n}");
        server
            .until("the turn's answer", 60, || async {
                server.messages(session).await.last().is_some_and(|m| {
                    m["info"]["time"]["completed"].is_number()
                        && m["parts"].to_string().contains(&want)
                })
            })
            .await;
    }
}

/// The second day: the archive holds a session's first turns from
/// yesterday's viewer; today the server has more. Opened live (here by
/// `--session`), the viewer shows what the server holds now, not the
/// archive's older copy in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_the_archive_holds_shows_what_the_server_holds_now() {
    let model = FakeModel::start(std::sync::Arc::new(|req: &Value, _: usize| {
        let (text, _) = last_turn(req);
        let n: String = text
            .split("turn ")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Step::text(&format!("answer-{n}"))
    }))
    .await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    let dir = tempfile::tempdir().unwrap();
    let db_arg = dir.path().join("archive.db").display().to_string();
    turns(&server, &session, 0, 3).await;

    // Yesterday: the viewer opened the session, with its three turns, and
    // kept them.
    let t = Tmux::start_sized("archive-yesterday", 120, 40);
    t.line(&format!(
        "{} --archive {db_arg} attach {} --session {session}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    t.wait_for("yesterday's last answer", |s| s.contains("answer-2"));
    t.keys(&["q"]);
    t.assert_terminal_restored();
    drop(t);
    let kept = ocview(&["search", "answer-2", "--archive", &db_arg, "--json"]);
    assert!(
        String::from_utf8_lossy(&kept.stdout).contains(session.as_str()),
        "the archive holds yesterday's turns: {kept:?}"
    );

    // Today the session went on.
    turns(&server, &session, 3, 7).await;
    for (tag, args) in [
        ("archive-today-session", vec!["--session", session.as_str()]),
        ("archive-today", vec![]),
    ] {
        let t = Tmux::start_sized(tag, 120, 40);
        t.line(&format!(
            "{} --archive {db_arg} attach {} {}",
            env!("CARGO_BIN_EXE_ocview"),
            server.url(),
            args.join(" ")
        ));
        let screen = t.wait_for_secs("today's last answer, live", 30, |s| s.contains("answer-6"));
        assert!(screen.contains("Sessions 1"), "the session once: {screen}");
        t.keys(&["q"]);
        t.assert_terminal_restored();
    }
}

/// The parent delegates to a child that reads two files: two tool calls.
fn subagent_model() -> support::fake_model::Script {
    std::sync::Arc::new(|req: &Value, n: usize| {
        let child = support::fake_model::first_user_text(req).contains("SUBTASK");
        match (child, n) {
            (false, 0) => Step::text("Delegating.").then_tool(
                "task",
                json!({"description": "Read two files", "prompt": "SUBTASK: read them", "subagent_type": "general"}),
            ),
            (true, 0) => Step::text("First.").then_tool("read", json!({"filePath": "src/util.py"})),
            (true, 1) => Step::text("Second.").then_tool("read", json!({"filePath": "README.md"})),
            (true, _) => Step::text("Child done."),
            (false, _) => Step::text("Parent done."),
        }
    })
}

/// The second day on the real server: yesterday a viewer archived a
/// session (and its subagent's) from a server since stopped; today a
/// server on the same port and project runs the same scenario. Attached
/// to today's, with `--follow`: today's session is the one shown and
/// followed, its task card counts the child's two tool calls, "Sessions N"
/// counts the rows, yesterday's sessions wait under the folded Archive
/// heading, enter on the task card opens today's child (asked of today's
/// server), and a search hit of yesterday's opens from the archive: the
/// server is asked nothing (every request counted at a proxy in front of
/// it, on the same port both days).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_day_shows_today_live_and_yesterday_from_the_archive() {
    let model = FakeModel::start(subagent_model()).await;
    let dir = tempfile::tempdir().unwrap();
    let db_arg = dir.path().join("archive.db").display().to_string();
    let bin = env!("CARGO_BIN_EXE_ocview");

    // Yesterday.
    let mut yesterday = Server::start(&model.url()).await;
    let proxy = support::cut_proxy::CutProxy::start(&yesterday.url()).await;
    let port = proxy.port;
    let parent = yesterday.create_session().await;
    let t = Tmux::start_sized("second-day-yesterday", 120, 40);
    t.line(&format!(
        "{bin} --archive {db_arg} attach {} --follow",
        proxy.url
    ));
    t.wait_for("the viewer, live", |s| {
        s.contains("live") && s.contains("Sessions")
    });
    yesterday.prompt(&parent, "delegate yesterday").await;
    yesterday.wait_idle(&parent, 90).await;
    t.wait_for("yesterday's turn, done", |s| {
        s.contains("Parent done.") && s.contains("2 tool calls")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
    drop(t);
    drop(proxy);
    let yesterdays_child = yesterday.get(&format!("/session/{parent}/children")).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    yesterday.kill();

    // Today: the same port and project, a fresh server.
    let mut today = Server::prepare(&model.url(), None);
    today.port = yesterday.port;
    today.project = yesterday.project.clone();
    today.launch().await;
    let session = today.create_session().await;
    let proxy = support::cut_proxy::CutProxy::start_on(&today.url(), port).await;
    let t = Tmux::start_sized("second-day-today", 120, 40);
    t.line(&format!(
        "{bin} --archive {db_arg} attach {} --follow",
        proxy.url
    ));
    let start = t.wait_for("the viewer, live", |s| {
        s.contains("live") && s.contains("Sessions")
    });
    assert!(start.contains(" ▸ Archive"), "yesterday's, folded: {start}");
    today.prompt(&session, "delegate today").await;
    today.wait_idle(&session, 90).await;
    let shown = t.wait_for("today's turn, done, followed", |s| {
        s.contains("Parent done.") && s.contains("2 tool calls") && s.contains("delegate today")
    });
    assert!(!shown.contains("delegate yesterday"), "{shown}");
    assert!(!shown.contains("0 tool calls"), "{shown}");

    // Enter on the task card: today's child, asked of today's server.
    let todays_child = today.get(&format!("/session/{session}/children")).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.keys(&["Tab"]);
    for _ in 0..6 {
        let now = t.capture();
        if now
            .lines()
            .any(|l| l.contains('›') && l.contains("Read two files"))
        {
            break;
        }
        t.keys(&["J"]);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    t.wait_for("the task card selected", |s| {
        s.lines()
            .any(|l| l.contains('›') && l.contains("Read two files"))
    });
    t.keys(&["Enter"]);
    t.wait_for_secs("the child, opened", 20, |s| {
        s.contains("Child done.") && s.contains("SUBTASK")
    });
    let asked = proxy.requests();
    assert!(
        asked
            .iter()
            .any(|r| r.contains(&format!("/session/{todays_child}/message"))),
        "today's child's messages were not asked for: {asked:#?}"
    );
    assert!(
        !asked
            .iter()
            .any(|r| r.contains(&parent) || r.contains(&yesterdays_child)),
        "yesterday's sessions were asked of today's server: {asked:#?}"
    );
    t.keys(&["Escape"]);
    t.wait_for("back at the parent", |s| s.contains("delegate today"));
    t.keys(&["Tab"]);

    // Every row unfolded: "Sessions N" counts them.
    t.keys(&["G"]);
    t.wait_for("the Archive heading selected", |s| {
        s.lines().any(|l| l.contains('›') && l.contains("Archive"))
    });
    t.keys(&["Space"]);
    let all = t.wait_for("the archive's sessions", |s| s.contains("▾ Archive"));
    let rows = all
        .lines()
        .take_while(|l| l.contains('│'))
        .filter(|l| {
            // Headings begin "▾ "; sessions "·", or "▾·" with children.
            let left = l.split('│').next().unwrap_or("");
            let row = left.trim_start_matches(['›', ' ']);
            row.starts_with('·') || row.starts_with("▾·") || row.starts_with("▸·")
        })
        .count();
    assert!(
        all.contains(&format!("Sessions {rows}")),
        "{rows} rows:\n{all}"
    );
    assert_eq!(rows, 4, "today's two and yesterday's two:\n{all}");

    // A hit of yesterday's session: opened from the archive alone.
    t.keys(&["F"]);
    t.wait_for("the archive search", |s| s.contains("esc close"));
    t.tmux(&["send-keys", "-t", t.name(), "-l", "delegate yesterday"]);
    // The hit itself, not only the words typed: enter must open what the
    // whole query found, not an earlier prefix's first hit.
    t.wait_for("the hit", |s| {
        s.contains("esc close")
            && s.matches("delegate yesterday").count() >= 2
            && !s.contains("Archive 0/")
    });
    let before = proxy.requests().len();
    t.keys(&["Enter"]);
    let opened = t.wait_for_secs("yesterday's session, opened", 20, |s| {
        s.contains("delegate yesterday") && !s.contains("esc close")
    });
    assert!(
        !opened.contains("404") && !opened.contains("not found"),
        "{opened}"
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    let asked = proxy.requests();
    assert_eq!(
        asked[before..],
        [] as [String; 0],
        "opening an archived session asked the server"
    );
    t.keys(&["q"]);
    t.assert_terminal_restored();
}

/// A session opened live is archived whole (issue 39, point 2): the viewer
/// shows the newest page of a 570-message session; its older pages go to
/// the archive in the background while the server is idle, and the
/// status line says so; the archive then replays every message, and
/// search finds the first one, which the viewer never showed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_live_is_archived_whole() {
    use support::long_session::LongSession;
    const SESSION: &str = "ses_dfd705bd5ffeArchiveWhole00";
    const MESSAGES: usize = 570;
    let server = Server::start("http://127.0.0.1:9/v1").await;
    let text = |i: usize| format!("Message {i}: word{i}x about the archive");
    LongSession {
        session: SESSION,
        title: "A long session",
        messages: MESSAGES,
        id_tail: &|i| format!("W{i:013}"),
        text: &text,
    }
    .import(&server)
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db_arg = dir.path().join("archive.db").display().to_string();
    let t = Tmux::start_sized("archive-whole", 120, 40);
    t.line(&format!(
        "{} --archive {db_arg} attach {} --session {SESSION}",
        env!("CARGO_BIN_EXE_ocview"),
        server.url()
    ));
    t.wait_for("the newest message", |s| s.contains("Message 569:"));
    t.wait_for_secs("the archive kept it whole", 60, |s| {
        s.contains("kept whole (570 messages)")
    });
    t.keys(&["q"]);
    t.assert_terminal_restored();
    drop(t);
    let archive = ocview::archive::Setting::Sqlite(db_arg.clone().into());
    let mut archive = archive.open().unwrap().unwrap();
    let messages = archive
        .snapshot(SESSION)
        .unwrap()
        .iter()
        .filter(|e| e.contains("\"message.updated\""))
        .count();
    assert_eq!(messages, MESSAGES, "every message archived");
    let found = ocview(&["search", "word0x", "--archive", &db_arg, "--json"]);
    assert!(
        String::from_utf8_lossy(&found.stdout).contains(SESSION),
        "the first message, never shown, is found: {found:?}"
    );

    // `ocview archive fill URL`: every session of the server, whole, with
    // no viewer; a session the server does not have is said, not guessed.
    let filled = dir.path().join("filled.db").display().to_string();
    let out = ocview(&["archive", "fill", &server.url(), "--archive", &filled]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("archived {SESSION} whole (570 messages)")),
        "{said}"
    );
    let mut archive = ocview::archive::Setting::Sqlite(filled.clone().into())
        .open()
        .unwrap()
        .unwrap();
    let events = archive.snapshot(SESSION).unwrap();
    let messages = events
        .iter()
        .filter(|e| e.contains("\"message.updated\""))
        .count();
    assert_eq!(messages, MESSAGES, "every message filled");
    assert!(
        events.iter().any(|e| e.contains("A long session")),
        "the session's title is kept"
    );
    let out = ocview(&[
        "archive",
        "fill",
        &server.url(),
        "--session",
        "ses_gone",
        "--archive",
        &filled,
    ]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("ses_gone: the server gave no more") && said.contains("keeps the 0"),
        "{said}"
    );
}
