//! The archive's sessions in every viewer with a session list, not only a
//! fleet's, under one "Archive" heading after their own, folded when the
//! viewer starts, each origin (machine and server, or file) a group there:
//! `ocview attach URL` (one server) lists that server's alone, `ocview
//! history` (opencode's database) every one. A copy of a session the
//! server or the database shows is not listed again; `R` on one plays its
//! event log in the player to what opening it shows. The real binary, in
//! tmux.

use crate::support;

use std::path::Path;

use support::archived::{T, archive_session, archive_teammates_session, elsewhere, session_lines};
use support::fleet_server::FakeFleet;
use support::tmux::{Tmux, player_position};

/// An SQLite archive at `path` holding a teammate's session and, from
/// another machine, a copy of `copy_of` titled "ARCHIVED COPY".
fn archive_with(path: &Path, copy_of: &str) {
    let mut engine = ocview::archive::sqlite::SqliteArchive::open(path).unwrap();
    archive_teammates_session(&mut engine, 30);
    archive_session(
        &mut engine,
        elsewhere(),
        &session_lines(copy_of, "ARCHIVED COPY", "/srv/0", "old", 60),
    );
}

/// The session list's rows (the left pane, up to its border).
fn list(screen: &str) -> Vec<String> {
    screen
        .lines()
        .take_while(|l| l.contains('│'))
        .map(|l| l.split('│').next().unwrap_or("").trim_end().to_string())
        .collect()
}

/// The open session's transcript: the right pane's lines between its
/// title and the status line, trimmed, blank ones left out.
fn transcript(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    lines[1..lines.len().saturating_sub(1)]
        .iter()
        .filter_map(|l| l.split_once('│').map(|(_, right)| right.trim().to_string()))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The row of the list holding `text`.
fn row_of(rows: &[String], text: &str) -> usize {
    rows.iter()
        .position(|r| r.contains(text))
        .unwrap_or_else(|| panic!("no row holds {text:?}: {rows:#?}"))
}

/// The Archive heading unfolded, then `title`'s session (the last row)
/// selected and opened, showing `text`.
fn open_the_last_archived(t: &Tmux, title: &str, text: &str) -> String {
    t.keys(&["G"]);
    t.wait_for("the Archive heading selected", |s| {
        s.lines().any(|l| l.contains('›') && l.contains("Archive"))
    });
    t.keys(&["Space"]);
    t.wait_for("the archive's sessions shown", |s| s.contains(title));
    t.keys(&["G"]);
    t.wait_for("the archived session selected", |s| {
        s.lines().any(|l| l.contains('›') && l.contains(title))
    });
    t.keys(&["Enter"]);
    // The selection already shows its text: wait for the turn view's own
    // hints too, so the next key is not sent before enter was taken (an
    // escape and a key read together are alt+key).
    t.wait_for("the archived session's text, the turn view focused", |s| {
        s.contains(text) && s.contains("esc back") && !s.contains("enter open")
    })
}

/// `ocview attach URL` (one server): its sessions under its address, then
/// the Archive heading, folded, holding what the archive kept of this
/// server on this machine that the server no longer has; not a teammate's
/// server, not the archive's copy of one of the server's own. Enter opens
/// the archived one.
#[test]
fn a_single_servers_viewer_lists_the_archives_sessions_of_that_server() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    let live_id = support::fleet_server::session_id(0, 0);
    archive_with(&archive, &live_id);
    let fleet = FakeFleet::start(1, 2, 0.0);
    {
        let mut engine = ocview::archive::sqlite::SqliteArchive::open(&archive).unwrap();
        let here = ocview::archive::Origin {
            server: Some(fleet.urls[0].clone()),
            host: ocview::archive::origin::hostname(),
            file: None,
        };
        archive_session(
            &mut engine,
            here,
            &session_lines(
                "ses_gone1",
                "Yesterday's work",
                "/srv/0",
                "Done yesterday",
                86_400,
            ),
        );
    }
    let address = fleet.urls[0].trim_start_matches("http://").to_string();
    let t = Tmux::start_sized("archiveattach", 200, 50);
    let home = t.home().display().to_string();
    t.line(&format!(
        "XDG_DATA_HOME={home} OPENCODE_DB={home}/none.db {} --archive {} attach {}",
        env!("CARGO_BIN_EXE_ocview"),
        archive.display(),
        fleet.urls[0]
    ));
    let shown = t.wait_for("the server's sessions and the archive's heading", |s| {
        s.contains("load 0/0") && s.contains("Archive")
    });
    let rows = list(&shown);
    let server = row_of(&rows, &address);
    let heading = row_of(&rows, "Archive");
    assert!(
        server < row_of(&rows, "load 0/0") && heading > row_of(&rows, "load 0/1"),
        "{shown}"
    );
    assert!(rows[heading].contains('▸'), "folded: {shown}");
    assert!(shown.contains("Sessions 3"), "{shown}");
    assert!(!shown.contains("Yesterday's work"), "{shown}");
    let opened = open_the_last_archived(&t, "Yesterday's work", "Done yesterday");
    assert!(
        !opened.contains("Teammate fixes billing")
            && !opened.contains("ana-lapt")
            && !opened.contains("ARCHIVED COPY")
            && !opened.contains("other-box"),
        "{opened}"
    );
    assert!(!opened.contains("(no server)"), "{opened}");

    // `R` on its row: its event log in the player, played to the end,
    // shows what opening it showed; quitting the player comes back.
    t.keys(&["Escape"]);
    t.wait_for("the list focused", |s| s.contains("enter open"));
    t.keys(&["R"]);
    let played = t.wait_for("the archived session played to its end", |s| {
        s.contains("archive ses_gone1")
            && player_position(s).is_some_and(|(n, all)| n == all && n > 0)
    });
    assert_eq!(
        transcript(&played),
        transcript(&opened),
        "{played}\n{opened}"
    );
    assert_eq!(
        transcript(&opened),
        ["◆ build · claude-x", "Done yesterday"],
        "{opened}"
    );
    t.keys(&["q"]);
    t.wait_for("the viewer again", |s| s.contains("the replay closed"));
    t.keys(&["q"]);
}

/// `ocview history`: the database's sessions, then the archive's under
/// their origin; the archive's copy of a database session not at all.
#[test]
fn the_history_viewer_lists_the_archives_sessions() {
    use support::history_db as db;
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    archive_with(&archive, "ses_db1");
    let opencode = dir.path().join("opencode.db");
    let c = db::create(&opencode, true);
    db::project(&c, "prj_a", "/work/alpha", T);
    db::session(&c, "ses_db1", "prj_a", None, "Database session", T, None);
    drop(c);
    let t = Tmux::start_sized("archivehistory", 200, 50);
    let home = t.home().display().to_string();
    t.line(&format!(
        "XDG_DATA_HOME={home} OPENCODE_DB={} {} --archive {} history",
        opencode.display(),
        env!("CARGO_BIN_EXE_ocview"),
        archive.display(),
    ));
    let shown = t.wait_for("the database's sessions and the archive's heading", |s| {
        s.contains("Database session") && s.contains("Archive")
    });
    let rows = list(&shown);
    let history = row_of(&rows, "history");
    assert!(
        history < row_of(&rows, "Database session") && row_of(&rows, "Archive") > history,
        "{shown}"
    );
    let opened = open_the_last_archived(
        &t,
        "Teammate fixes billing",
        "The invoice rounding is fixed",
    );
    assert!(
        row_of(&list(&opened), "ana-lapt") > row_of(&list(&opened), "Archive"),
        "{opened}"
    );
    assert!(
        !opened.contains("ARCHIVED COPY") && !opened.contains("other-box"),
        "{opened}"
    );
    t.keys(&["q"]);
}
