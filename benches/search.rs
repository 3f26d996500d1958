//! Search, the prompt jump list and search highlights on a long session
//! (28,500 messages, as long as the longest session seen on a real server).
//!
//! 1. The first match after the last key, through the real worker thread:
//!    a word with a hit near the view, and a string found once, just above
//!    the view (the search goes forward and wraps: the whole session). Cold (the first query parses every
//!    tool's input) and warm. Goal: first match ≤ 100 ms.
//! 2. All matches counted.
//! 3. Opening the jump list.
//! 4. Frame time with matches marked on screen against the same frame
//!    without a search. Goal ≤ 1.5.
//!
//! Run with `cargo bench --bench search`.

use std::time::{Duration, Instant};

mod common;
use common::{frame, median};
use common::{msg_id, session};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ocview::app::App;
use ocview::app::view::Jump;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const MESSAGES: usize = 28_500;
const W: u16 = 160;
const H: u16 = 50;

fn key(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

/// Type `query` after `/`; how long until the first match is there, and
/// until every match is counted.
fn search(app: &mut App, query: &str) -> (Duration, Duration) {
    app.focus = ocview::app::Focus::Turns;
    key(app, '/');
    // A person takes this long to type a key or two.
    std::thread::sleep(Duration::from_millis(150));
    let chars: Vec<char> = query.chars().collect();
    let (last, head) = chars.split_last().unwrap();
    for &c in head {
        key(app, c);
    }
    let start = Instant::now();
    key(app, *last);
    let mut first = None;
    loop {
        app.on_search_results();
        let s = app.overlays.search.session.as_ref().unwrap();
        if first.is_none() && (!s.hits.is_empty() || s.counted) {
            first = Some(start.elapsed());
        }
        if s.counted {
            let all = start.elapsed();
            app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
            return (first.unwrap(), all);
        }
        if start.elapsed() > Duration::from_secs(30) {
            panic!("no answer for {query:?}");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn main() {
    println!("building a session of {MESSAGES} messages…");
    let mut app = session(MESSAGES);
    let mut terminal = Terminal::new(TestBackend::new(W, H)).unwrap();
    frame(&mut app, &mut terminal);

    // One assistant message a little above the view holds it: scanning
    // forward from the view wraps round the whole session to reach it.
    let rare = format!("fn f{}()", MESSAGES - 61);
    let rare = rare.as_str();
    let (cold_first, cold_all) = search(&mut app, rare);
    let (warm_first, warm_all) = search(&mut app, rare);
    let (near_first, near_all) = search(&mut app, "second point");
    let hits = app.overlays.search.session.as_ref().unwrap().hits.len();
    println!("search over {MESSAGES} messages (worker thread, from the last key):");
    println!(
        "  one hit just above the view, cold : first {cold_first:>10.2?}  all {cold_all:>10.2?}"
    );
    println!(
        "  one hit just above the view, warm : first {warm_first:>10.2?}  all {warm_all:>10.2?}"
    );
    println!(
        "  {hits} hits, one near the view  : first {near_first:>10.2?}  all {near_all:>10.2?}"
    );
    println!("  goal: first match <= 100 ms");

    let mut opens = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        key(&mut app, 'i');
        opens.push(t.elapsed());
        app.overlay = None;
    }
    println!(
        "opening the jump list ({} prompts): {:>10.2?}",
        MESSAGES / 2,
        median(opens)
    );

    // Frames in the middle of the session with the same lines on screen,
    // with and without matches marked.
    let middle = msg_id(MESSAGES / 2);
    let mut times = |app: &mut App| {
        app.turn_state_mut()
            .unwrap()
            .jump(Jump::ToMessage(middle.clone()));
        frame(app, &mut terminal);
        let mut v = Vec::new();
        for round in 0..200 {
            app.turn_state_mut()
                .unwrap()
                .scroll(if round % 2 == 0 { 3 } else { -3 });
            let t = Instant::now();
            frame(app, &mut terminal);
            v.push(t.elapsed());
        }
        median(v)
    };
    app.overlays.search.session = None;
    let plain = times(&mut app);
    search(&mut app, "point");
    let marked = times(&mut app);
    println!("frame time mid-session ({W}x{H}), a small scroll each:");
    println!("  without search       : {plain:>10.2?}");
    println!("  with matches marked  : {marked:>10.2?}");
    println!(
        "  ratio                : {:.2}  goal <= 1.5",
        marked.as_secs_f64() / plain.as_secs_f64()
    );
}
