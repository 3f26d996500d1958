//! The replay player in the viewer: playing at the recorded pace and at
//! other speeds, pausing, stepping by event, part and turn both ways,
//! seeking by time and percentage, and the timeline in the status line.
//! The clock is tokio's paused clock, so every moment is exact.

use crate::common;

use std::time::Duration;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::panes::status_line::player::{PlayOptions, StartAt};
use ocview::model::Store;
use ocview::source::IngestStats;
use ocview::source::msg::SourceMsg;
use ocview::source::timeline::playback::Speed;
use ocview::source::timeline::{Backing, IndexOptions, Marks, Timeline};
use tokio::time::{Instant, advance};

fn demo_bytes() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.jsonl")).unwrap()
}

/// An app playing `bytes` as a recording file, started as `play` says.
fn player_app(bytes: Vec<u8>, play: PlayOptions) -> App {
    let options = IndexOptions {
        max_gap: Duration::from_secs(5),
        spacing: Some(50),
        reading_step: None,
    };
    let opened = Timeline::index(Backing::Memory(bytes.into()), options).unwrap();
    let mut app = App::new(Config::default(), "replay demo.jsonl", true).unwrap();
    app.play = play;
    app.on_source(SourceMsg::Indexed(Box::new(opened)));
    app
}

fn position(app: &App) -> usize {
    app.player.as_ref().unwrap().timeline.position()
}

fn dump(store: &Store) -> String {
    ocview::headless::dump::render(store, &IngestStats::default())
}

/// The state a straight replay of the first `n` records gives.
fn straight(bytes: &[u8], n: usize) -> String {
    let text = std::str::from_utf8(bytes).unwrap();
    let lines: String = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect();
    dump(&common::replay_bytes(lines.as_bytes()).0)
}

fn status_line(app: &mut App) -> String {
    let screen = common::screen(app, 160, 30);
    screen.lines().last().unwrap().to_string()
}

fn user_messages(app: &App) -> usize {
    app.store
        .sessions()
        .iter()
        .flat_map(|s| &s.messages)
        .filter(|m| m.info.is_user())
        .count()
}

#[tokio::test(start_paused = true)]
async fn plays_at_the_recorded_pace_scaled_by_the_speed() {
    let bytes = demo_bytes();
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            start: StartAt::Start,
            speed: Speed::Times(2.0),
            ..Default::default()
        },
    );
    assert_eq!(position(&app), 0);
    assert!(app.store.sessions().is_empty());
    let start = Instant::now();
    // The first record is due at once; then they come at twice their pace.
    assert_eq!(app.player_due(), Some(start));
    advance(Duration::from_secs(3)).await;
    assert!(app.on_play_tick(Instant::now()));
    let p = app.player.as_ref().unwrap();
    assert_eq!(position(&app), p.timeline.count_due_by(6_000));
    assert!(position(&app) > 0 && position(&app) < p.timeline.len());
    assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
    // The next wake-up is when the next record falls due, not before.
    let at = position(&app);
    let due = app.player_due().unwrap();
    assert!(due > Instant::now());
    advance(due - Instant::now() - Duration::from_millis(1)).await;
    app.on_play_tick(Instant::now());
    assert_eq!(position(&app), at);
    advance(Duration::from_millis(1)).await;
    app.on_play_tick(Instant::now());
    assert!(position(&app) > at);

    // Paused, time passes and nothing moves.
    common::press(&mut app, &["P"]);
    assert_eq!(app.player_due(), None);
    let at = position(&app);
    advance(Duration::from_secs(30)).await;
    assert!(!app.on_play_tick(Instant::now()));
    assert_eq!(position(&app), at);

    // Faster, playing again: it reaches the end and stops there.
    common::press(&mut app, &["+", "+", "P"]);
    assert_eq!(app.player.as_ref().unwrap().clock.speed, Speed::Times(8.0));
    advance(Duration::from_secs(10)).await;
    app.on_play_tick(Instant::now());
    let p = app.player.as_ref().unwrap();
    assert!(p.at_end());
    assert!(!p.clock.playing());
    assert_eq!(dump(&app.store), straight(&bytes, usize::MAX));
    insta::assert_snapshot!("ended", status_line(&mut app));
}

#[tokio::test(start_paused = true)]
async fn instant_speed_plays_everything_without_waiting() {
    let bytes = demo_bytes();
    let mut app = player_app(bytes.clone(), PlayOptions::default());
    for _ in 0..10 {
        common::press(&mut app, &["+"]);
    }
    assert_eq!(app.player.as_ref().unwrap().clock.speed, Speed::Instant);
    assert!(app.player_due().unwrap() <= Instant::now());
    app.on_play_tick(Instant::now());
    assert!(app.player.as_ref().unwrap().at_end());
    assert_eq!(dump(&app.store), straight(&bytes, usize::MAX));
    common::press(&mut app, &["-"]);
    assert_eq!(app.player.as_ref().unwrap().clock.speed, Speed::Times(64.0));
}

#[tokio::test(start_paused = true)]
async fn starting_at_the_end_shows_the_finished_session_paused() {
    let bytes = demo_bytes();
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    let p = app.player.as_ref().unwrap();
    assert!(p.at_end() && !p.clock.playing());
    assert_eq!(dump(&app.store), straight(&bytes, usize::MAX));
    // Play at the end starts over, as a video player does.
    common::press(&mut app, &["P"]);
    assert_eq!(position(&app), 0);
    assert!(app.player.as_ref().unwrap().clock.playing());
}

#[tokio::test(start_paused = true)]
async fn steps_move_by_event_part_and_turn_both_ways() {
    let bytes = demo_bytes();
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    common::press(&mut app, &["0"]);
    assert_eq!(position(&app), 0);
    assert!(app.store.sessions().is_empty());

    common::press(&mut app, &[".", ".", "."]);
    assert_eq!(position(&app), 3);
    common::press(&mut app, &[","]);
    assert_eq!(position(&app), 2);
    assert_eq!(dump(&app.store), straight(&bytes, 2));

    // One turn at a time: each step forward adds exactly one user message.
    common::press(&mut app, &["0"]);
    let mut turns = Vec::new();
    loop {
        let before = position(&app);
        common::press(&mut app, &[")"]);
        if position(&app) == before {
            break;
        }
        turns.push(position(&app));
        assert_eq!(
            user_messages(&app),
            turns.len(),
            "after turn step to {before}"
        );
        assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
    }
    assert!(turns.len() >= 3, "{turns:?}");
    assert!(app.player.as_ref().unwrap().at_end());
    // And back, turn by turn, to just before each one started: where the
    // forward steps stopped.
    for (k, want) in turns.iter().rev().skip(1).take(2).enumerate() {
        common::press(&mut app, &["("]);
        assert_eq!(position(&app), *want);
        assert_eq!(user_messages(&app), turns.len() - 1 - k);
        assert_eq!(dump(&app.store), straight(&bytes, *want));
    }

    // Parts: every step lands where a part starts, and back returns there.
    common::press(&mut app, &["0"]);
    let mut stops = vec![0];
    for _ in 0..40 {
        common::press(&mut app, &[">"]);
        let p = app.player.as_ref().unwrap();
        let at = p.timeline.position();
        assert!(at == p.timeline.len() || p.timeline.marks_of(at).contains(Marks::PART));
        assert!(at > *stops.last().unwrap());
        stops.push(at);
    }
    assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
    for want in stops.iter().rev().skip(1).take(10) {
        common::press(&mut app, &["<"]);
        // A part step back lands where the step forward to it stopped.
        assert_eq!(position(&app), *want);
    }
    assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
}

#[tokio::test(start_paused = true)]
async fn seeks_by_typed_time_or_percentage_and_by_ten_seconds() {
    let bytes = demo_bytes();
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    let duration = app.player.as_ref().unwrap().timeline.duration_ms();
    common::press(&mut app, &[":", "5", "0", "%"]);
    insta::assert_snapshot!("seek_input", status_line(&mut app));
    common::press(&mut app, &["enter"]);
    let p = app.player.as_ref().unwrap();
    assert_eq!(p.clock.head(Instant::now()), duration / 2);
    assert_eq!(position(&app), p.timeline.count_due_by(duration / 2));
    assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
    insta::assert_snapshot!("paused_midway", status_line(&mut app));

    common::press(&mut app, &[":", "0", ":", "0", "5", "enter"]);
    let p = app.player.as_ref().unwrap();
    assert_eq!(position(&app), p.timeline.count_due_by(5_000));
    common::press(&mut app, &["f"]);
    let p = app.player.as_ref().unwrap();
    assert_eq!(position(&app), p.timeline.count_due_by(15_000));
    common::press(&mut app, &["b", "b"]);
    assert_eq!(app.player.as_ref().unwrap().clock.head(Instant::now()), 0);

    // A typo says what it wanted and moves nothing; esc cancels.
    let at = position(&app);
    common::press(&mut app, &[":", "s", "o", "o", "n", "enter"]);
    assert_eq!(position(&app), at);
    assert!(app.notice.as_deref().unwrap().contains("not a time"));
    common::press(&mut app, &[":", "9", "esc"]);
    assert!(app.panes.seek_input.is_none());
    assert_eq!(position(&app), at);
    common::press(&mut app, &["$"]);
    assert!(app.player.as_ref().unwrap().at_end());
}

#[tokio::test(start_paused = true)]
async fn the_timeline_marks_prompts_and_errors() {
    // The demo, with an unreadable line and a session error spliced in.
    let text = String::from_utf8(demo_bytes()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines.len() * 3 / 4;
    let mut spliced: Vec<String> = lines[..cut].iter().map(|l| l.to_string()).collect();
    spliced.push("{not json".into());
    spliced.push(r#"{"t":25000,"event":{"type":"session.error","properties":{"error":{"name":"APIError","data":{"message":"overloaded"}}}}}"#.into());
    spliced.extend(lines[cut..].iter().map(|l| l.to_string()));
    let bytes = spliced.join("\n").into_bytes();
    let mut app = player_app(
        bytes,
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    let p = app.player.as_ref().unwrap();
    assert_eq!(p.marks.iter().filter(|m| m.2).count(), 2);
    assert!(p.marks.iter().filter(|m| !m.2).count() >= 3);
    let line = status_line(&mut app);
    assert!(line.contains('✕') && line.contains('◆'), "{line}");
    insta::assert_snapshot!("marks", line);
}

#[tokio::test(start_paused = true)]
async fn the_help_lists_the_player_keys_only_when_replaying_a_file() {
    let mut app = player_app(demo_bytes(), PlayOptions::default());
    common::press(&mut app, &["?"]);
    let help = common::screen(&mut app, 120, 80);
    assert!(help.contains("Replay player") && help.contains("one part forward"));

    let mut stream = common::app_with(&demo_bytes());
    common::press(&mut stream, &["?"]);
    assert!(!common::screen(&mut stream, 120, 80).contains("Replay player"));
    // A stream cannot seek, and says so.
    common::press(&mut stream, &["esc", "."]);
    assert!(stream.notice.as_deref().unwrap().contains("cannot seek"));
}

#[test]
fn stream_formats_are_not_indexed() {
    let sse = b"data: {\"type\":\"server.connected\",\"properties\":{}}\n\n".to_vec();
    let err = Timeline::index(Backing::Memory(sse.into()), IndexOptions::default())
        .err()
        .unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
}

#[tokio::test(start_paused = true)]
async fn a_click_or_a_drag_on_the_timeline_seeks_there() {
    use crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut app = player_app(
        demo_bytes(),
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    status_line(&mut app);
    let bar = app.areas.timeline.expect("the bar is shown at 160 columns");
    let duration = app.player.as_ref().unwrap().timeline.duration_ms();
    let mouse = |kind, column| {
        Event::Mouse(MouseEvent {
            kind,
            column,
            row: bar.y,
            modifiers: KeyModifiers::NONE,
        })
    };
    assert!(app.on_terminal_event(mouse(MouseEventKind::Down(MouseButton::Left), bar.x)));
    assert_eq!(
        position(&app),
        app.player.as_ref().unwrap().timeline.count_due_by(0)
    );
    let last = bar.x + bar.width - 1;
    app.on_terminal_event(mouse(MouseEventKind::Drag(MouseButton::Left), last));
    assert!(app.player.as_ref().unwrap().at_end());
    let middle = bar.x + (bar.width - 1) / 2;
    app.on_terminal_event(mouse(MouseEventKind::Down(MouseButton::Left), middle));
    let head = app.player.as_ref().unwrap().clock.head(Instant::now());
    let want = duration * ((bar.width - 1) / 2) as i64 / (bar.width - 1) as i64;
    assert!((head - want).abs() <= 1, "{head} vs {want}");
}

#[tokio::test(start_paused = true)]
async fn a_recording_without_times_seeks_by_its_share_of_records() {
    // Bare bus events, unwrapped from a recording: no receive times at all.
    let wrapped = common::fixture("a_bash_permission_once", "event.jsonl");
    let bytes: Vec<u8> = String::from_utf8(wrapped)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!("{}\n", v["event"])
        })
        .collect::<String>()
        .into_bytes();
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            start: StartAt::End,
            speed: Speed::Times(1.0),
            ..Default::default()
        },
    );
    let len = app.player.as_ref().unwrap().timeline.len();
    assert_eq!(app.player.as_ref().unwrap().timeline.duration_ms(), 0);
    common::press(&mut app, &[":", "5", "0", "%", "enter"]);
    assert_eq!(position(&app), (len as f64 / 2.0).round() as usize);
    assert_eq!(dump(&app.store), straight(&bytes, position(&app)));
    common::press(&mut app, &[":", "1", ":", "0", "0", "enter"]);
    assert!(app.notice.as_deref().unwrap().contains("no times"));
    // Playing it takes no time at all: every record is due at once.
    common::press(&mut app, &["0", "P"]);
    app.on_play_tick(Instant::now());
    assert!(app.player.as_ref().unwrap().at_end());
}

/// On an 80-column terminal, with a long file name, the timeline still
/// shows: the name and the focus hints give way to it.
#[tokio::test(start_paused = true)]
async fn the_timeline_keeps_its_place_on_narrow_terminals() {
    let options = IndexOptions {
        max_gap: Duration::from_secs(5),
        spacing: Some(50),
        reading_step: None,
    };
    let bytes = demo_bytes();
    let opened = Timeline::index(Backing::Memory(bytes.into()), options).unwrap();
    let label = "replay 2026-11-22-overnight-refactor-session.jsonl";
    let mut app = App::new(Config::default(), label, true).unwrap();
    app.play = PlayOptions {
        start: StartAt::End,
        speed: Speed::Times(1.0),
        ..Default::default()
    };
    app.on_source(SourceMsg::Indexed(Box::new(opened)));
    let mut lines = Vec::new();
    for width in [80, 100] {
        let screen = common::screen(&mut app, width, 24);
        let line = screen.lines().last().unwrap().to_string();
        assert!(line.contains('●') && line.contains('◆'), "{width}: {line}");
        assert!(
            line.contains("#1026/1026") && line.contains("P play"),
            "{line}"
        );
        lines.push(line);
    }
    insta::assert_snapshot!("narrow", lines.join("\n"));
}

/// Playing forward from the start takes over each checkpoint's store as it
/// passes it: the viewer's sessions are the checkpoints' own (shared), not
/// a second copy of everything played, and the state is the same.
#[tokio::test(start_paused = true)]
async fn playing_forward_shares_the_checkpoints_sessions() {
    let bytes = created_sessions(200);
    let mut app = player_app(
        bytes.clone(),
        PlayOptions {
            speed: Speed::Instant,
            ..Default::default()
        },
    );
    assert_eq!(position(&app), 0);
    app.on_play_tick(Instant::now());
    assert!(app.player.as_ref().unwrap().at_end());
    assert_eq!(dump(&app.store), straight(&bytes, usize::MAX));
    let sessions = app.store.sessions();
    assert_eq!(sessions.len(), 200);
    // Checkpoints every 50 records, the last at 150: the sessions created
    // before it are held by the checkpoints and the viewer alike.
    let shared = sessions
        .iter()
        .filter(|s| std::sync::Arc::strong_count(s) > 1)
        .count();
    assert_eq!(shared, 150, "sessions shared with the checkpoints");
}

/// A session taken in from elsewhere (the archive) while playing stays when
/// play passes a checkpoint: the store has moved on from the checkpoint's.
#[tokio::test(start_paused = true)]
async fn a_session_taken_in_while_playing_stays_past_a_checkpoint() {
    let mut app = player_app(created_sessions(200), PlayOptions::default());
    app.seek_records(10, None);
    common::feed(&mut app, &created_session("ses_9999archived", 9_999));
    app.seek_records(120, None);
    assert_eq!(position(&app), 120);
    assert!(app.store.session("ses_9999archived").is_some());
    assert_eq!(app.store.sessions().len(), 121);
}

fn created_session(id: &str, at: usize) -> Vec<u8> {
    format!(
        "{{\"type\":\"session.created\",\"properties\":{{\"info\":{{\"id\":\"{id}\",\"title\":\"t{at}\",\"directory\":\"/p\",\"time\":{{\"created\":{at},\"updated\":{at}}}}}}}}}\n"
    )
    .into_bytes()
}

/// A recording that creates `n` sessions, one a record.
fn created_sessions(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| created_session(&format!("ses_{i:04}shared"), i))
        .collect()
}
