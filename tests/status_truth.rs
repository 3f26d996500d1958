//! The status line tells the truth: a record a server sent that could not
//! be read names that server, and a key shows what it was; a fleet heading
//! keeps a long server's port whole.

mod common;

use common::{app_with, press, screen};
use ocview::source::player::SourceMsg;

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
    let record = ocview::source::replay::decode_record(text, 7, true);
    let msg = ocview::source::fleet::scope_msg(
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
