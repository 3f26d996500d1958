//! Streaming stays lean (issue 26, point 6): a delta to the streaming part
//! writes to the terminal only the lines that changed, and the work per
//! delta does not grow with the turn's length.

use std::sync::{Arc, Mutex};

use ocview::app::App;
use ocview::app::config::Config;
use ocview::source::decode::apply::decode_record;
use ocview::source::msg::SourceMsg;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn feed(app: &mut App, line: &str) {
    app.on_source(SourceMsg::Record(Box::new(decode_record(
        line.as_bytes(),
        1,
        true,
    ))));
}

const SES: &str = "ses_1";

/// A session with `earlier` finished turns, then a busy assistant message
/// whose text part streams.
fn streaming_app(earlier: usize) -> App {
    let mut app = App::new(Config::default(), "test", true).unwrap();
    feed(
        &mut app,
        &format!(
            r#"{{"type":"session.created","properties":{{"info":{{"id":"{SES}","title":"stream","directory":"/p","time":{{"created":1,"updated":1}}}}}}}}"#
        ),
    );
    let mut n = 0;
    let mut msg = |app: &mut App, role: &str, parent: &str, text: &str, done: bool| {
        n += 1;
        let id = format!("msg_{n:06}");
        let parent = if parent.is_empty() {
            String::new()
        } else {
            format!(r#","parentID":"{parent}""#)
        };
        let completed = if done { r#","completed":2"# } else { "" };
        feed(
            app,
            &format!(
                r#"{{"type":"message.updated","properties":{{"info":{{"id":"{id}","sessionID":"{SES}","role":"{role}"{parent},"time":{{"created":1{completed}}}}}}}}}"#
            ),
        );
        feed(
            app,
            &format!(
                r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{n:06}","messageID":"{id}","sessionID":"{SES}","type":"text","text":"{text}"}}}}}}"#
            ),
        );
        id
    };
    for i in 0..earlier {
        let u = msg(&mut app, "user", "", &format!("question {i}"), true);
        msg(
            &mut app,
            "assistant",
            &u,
            &format!("## Answer {i}\\n\\nSome **text** and a list:\\n\\n- one\\n- two"),
            true,
        );
    }
    let u = msg(&mut app, "user", "", "write a long answer", true);
    let a = msg(&mut app, "assistant", &u, "", false);
    feed(
        &mut app,
        &format!(
            r#"{{"type":"session.status","properties":{{"sessionID":"{SES}","status":{{"type":"busy"}}}}}}"#
        ),
    );
    STREAM.with(|s| *s.borrow_mut() = (a, format!("prt_{n:06}")));
    app.focus = ocview::app::Focus::Turns;
    app
}

thread_local! {
    static STREAM: std::cell::RefCell<(String, String)> = Default::default();
}

fn delta(app: &mut App, text: &str) {
    let (m, p) = STREAM.with(|s| s.borrow().clone());
    feed(
        app,
        &format!(
            r#"{{"type":"message.part.delta","properties":{{"sessionID":"{SES}","messageID":"{m}","partID":"{p}","field":"text","delta":"{text}"}}}}"#
        ),
    );
}

fn word(i: usize) -> String {
    if i % 40 == 39 {
        "\\n\\n".into()
    } else {
        format!("word{i} ")
    }
}

/// A writer that keeps what it is given and counts the writes.
#[derive(Clone, Default)]
struct Counting(Arc<Mutex<(Vec<u8>, usize)>>);
impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut o = self.0.lock().unwrap();
        o.0.extend_from_slice(buf);
        o.1 += 1;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Counting {
    fn bytes(&self) -> usize {
        self.0.lock().unwrap().0.len()
    }
    fn writes(&self) -> usize {
        self.0.lock().unwrap().1
    }
}

const W: u16 = 160;
const H: u16 = 45;

/// ocview's own terminal stack (colours to 256, the frame buffer, the
/// gap filling) over a counting writer, at a fixed size.
fn screen(out: &Counting) -> Terminal<ocview::app::terminal::ScreenBackend<Counting>> {
    use ocview::app::terminal::color_depth::ColorDepth;
    Terminal::with_options(
        ocview::app::terminal::screen_backend(out.clone(), ColorDepth::Ansi256),
        ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(Rect::new(0, 0, W, H)),
        },
    )
    .unwrap()
}

/// Streams `frames` frames of five words each through ocview's stack and a
/// test backend; the bytes written and the cells that changed, per frame.
fn stream(app: &mut App, out: &Counting, frames: usize) -> Vec<(usize, usize)> {
    let mut terminal = screen(out);
    let mut test = Terminal::new(TestBackend::new(W, H)).unwrap();
    let mut prev: Option<Buffer> = None;
    let mut costs = Vec::new();
    for frame in 0..frames {
        for k in 0..5 {
            delta(app, &word(frame * 5 + k));
        }
        app.prepare(Rect::new(0, 0, W, H));
        test.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
        let buf = test.backend().buffer().clone();
        let before = out.bytes();
        // draw_frame's steps, from the same layout as the test backend's.
        use ocview::app::run::FrameSink;
        terminal.backend_mut().begin_frame().unwrap();
        terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
        terminal.backend_mut().end_frame().unwrap();
        let bytes = out.bytes() - before;
        let cells = prev
            .as_ref()
            .map_or(buf.content.len(), |p| p.diff(&buf).len());
        costs.push((bytes, cells));
        prev = Some(buf);
    }
    costs
}

#[test]
fn a_streamed_frame_writes_little_more_than_the_cells_that_changed() {
    let mut app = streaming_app(3);
    let out = Counting::default();
    // Long enough that the view scrolls a line every few frames.
    let costs = stream(&mut app, &out, 120);
    let streamed = &costs[1..];
    let bytes: usize = streamed.iter().map(|c| c.0).sum();
    let cells: usize = streamed.iter().map(|c| c.1).sum();
    let scrolled: Vec<&(usize, usize)> = streamed.iter().filter(|c| c.1 > 1000).collect();
    assert!(
        scrolled.len() >= 5,
        "the view scrolled while streaming: {scrolled:?}"
    );
    // Moving the cursor over each unchanged space between two words cost
    // 6-8 bytes for one cell: it was 2.6 bytes per changed cell.
    let per_cell = bytes as f64 / cells as f64;
    println!("{bytes} bytes for {cells} changed cells: {per_cell:.2} a cell");
    assert!(per_cell < 1.9, "{per_cell:.2} bytes per changed cell");
    // A frame that only adds words to the last line stays small.
    let quiet = streamed
        .iter()
        .filter(|c| c.1 < 100)
        .map(|c| c.0)
        .max()
        .unwrap();
    assert!(quiet < 250, "{quiet} bytes for a frame adding five words");
}

#[test]
fn each_frame_reaches_the_terminal_in_at_most_two_writes() {
    let mut app = streaming_app(3);
    let out = Counting::default();
    let mut terminal = screen(&out);
    let mut big = 0;
    for frame in 0..40 {
        for k in 0..5 {
            delta(&mut app, &word(frame * 5 + k));
        }
        let (bytes, writes) = (out.bytes(), out.writes());
        ocview::app::run::draw_frame(&mut app, &mut terminal).unwrap();
        let (bytes, writes) = (out.bytes() - bytes, out.writes() - writes);
        if bytes > 1024 {
            big += 1;
        }
        // The frame, then the end of its synchronized update (ratatui
        // flushes at the end of its draw).
        assert!(
            writes <= 2,
            "frame {frame}: {bytes} bytes in {writes} writes"
        );
    }
    assert!(big > 0, "some frames were larger than a line buffer");
}

/// The work a frame does while an answer streams follows what is on the
/// screen, not how long the session is: blocks rendered and bytes written
/// over the same stream, after 3 and after 300 earlier turns.
#[test]
fn streaming_work_does_not_grow_with_the_session() {
    let cost = |earlier: usize| {
        let mut app = streaming_app(earlier);
        let out = Counting::default();
        // Past the first frames, which lay out whatever is on screen.
        stream(&mut app, &out, 10);
        let renders = app.cache.renders;
        let bytes = out.bytes();
        stream(&mut app, &out, 60);
        (app.cache.renders - renders, out.bytes() - bytes)
    };
    let (short_renders, short_bytes) = cost(3);
    let (long_renders, long_bytes) = cost(300);
    println!("renders {short_renders} / {long_renders}, bytes {short_bytes} / {long_bytes}");
    assert!(
        long_renders <= short_renders + 5,
        "{long_renders} blocks rendered after 300 turns, {short_renders} after 3"
    );
    assert!(
        long_bytes <= short_bytes + short_bytes / 5,
        "{long_bytes} bytes after 300 turns, {short_bytes} after 3"
    );
}
