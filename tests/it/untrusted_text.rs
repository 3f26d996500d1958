//! Text from the server or a file never reaches the terminal as a control
//! sequence: a frame drawn through the real crossterm backend into a byte
//! buffer holds ocview's own styling and nothing of the data's sequences.

use crate::common;

use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// Every trick: clear screen, window title (OSC 0), clipboard (OSC 52),
/// C1 CSI, a bidi override, a zero-width space, BEL, a tab, a bare CR.
const NASTY: &str =
    "A\u{1b}[2JB\u{1b}]0;pwned\u{7}C\u{1b}]52;c;ZXZpbA==\u{7}D\u{9b}31mE\u{202e}F\u{200b}G\tH\rI";

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn events() -> String {
    let t = json(NASTY);
    [
        format!(r#"{{"type":"session.created","properties":{{"info":{{"id":"ses_n","title":{t},"directory":"/p","time":{{"created":1,"updated":2}}}}}}}}"#),
        format!(r#"{{"type":"session.status","properties":{{"sessionID":"ses_n","status":{{"type":{t}}}}}}}"#),
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_u","sessionID":"ses_n","role":"user","agent":"build","time":{"created":1}}}}"#.to_string(),
        format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_1","messageID":"msg_u","sessionID":"ses_n","type":"text","text":{t}}}}}}}"#),
        format!(r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_v","sessionID":"ses_n","role":"assistant","parentID":"msg_u","agent":{t},"error":{{"name":"APIError","data":{{"message":{t}}}}},"time":{{"created":1}}}}}}}}"#),
        format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_2","messageID":"msg_v","sessionID":"ses_n","type":"reasoning","text":{t}}}}}}}"#),
        format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_3","messageID":"msg_v","sessionID":"ses_n","type":"tool","tool":{t},"callID":"c","state":{{"status":"error","input":{{"command":{t}}},"error":{t},"output":{t},"time":{{"start":1}}}}}}}}}}"#),
        format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_4","messageID":"msg_v","sessionID":"ses_n","type":{t},"x":{t}}}}}}}"#),
        format!(r#"{{"type":"todo.updated","properties":{{"sessionID":"ses_n","todos":[{{"content":{t},"status":"pending","priority":"high"}}]}}}}"#),
        format!(r#"{{"type":"permission.asked","properties":{{"id":"per_1","sessionID":"ses_n","permission":{t},"patterns":[{t}],"metadata":{{"command":{t}}}}}}}"#),
    ]
    .join("\n")
}

fn draw_bytes(width: u16, height: u16, keys: &[&str]) -> Vec<u8> {
    let mut app = common::app_with(events().as_bytes());
    app.now_ms = 1_795_339_400_000;
    common::press(&mut app, keys);
    let area = Rect::new(0, 0, width, height);
    let out = Shared::default();
    let backend = CrosstermBackend::new(out.clone());
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
    .unwrap();
    app.prepare(area);
    terminal.draw(|f| ocview::app::draw::draw(f, &app)).unwrap();
    drop(terminal);
    out.0.lock().unwrap().clone()
}

/// A byte buffer the test keeps a handle to while the backend writes.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn no_sequence_from_the_data_reaches_the_terminal() {
    for (w, h, keys) in [
        (100, 30, &[][..]),
        (200, 60, &["tab", "}", "space", "}", "t"][..]),
        (80, 24, &["?"][..]),
    ] {
        let bytes = draw_bytes(w, h, keys);
        let text = String::from_utf8(bytes.clone()).expect("frames are UTF-8");
        // The help overlay covers a narrow screen whole.
        let help = keys.contains(&"?");
        assert!(
            (text.contains('A') && text.contains("B")) || (help && text.contains("Keys")),
            "the text itself is drawn"
        );
        for bad in [
            "\u{1b}[2J",
            "\u{1b}]0;",
            "\u{1b}]52;",
            "\u{9b}",
            "\u{202e}",
            "\u{200b}",
            "\u{7}",
            "\t",
            "\r",
        ] {
            assert!(
                !text.contains(bad),
                "{bad:?} reached the terminal at {w}x{h}"
            );
        }
        // Every escape in the output is one of crossterm's own: CSI cursor
        // moves and SGR styles, nothing else (no OSC, no DCS, no mode sets).
        for (i, _) in text.match_indices('\u{1b}') {
            let rest = &text[i + 1..];
            assert!(
                rest.starts_with('['),
                "a non-CSI escape at byte {i}: {:?}",
                &rest[..rest.len().min(12)]
            );
            // Hiding and showing the cursor is ratatui's own, and the only mode.
            if rest.starts_with("[?25l") || rest.starts_with("[?25h") {
                continue;
            }
            let body: String = rest[1..]
                .chars()
                .take_while(|c| !c.is_ascii_alphabetic())
                .collect();
            let fin = rest[1 + body.len()..].chars().next().unwrap();
            assert!(
                matches!(fin, 'H' | 'm' | 'J' | 'K'),
                "unexpected CSI final {fin:?} after {body:?}"
            );
            assert!(
                body.chars()
                    .all(|c| c.is_ascii_digit() || c == ';' || c == ':'),
                "odd CSI body {body:?}"
            );
        }
        // The visible stand-ins show what was there.
        assert!(
            text.contains("␛[2J") || w < 100,
            "escape shown as a picture"
        );
    }
}

/// The same tricks in ids and keys too, through every text output that can
/// end up on a terminal: `--dump`, plain mode, and both export formats.
#[test]
fn no_sequence_from_the_data_reaches_dump_plain_or_export() {
    use ocview::headless::export::{self, ExportFormat};
    let nasty = json(NASTY);
    let id = json(&format!("ses_{NASTY}"));
    let text = events()
        .replace("\"ses_n\"", &id)
        .replace("\"command\"", &nasty);
    let mut printer = ocview::headless::plain::PlainPrinter::new(Vec::new(), false);
    let (store, stats) = common::replay_with(text.as_bytes(), &mut printer);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let sessions = export::pick(&store, None).unwrap();
    let outputs = [
        ("dump", ocview::headless::dump::render(&store, &stats)),
        ("plain", String::from_utf8(printer.into_inner()).unwrap()),
        (
            "md",
            export::render(&sessions, ExportFormat::Markdown, true),
        ),
        ("json", export::render(&sessions, ExportFormat::Json, true)),
    ];
    for (name, out) in &outputs {
        assert!(out.contains('A') && out.contains("ses_"), "{name}: {out}");
        for c in out.chars() {
            let control = c.is_control() && c != '\n';
            let invisible = matches!(c, '\u{202e}' | '\u{200b}');
            assert!(!control && !invisible, "{name}: {c:?} in {out:?}");
        }
    }
    // The JSON still says exactly what the data said.
    let back: serde_json::Value = serde_json::from_str(&outputs[3].1).unwrap();
    assert_eq!(back["info"]["title"], NASTY);
}
