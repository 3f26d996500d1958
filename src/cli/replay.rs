//! `ocview replay` and `ocview demo`: the viewer on a recording, the
//! plain transcript (`--plain`, or when output is not a terminal) and
//! the dump.

use std::io::{BufRead, Cursor, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::app::App;
use crate::app::launch::{self, Outcome, Recording};
use crate::app::panes::status_line::player::{PlayOptions, StartAt};
use crate::app::terminal::color_depth::{ColorDepth, ColorSetting};
use crate::cli::archive_tap::archive_file;
use crate::cli::archive_tap::connect_archive;
use crate::cli::io::open_recording;
use crate::cli::io::read_error;
use crate::cli::io::write_failed;
use crate::cli::io::write_stdout;
use crate::cli::io::{Setup, no_events};
use crate::cli::{PaceArgs, StartArg};
use crate::model::{NoObserver, Store};
use crate::source::recording::player::Pace;
use crate::source::timeline::IndexOptions;
use crate::source::timeline::playback::{GapCappedTime, Speed};
use crate::source::{self, ReplayReader};

/// The demo recording: real opencode 1.18.33 sessions (reasoning and
/// markdown, todos, a subagent, a permission, a question, edits and diffs).
pub(crate) const DEMO: &[u8] = include_bytes!("../../assets/demo.jsonl");

/// The demo's reading pace: a new part at most this often.
pub(crate) const DEMO_READING_STEP: Duration = Duration::from_millis(1200);

/// Where a replay reads from.
pub(crate) enum Input {
    Stdin,
    File(PathBuf),
    Demo,
    /// Made in memory (a database session's event log), named by the label.
    Bytes(bytes::Bytes),
}

pub(crate) fn viewer(
    setup: Setup,
    label: &str,
    input: Input,
    pace: PaceArgs,
    session: Option<String>,
) -> anyhow::Result<ExitCode> {
    let Setup { config, archive } = setup;
    if pace.plain || !std::io::stdout().is_terminal() {
        let (reader, path): (Box<dyn BufRead + Send>, &Path) = match &input {
            Input::Stdin => (open_recording(Path::new("-"))?, Path::new("-")),
            Input::File(path) => (open_recording(path)?, path),
            Input::Demo => (Box::new(Cursor::new(DEMO)), Path::new("demo")),
            Input::Bytes(b) => (Box::new(Cursor::new(b.clone())), Path::new(label)),
        };
        let max_gap = Duration::from_secs_f64(config.replay_max_gap_secs);
        let pace = pace.speed.filter(|_| !pace.instant).map(|speed| Pace {
            speed: Some(speed),
            max_gap,
        });
        return plain(reader, path, pace, config.colors);
    }
    let max_gap = Duration::from_secs_f64(config.replay_max_gap_secs);
    let speed = if pace.instant {
        Speed::Instant
    } else {
        Speed::Times(pace.speed.unwrap_or(1.0))
    };
    let start = match pace.start {
        StartArg::Start => StartAt::Start,
        StartArg::End => StartAt::End,
    };
    // A stream (stdin, SSE text) cannot seek: "end" means reading it all at once.
    let stream_pace = match (speed, start) {
        (Speed::Instant, _) | (_, StartAt::End) => Pace::INSTANT,
        (Speed::Times(x), StartAt::Start) => Pace {
            speed: Some(x),
            max_gap,
        },
    };
    let mut app = App::new(config, label, true).map_err(|e| anyhow::anyhow!("{e}"))?;
    app.wanted_session = session;
    if matches!(input, Input::Demo) {
        // The demo is a recording of ocview's own: nothing of the user's
        // is read or kept.
        app.archive.none_because = Some(crate::app::overlays::archive_search::DEMO_KEEPS_NONE);
    } else {
        connect_archive(&mut app, None, &archive);
    }
    if let Input::File(path) = &input {
        archive_file(&app, path);
    }
    app.play = PlayOptions {
        start,
        speed,
        end_hint: matches!(input, Input::Demo),
    };
    let index = IndexOptions {
        max_gap,
        spacing: None,
        // The demo is for reading: each step stays on screen a moment.
        reading_step: matches!(input, Input::Demo).then_some(DEMO_READING_STEP),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async move {
        match input {
            Input::Stdin => {
                let stdin = source::open_input(Path::new("-"))?;
                launch::replay_tui(app, stdin, stream_pace).await
            }
            Input::File(path) => {
                launch::play_tui(app, Recording::File(path), index, stream_pace).await
            }
            Input::Demo => {
                let bytes = bytes::Bytes::from_static(DEMO);
                launch::play_tui(app, Recording::Bytes(bytes), index, stream_pace).await
            }
            Input::Bytes(bytes) => {
                launch::play_tui(app, Recording::Bytes(bytes), index, stream_pace).await
            }
        }
    });
    // Reader threads may still be blocked on input (stdin): do not wait.
    runtime.shutdown_background();
    Ok(match outcome? {
        Outcome::Done => ExitCode::SUCCESS,
        Outcome::Interrupted(code) => ExitCode::from(code),
    })
}

/// Plain mode: the transcript as it happens, colour only on a terminal;
/// at the recorded pace when `pace` says so, else as fast as it reads.
/// A closed pipe ends it quietly (exit 0: the reader stopped reading); any
/// other write error (a full disk) ends it with a message and exit 1.
pub(crate) fn plain(
    input: Box<dyn BufRead + Send>,
    path: &Path,
    pace: Option<Pace>,
    colors: ColorSetting,
) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    // NO_COLOR and `colors = "none"` hold here too.
    let color = stdout.is_terminal() && ColorDepth::from_env(colors) != ColorDepth::None;
    let mut printer = crate::headless::plain::PlainPrinter::new(stdout.lock(), color);
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let mut stats = source::IngestStats::default();
    let started = std::time::Instant::now();
    let mut play_time = pace.map(|p| GapCappedTime::new(p.max_gap));
    let speed = pace.and_then(|p| p.speed).unwrap_or(1.0);
    while let Some(record) = reader.next_record().map_err(|e| read_error(path, e))? {
        if let (Some(play_time), Some(t)) = (&mut play_time, record.time()) {
            let due = Duration::from_millis(play_time.at(t) as u64).div_f64(speed);
            std::thread::sleep(due.saturating_sub(started.elapsed()));
        }
        source::decode::apply::apply_record(record, &mut store, &mut printer, &mut stats);
        if printer.error.is_some() {
            break; // nobody reads any more, or nothing can be written
        }
    }
    stats.form = reader.format().map(source::Format::label);
    stats.lines = reader.lines_read();
    if printer.error.is_none() {
        printer.finish(&store);
    }
    if printer.error.is_none() {
        let summary = stats.summary();
        let mut out = printer.into_inner();
        if let Err(e) = writeln!(out, "{summary}").and_then(|_| out.flush()) {
            return write_failed(e);
        }
    } else if let Some(e) = printer.error.take() {
        return write_failed(e);
    }
    if stats.events == 0 {
        return Err(no_events(path, &stats));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn dump_replay(file: &Path) -> anyhow::Result<ExitCode> {
    let input = open_recording(file)?;
    dump_input(input, file)
}

pub(crate) fn dump_input(input: Box<dyn BufRead + Send>, path: &Path) -> anyhow::Result<ExitCode> {
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let stats = source::ingest(&mut reader, &mut store, &mut NoObserver)
        .map_err(|e| read_error(path, e))?;
    if stats.events == 0 {
        return Err(no_events(path, &stats));
    }
    write_stdout(&crate::headless::dump::render(&store, &stats))
}

/// `ocview demo`: the built-in recording, in the viewer or dumped.
pub(crate) fn demo(setup: Setup, dump: bool, pace: PaceArgs) -> anyhow::Result<ExitCode> {
    if dump {
        dump_input(Box::new(Cursor::new(DEMO)), Path::new("demo"))
    } else {
        viewer(setup, "demo", Input::Demo, pace, None)
    }
}
