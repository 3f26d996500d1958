//! Rendering speed, as ratios that must not depend on the session's size.
//!
//! 1. Frame time with 20,000 messages divided by frame time with 100, both
//!    scrolled to the middle: a frame after scrolling a page (new blocks to
//!    lay out) and a frame with nothing new. Goal ≤ 1.5.
//! 2. A text part streaming to 100 KB in 1 KB deltas: the cost of one delta
//!    (apply + lay out + draw) at 100 KB divided by its cost at 1 KB.
//!    Goal ≤ 2.
//!
//! Run with `cargo bench --bench render`.

use std::hint::black_box;
use std::time::{Duration, Instant};

mod common;
use common::{feed, msg_id, session};
use common::{frame, median};

use ocview::app::view::Jump;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const W: u16 = 160;
const H: u16 = 50;

/// (frame after a page scroll, frame with nothing new), medians.
fn frame_times(n: usize) -> (Duration, Duration) {
    let mut app = session(n);
    let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
    frame(&mut app, &mut terminal);
    let middle = msg_id(n / 2);
    app.turn_state_mut()
        .unwrap()
        .jump(Jump::ToMessage(middle.clone()));
    frame(&mut app, &mut terminal);
    let mut scrolled = Vec::new();
    let mut still = Vec::new();
    for round in 0..200 {
        // Down a page, and back up every 20 pages, so it stays mid-session.
        let by = if round % 40 < 20 {
            H as i64 - 2
        } else {
            -(H as i64 - 2)
        };
        app.turn_state_mut().unwrap().scroll(by);
        let t = Instant::now();
        frame(&mut app, &mut terminal);
        scrolled.push(t.elapsed());
        let t = Instant::now();
        frame(&mut app, &mut terminal);
        still.push(t.elapsed());
    }
    black_box(&app);
    (median(scrolled), median(still))
}

/// Median cost of one 1 KB delta (apply, lay out, draw) once the part holds
/// `at_kb` KB.
fn delta_cost(at_kb: usize) -> Duration {
    let mut app = session(2);
    let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
    let mid = msg_id(1);
    feed(
        &mut app,
        &format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_ffffffffffff","messageID":"{mid}","sessionID":"ses_b","type":"text","text":""}}}}}}"#
        ),
    );
    let paragraph = "Streaming paragraph with **some** markdown and `code` in it, long enough to wrap across a line or two of the view. ";
    let chunk = |k: usize| -> String {
        // ~1 KB: a few sentences, a blank line now and then, a code block sometimes.
        let mut s = String::new();
        while s.len() < 1000 {
            s.push_str(paragraph);
        }
        if k.is_multiple_of(3) {
            s.push_str("\\n\\n```python\\nprint(1)\\n```\\n\\n");
        } else {
            s.push_str("\\n\\n");
        }
        s
    };
    let delta = |k: usize| {
        format!(
            r#"{{"type":"message.part.delta","properties":{{"sessionID":"ses_b","messageID":"{mid}","partID":"prt_ffffffffffff","field":"text","delta":"{}"}}}}"#,
            chunk(k)
        )
    };
    let mut costs = Vec::new();
    for k in 0..at_kb + 20 {
        let line = delta(k);
        let t = Instant::now();
        feed(&mut app, &line);
        frame(&mut app, &mut terminal);
        if k >= at_kb {
            costs.push(t.elapsed());
        }
    }
    median(costs)
}

fn main() {
    let (small_scroll, small_still) = frame_times(100);
    let (big_scroll, big_still) = frame_times(20_000);
    println!("frame time, scrolled to the middle ({W}x{H}):");
    println!(
        "  100 messages   : {small_scroll:>10.2?} after a page scroll, {small_still:>10.2?} unchanged"
    );
    println!(
        "  20000 messages : {big_scroll:>10.2?} after a page scroll, {big_still:>10.2?} unchanged"
    );
    println!(
        "  ratio 20000/100: {:.2} (page scroll), {:.2} (unchanged)  goal <= 1.5",
        big_scroll.as_secs_f64() / small_scroll.as_secs_f64(),
        big_still.as_secs_f64() / small_still.as_secs_f64()
    );
    let at1 = delta_cost(1);
    let at100 = delta_cost(100);
    println!("streaming a text part in 1 KB deltas (apply + layout + draw):");
    println!("  per delta at 1 KB  : {at1:>10.2?}");
    println!("  per delta at 100 KB: {at100:>10.2?}");
    println!(
        "  ratio 100KB/1KB    : {:.2}  goal <= 2",
        at100.as_secs_f64() / at1.as_secs_f64()
    );
}
