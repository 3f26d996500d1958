//! The status line tells the truth: a record a server sent that could not
//! be read names that server, and a key shows what it was; a fleet heading
//! keeps a long server's port whole.

use crate::common;

use common::{app_with, press, screen};
use ocview::source::msg::SourceMsg;

fn status(screen: &str) -> &str {
    screen.lines().last().unwrap_or("")
}

#[test]
fn a_bad_record_from_a_server_names_it_and_a_key_shows_what_it_was() {
    let mut app = app_with(&common::fixture("b_edit_write_diff", "event.jsonl"));
    let nothing = screen(&mut app, 120, 30);
    assert!(!status(&nothing).contains("bad record"), "{nothing}");
    press(&mut app, &["!"]);
    assert!(app.overlay.is_none());
    assert_eq!(
        app.notice.as_deref(),
        Some("every record so far could be read")
    );
    app.notice = None;

    // Broken, and hostile: an escape sequence in the text it carried.
    let text = b"{\"type\":\"message.updated\",\"properties\":\x1b]0;owned\x07 {";
    let record = ocview::source::decode::apply::decode_record(text, 7, true);
    let msg = ocview::source::live::fleet::scope_msg(
        SourceMsg::Record(Box::new(record)),
        "build-box.example.com:4096",
    );
    app.on_source(msg);
    let told = screen(&mut app, 200, 30);
    let line = status(&told);
    assert!(
        line.contains("1 bad record in the stream of build-box.example.com:4096: line 7")
            && line.contains("(! shows it)"),
        "{line}"
    );

    press(&mut app, &["!"]);
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("A record that could not be read"), "{shown}");
    assert!(
        shown.contains("from build-box.example.com:4096, line 7"),
        "{shown}"
    );
    assert!(shown.contains("not valid JSON"), "{shown}");
    assert!(shown.contains("{\"type\":\"message.updated\""), "{shown}");
    assert!(
        !shown.contains('\x1b') && !shown.contains('\x07'),
        "{shown:?}"
    );
    press(&mut app, &["esc"]);
    assert!(app.overlay.is_none());
}

#[test]
fn a_fleet_heading_keeps_a_long_servers_port_whole() {
    let key = "build-server-number-seven.internal.example.com:41234";
    let lines = [
        format!(
            r#"{{"server":"{key}","type":"ocview.server","properties":{{"url":"http://{key}","state":"live","directory":"/srv/app"}}}}"#
        ),
        format!(
            r#"{{"server":"{key}","type":"session.created","properties":{{"info":{{"id":"ses_1","title":"Deploy","directory":"/srv/app","time":{{"created":1,"updated":1}}}}}}}}"#
        ),
        r#"{"server":"127.0.0.1:4096","type":"ocview.server","properties":{"url":"http://127.0.0.1:4096","state":"live","directory":"/srv/b"}}"#
            .to_string(),
    ];
    let mut app = app_with(lines.join("\n").as_bytes());
    // The list at its narrowest beside the turns.
    let shown = screen(&mut app, 100, 12);
    let heading = shown
        .lines()
        .find(|l| l.contains(":41234"))
        .unwrap_or_else(|| panic!("the port is cut:\n{shown}"));
    assert!(
        heading.contains('…') && heading.contains("build-"),
        "{heading}"
    );
}

/// Without its archive (here a file that is no archive), the status line
/// says so for as long as it lasts: past the live state that clears other
/// notices and past a notice's life; `!` says why. The archive's list
/// reader's trouble stays said the same way until it reads again.
#[test]
fn a_lost_archive_is_said_until_it_is_back() {
    use ocview::app::msg::AppMsg;
    use ocview::archive::Setting;
    use ocview::source::msg::SourceState;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let mut app = app_with(&common::fixture("b_edit_write_diff", "event.jsonl"));
    let mut done = app.verbs.take_done();
    let tell = app.verbs.done_sender();
    app.archive.tap = Some(ocview::archive::writer::spawn(
        Setting::Sqlite(path),
        ocview::archive::Origin {
            server: Some("http://127.0.0.1:4096".into()),
            host: "here".into(),
            file: None,
        },
        Box::new(move |line| {
            let _ = tell.send(AppMsg::Archive(
                ocview::app::overlays::archive_search::Reply::Said(line),
            ));
        }),
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.archive.trouble().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer said nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    while let Ok(d) = done.try_recv() {
        app.on_done(d);
    }
    // A live state clears passing notices; ten minutes pass.
    app.on_source(SourceMsg::State(SourceState::Live));
    app.expire_notice(tokio::time::Instant::now() + std::time::Duration::from_secs(600));
    assert_eq!(app.notice, None);
    let line = screen(&mut app, 120, 30);
    assert!(status(&line).contains("archive off (! why)"), "{line}");
    press(&mut app, &["!"]);
    let why = app.notice.clone().unwrap_or_default();
    assert!(
        why.starts_with("archive off: ") && why.contains("archive.db"),
        "{why}"
    );

    // The list reader's trouble, said and then over.
    app.archive.tap = None;
    app.notice = None;
    assert!(!status(&screen(&mut app, 120, 30)).contains("archive off"));
    app.on_source(SourceMsg::ArchiveTrouble(Some(
        "archive: connection refused".into(),
    )));
    app.on_source(SourceMsg::State(SourceState::Live));
    assert!(status(&screen(&mut app, 120, 30)).contains("archive off"));
    app.on_source(SourceMsg::ArchiveTrouble(None));
    assert!(!status(&screen(&mut app, 120, 30)).contains("archive off"));
}

/// `archive_redact = "off"` with a team archive: the line says secrets go
/// out as they came, for as long as it is so; a local archive, or the
/// default, says nothing.
#[test]
fn an_unredacted_team_archive_is_said() {
    use ocview::archive::Setting;
    use ocview::redact::{Policy, set_policy};
    let mut app = app_with(&common::fixture("b_edit_write_diff", "event.jsonl"));
    app.on_source(SourceMsg::State(ocview::source::msg::SourceState::Live));
    let said = |app: &mut ocview::app::App| status(&screen(app, 160, 30)).to_string();
    app.archive.setting = Some(Setting::Postgres("postgres://me@db/team".into()));
    assert!(!said(&mut app).contains("unredacted"));
    set_policy(Policy::Off);
    let line = said(&mut app);
    assert!(
        line.contains("team archive: secrets go out unredacted"),
        "{line}"
    );
    app.archive.setting = Some(Setting::Sqlite("/tmp/archive.db".into()));
    assert!(!said(&mut app).contains("unredacted"));
    set_policy(Policy::Shared);
}
