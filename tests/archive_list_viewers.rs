//! The archive's sessions in every viewer with a session list, not only a
//! fleet's: `ocview attach URL` (one server) and `ocview history`
//! (opencode's database) list them after their own, under the machine and
//! server they came from, once (a copy of a session the server or the
//! database shows is not listed again), and open them; `R` on one plays
//! its event log in the player to what opening it shows. The real binary,
//! in tmux.

mod support;

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

/// The teammate's session, selected (the last row) and opened.
fn open_the_teammates_session(t: &Tmux) -> String {
    t.keys(&["G"]);
    t.wait_for("the archived session selected", |s| {
        s.lines()
            .any(|l| l.contains('›') && l.contains("Teammate fixes billing"))
    });
    t.keys(&["Enter"]);
    // The selection already shows its text: wait for the turn view's own
    // hints too, so the next key is not sent before enter was taken (an
    // escape and a key read together are alt+key).
    t.wait_for("the archived session's text, the turn view focused", |s| {
        s.contains("The invoice rounding is fixed")
            && s.contains("esc back")
            && !s.contains("enter open")
    })
}

/// `ocview attach URL` (one server): its sessions under its address, the
/// archive's after them under their origin, the archive's copy of one of
/// the server's own not at all; enter opens an archived one.
#[test]
fn a_single_servers_viewer_lists_the_archives_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.db");
    let live_id = support::fleet_server::session_id(0);
    archive_with(&archive, &live_id);
    let fleet = FakeFleet::start(1, 2, 0.0);
    let address = fleet.urls[0].trim_start_matches("http://").to_string();
    let t = Tmux::start_sized("archiveattach", 200, 50);
    let home = t.home().display().to_string();
    t.line(&format!(
        "XDG_DATA_HOME={home} OPENCODE_DB={home}/none.db {} --archive {} attach {}",
        env!("CARGO_BIN_EXE_ocview"),
        archive.display(),
        fleet.urls[0]
    ));
    let shown = t.wait_for("the server's and the archive's sessions", |s| {
        s.contains("load 0/0") && s.contains("Teammate fixes billing")
    });
    let rows = list(&shown);
    let server = row_of(&rows, &address);
    let origin = row_of(&rows, "ana-lapt");
    assert!(rows[origin].contains("archived"), "{shown}");
    assert!(
        server < row_of(&rows, "load 0/0") && origin > server,
        "{shown}"
    );
    assert!(origin < row_of(&rows, "Teammate fixes billing"), "{shown}");
    assert!(
        !shown.contains("ARCHIVED COPY") && !shown.contains("other-box"),
        "{shown}"
    );
    assert!(!shown.contains("(no server)"), "{shown}");
    let opened = open_the_teammates_session(&t);

    // `R` on its row: its event log in the player, played to the end,
    // shows what opening it showed; quitting the player comes back.
    t.keys(&["Escape"]);
    t.wait_for("the list focused", |s| s.contains("enter open"));
    t.keys(&["R"]);
    let played = t.wait_for("the archived session played to its end", |s| {
        s.contains("archive ses_team1")
            && player_position(s).is_some_and(|(n, all)| n == all && n > 0)
    });
    assert_eq!(
        transcript(&played),
        transcript(&opened),
        "{played}\n{opened}"
    );
    assert_eq!(
        transcript(&opened),
        ["◆ build · claude-x", "The invoice rounding is fixed"],
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
    let shown = t.wait_for("the database's and the archive's sessions", |s| {
        s.contains("Database session") && s.contains("Teammate fixes billing")
    });
    let rows = list(&shown);
    let history = row_of(&rows, "history");
    let origin = row_of(&rows, "ana-lapt");
    assert!(
        history < row_of(&rows, "Database session") && origin > history,
        "{shown}"
    );
    assert!(
        !shown.contains("ARCHIVED COPY") && !shown.contains("other-box"),
        "{shown}"
    );
    open_the_teammates_session(&t);
    t.keys(&["q"]);
}
