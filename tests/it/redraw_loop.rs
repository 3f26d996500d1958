//! The loop and its frame gate, on tokio's paused clock: streamed events are
//! drawn at most every 100 ms, input at once, and nothing at all while
//! nothing happens.

use crate::common;

use common::frame_probe::FrameProbe;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::run::{Exit, FrameSink, run};
use ocview::source::decode::apply::decode_record;
use ocview::source::msg::SourceMsg;
use ocview::source::recording::player::{self, Pace};
use ratatui::Terminal;
use tokio::sync::mpsc;
use tokio::time::Instant;

fn record(line: &str) -> SourceMsg {
    SourceMsg::Record(Box::new(decode_record(line.as_bytes(), 1, true)))
}

/// A backend that notes when each frame was finished.
fn setup() -> (App, Terminal<FrameProbe>, Arc<Mutex<Vec<Instant>>>) {
    let app = App::new(Config::default(), "test", true).unwrap();
    let frames = Arc::new(Mutex::new(Vec::new()));
    let noted = frames.clone();
    let backend = FrameProbe::new(100, 30, move |_| noted.lock().unwrap().push(Instant::now()));
    (app, Terminal::new(backend).unwrap(), frames)
}

const HEAD: [&str; 3] = [
    r#"{"type":"session.created","properties":{"info":{"id":"ses_1","title":"stream","time":{"created":1,"updated":1}}}}"#,
    r#"{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"ses_1","role":"assistant","time":{"created":1}}}}"#,
    r#"{"type":"message.part.updated","properties":{"part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"text","text":""}}}"#,
];

fn delta(i: usize) -> String {
    format!(
        r#"{{"type":"message.part.delta","properties":{{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","field":"text","delta":"word{i} "}}}}"#
    )
}

#[tokio::test(start_paused = true)]
async fn a_thousand_deltas_over_two_seconds_draw_about_twenty_frames_then_none() {
    let (mut app, mut terminal, frames) = setup();
    let (tx, rx) = mpsc::channel(64);
    let start = Instant::now();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        for line in HEAD {
            tx.send(record(line)).await.unwrap();
        }
        for i in 0..1000 {
            tokio::time::sleep(Duration::from_millis(2)).await;
            tx.send(record(&delta(i))).await.unwrap();
        }
        // Two quiet seconds with the source still open, then stop.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let _ = stop_tx.send(());
        drop(tx);
    });
    let exit = run(
        &mut app,
        &mut terminal,
        futures_util::stream::pending,
        rx,
        async {
            let _ = stop_rx.await;
        },
    )
    .await
    .unwrap();
    assert_eq!(exit, Exit::Shutdown);
    let frames = frames.lock().unwrap().clone();
    let streaming = frames
        .iter()
        .filter(|t| **t <= start + Duration::from_millis(2050))
        .count();
    let idle = frames
        .iter()
        .filter(|t| **t > start + Duration::from_millis(2100))
        .count();
    assert!(
        streaming <= 22,
        "{streaming} frames while streaming (first frame + at most 21)"
    );
    assert!(
        streaming >= 15,
        "{streaming} frames: the view must keep up with the stream"
    );
    assert_eq!(idle, 0, "no frame while nothing changes");
    let text = app.store.session("ses_1").unwrap().messages[0].parts[0]
        .text()
        .unwrap()
        .to_string();
    assert!(text.ends_with("word999 "), "every delta applied");
}

#[tokio::test(start_paused = true)]
async fn a_key_draws_at_once_even_mid_stream() {
    let (mut app, mut terminal, frames) = setup();
    let (tx, rx) = mpsc::channel(64);
    let (key_tx, key_rx) = mpsc::unbounded_channel();
    let start = Instant::now();
    tokio::spawn(async move {
        for line in HEAD {
            tx.send(record(line)).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(105)).await;
        tx.send(record(&delta(0))).await.unwrap();
        // A key 10 ms after a streamed frame: drawn at once, not 90 ms later.
        tokio::time::sleep(Duration::from_millis(10)).await;
        let key = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('?'));
        key_tx.send(Ok(crossterm::event::Event::Key(key))).unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        key_tx
            .send(Ok(crossterm::event::Event::Key(
                crossterm::event::KeyCode::Char('q').into(),
            )))
            .unwrap();
        key_tx
            .send(Ok(crossterm::event::Event::Key(
                crossterm::event::KeyCode::Char('q').into(),
            )))
            .unwrap();
        drop(tx);
    });
    let mut input = Some(tokio_stream_from(key_rx));
    let input = move || input.take().expect("input is started once");
    let exit = run(&mut app, &mut terminal, input, rx, std::future::pending())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Quit);
    let frames = frames.lock().unwrap().clone();
    let key_at = start + Duration::from_millis(115);
    assert!(
        frames.contains(&key_at),
        "a frame exactly when the key arrived: {:?}",
        frames.iter().map(|t| *t - start).collect::<Vec<_>>()
    );
}

fn tokio_stream_from(
    rx: mpsc::UnboundedReceiver<std::io::Result<crossterm::event::Event>>,
) -> impl futures_util::Stream<Item = std::io::Result<crossterm::event::Event>> + Unpin {
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (e, rx))
    }))
}

#[tokio::test(start_paused = true)]
async fn the_player_releases_records_at_their_recorded_times() {
    let lines: Vec<String> = [0, 100, 250, 10_250]
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#"{{"t":{t},"event":{{"type":"session.created","properties":{{"info":{{"id":"ses_{i}","title":"x"}}}}}}}}"#))
        .collect();
    let input = std::io::Cursor::new(lines.join("\n").into_bytes());
    let (tx, mut rx) = mpsc::channel(16);
    let start = Instant::now();
    player::spawn(
        input,
        Pace {
            speed: Some(2.0),
            max_gap: Duration::from_secs(1),
        },
        tx,
    );
    let mut at = Vec::new();
    while let Some(msg) = rx.recv().await {
        if let SourceMsg::Record(_) = msg {
            at.push((Instant::now() - start).as_millis());
        }
    }
    // Twice as fast, and the 10 s gap capped at 1 s: 0, 50, 125, 625 ms.
    assert_eq!(at, [0, 50, 125, 625]);
}

#[test]
fn frames_are_wrapped_in_synchronized_updates() {
    use std::io::Write;
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let out = Shared::default();
    let mut backend = ratatui::backend::CrosstermBackend::new(out.clone());
    backend.begin_frame().unwrap();
    backend.end_frame().unwrap();
    let bytes = out.0.lock().unwrap().clone();
    assert_eq!(bytes, b"\x1b[?2026h\x1b[?2026l");
}

#[tokio::test(start_paused = true)]
async fn a_playing_recording_draws_at_most_every_100_ms_and_stops_at_its_end() {
    use ocview::source::timeline::playback::Speed;
    use ocview::source::timeline::{Backing, IndexOptions, Timeline};
    let (mut app, mut terminal, frames) = setup();
    app.play.speed = Speed::Times(4.0);
    let demo = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap();
    let opened = Timeline::index(
        Backing::Memory(demo.clone().into()),
        IndexOptions::default(),
    )
    .unwrap();
    let duration = opened.timeline.duration_ms() as u64;
    let (tx, rx) = mpsc::channel(4);
    tx.send(SourceMsg::Indexed(Box::new(opened))).await.unwrap();
    let start = Instant::now();
    let play_time = Duration::from_millis(duration / 4);
    let stop = async {
        tokio::time::sleep(play_time + Duration::from_secs(5)).await;
        drop(tx);
    };
    let exit = run(
        &mut app,
        &mut terminal,
        futures_util::stream::pending,
        rx,
        stop,
    )
    .await
    .unwrap();
    assert_eq!(exit, Exit::Shutdown);
    let p = app.player.as_ref().unwrap();
    assert!(p.at_end() && !p.clock.playing());
    let (whole, _) = common::replay_bytes(&demo);
    assert_eq!(
        ocview::headless::dump::render(&app.store, &Default::default()),
        ocview::headless::dump::render(&whole, &Default::default())
    );
    let frames = frames.lock().unwrap().clone();
    let playing = frames
        .iter()
        .filter(|t| **t <= start + play_time + Duration::from_millis(150))
        .count();
    let after = frames
        .iter()
        .filter(|t| **t > start + play_time + Duration::from_millis(300))
        .count();
    let most = (play_time.as_millis() / 100) as usize + 2;
    assert!(playing <= most, "{playing} frames in {play_time:?}");
    assert!(playing >= most / 3, "{playing} frames: the view keeps up");
    assert_eq!(after, 0, "no frame once the recording ended");
}

#[tokio::test]
async fn code_drawn_plain_is_drawn_again_when_its_colours_arrive() {
    // Real time: the highlighter's worker is a thread. Nothing happens after
    // the first frame but the worker answering.
    let (_, mut terminal, frames) = setup();
    terminal.backend_mut().inner = ratatui::backend::TestBackend::new(100, 50);
    let mut app = common::app_with(&common::fixture("b_edit_write_diff", "event.jsonl"));
    let (_tx, rx) = mpsc::channel::<SourceMsg>(1);
    let stop = tokio::time::sleep(Duration::from_secs(3));
    let exit = run(
        &mut app,
        &mut terminal,
        futures_util::stream::pending,
        rx,
        stop,
    )
    .await
    .unwrap();
    assert_eq!(exit, Exit::Shutdown);
    let frames = frames.lock().unwrap().len();
    assert!(
        frames >= 2,
        "{frames} frame(s): the colours were never drawn"
    );
    // The edit card's context line `def greet(name):` now in syntax colours.
    let buf = terminal.backend().inner.buffer();
    let (x, y) = (0..buf.area.height)
        .find_map(|y| {
            let cells: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            let byte = cells.concat().find("def greet(name):")?;
            // The cell where that byte is (borders are wider than a byte).
            let mut seen = 0;
            let x = cells.iter().position(|c| {
                seen += c.len();
                seen > byte
            })?;
            Some((x as u16, y))
        })
        .expect("the edit card is on screen");
    let plain = [
        app.theme.style(ocview::render::theme::Role::Text).fg,
        app.theme.style(ocview::render::theme::Role::Code).fg,
    ];
    assert_eq!(buf[(x, y)].symbol(), "d");
    assert!(
        !plain.contains(&buf[(x, y)].style().fg),
        "`def` is coloured by the grammar: {:?}",
        buf[(x, y)].style()
    );
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Run a live viewer over `lines` sent at once, then `quiet` with the
/// source open and a heartbeat every 10 s; the times of its frames.
async fn live_frames(lines: Vec<String>, quiet: Duration) -> Vec<Instant> {
    let app = App::new(Config::default(), "live test", false).unwrap();
    let frames = Arc::new(Mutex::new(Vec::new()));
    let noted = frames.clone();
    let backend = FrameProbe::new(100, 30, move |_| noted.lock().unwrap().push(Instant::now()));
    let (mut app, mut terminal) = (app, Terminal::new(backend).unwrap());
    let (tx, rx) = mpsc::channel(64);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        tx.send(record(r#"{"type":"server.connected","properties":{}}"#))
            .await
            .unwrap();
        for line in lines {
            tx.send(record(&line)).await.unwrap();
        }
        let end = Instant::now() + quiet;
        while Instant::now() + Duration::from_secs(10) <= end {
            tokio::time::sleep(Duration::from_secs(10)).await;
            tx.send(record(r#"{"type":"server.heartbeat","properties":{}}"#))
                .await
                .unwrap();
        }
        tokio::time::sleep_until(end).await;
        let _ = stop_tx.send(());
        drop(tx);
    });
    run(
        &mut app,
        &mut terminal,
        futures_util::stream::pending,
        rx,
        async {
            let _ = stop_rx.await;
        },
    )
    .await
    .unwrap();
    frames.lock().unwrap().clone()
}

/// A busy session says busy again (opencode repeats it), then heartbeats
/// for a minute: nothing changes on screen, so nothing is drawn.
#[tokio::test(start_paused = true)]
async fn heartbeats_and_a_status_said_again_draw_nothing() {
    let start = Instant::now();
    let now = wall_ms();
    let lines = vec![
        format!(
            r#"{{"type":"session.created","properties":{{"info":{{"id":"ses_1","title":"quiet","time":{{"created":{now},"updated":{now}}}}}}}}}"#
        ),
        r#"{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"idle"}}}"#
            .into(),
    ];
    let frames = live_frames(lines, Duration::from_secs(50)).await;
    let after_first: Vec<_> = frames
        .iter()
        .filter(|t| **t > start + Duration::from_millis(500))
        .collect();
    assert!(
        after_first.is_empty(),
        "{} frames after the first: {:?}",
        after_first.len(),
        after_first.iter().map(|t| **t - start).collect::<Vec<_>>()
    );
}

/// Ages on screen move the screen at most once a minute: sessions updated
/// 50 s, 40 s and 30 s ago turn "1m" at 10, 20 and 30 s from now, and
/// then minutes; over five minutes that is one frame a minute at most.
#[tokio::test(start_paused = true)]
async fn ages_redraw_at_most_once_a_minute() {
    let start = Instant::now();
    let now = wall_ms();
    let lines = (1..=3)
        .map(|i| {
            let t = now - 60_000 + i * 10_000;
            format!(
                r#"{{"type":"session.created","properties":{{"info":{{"id":"ses_{i}","title":"s{i}","time":{{"created":{t},"updated":{t}}}}}}}}}"#
            )
        })
        .collect();
    let frames = live_frames(lines, Duration::from_secs(300)).await;
    let later: Vec<Duration> = frames
        .iter()
        .filter(|t| **t > start + Duration::from_millis(500))
        .map(|t| *t - start)
        .collect();
    assert!(!later.is_empty(), "an age that changed was never drawn");
    assert!(later[0] <= Duration::from_secs(11), "{later:?}");
    for pair in later.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_secs(60), "{later:?}");
    }
}
