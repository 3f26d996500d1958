use std::io::{BufRead, Cursor, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::app::launch::logging;
use ocview::app::launch::{self, DumpWhen, Outcome, Recording};
use ocview::app::panes::status_line::player::{PlayOptions, StartAt};
use ocview::app::terminal::color_depth::{ColorDepth, ColorSetting};
use ocview::model::{NoObserver, Store};
use ocview::source::live::fleet_watch;
use ocview::source::live::{Auth, Client, LiveOptions};
use ocview::source::recording::player::Pace;
use ocview::source::timeline::IndexOptions;
use ocview::source::timeline::playback::{GapCappedTime, Speed};
use ocview::source::{self, ReplayReader};

mod cli;
use cli::archive::ArchiveCommand;
use cli::{Cli, Command, ExportArg, PaceArgs, StartArg, db_replay, discovered, fleet_members};
use ocview::app::msg::AppMsg;
use ocview::app::overlays::archive_search::Reply;
use ocview::archive::{Origin, Setting};

/// The demo recording: real opencode 1.18.33 sessions (reasoning and
/// markdown, todos, a subagent, a permission, a question, edits and diffs).
const DEMO: &[u8] = include_bytes!("../assets/demo.jsonl");

/// The demo's reading pace: a new part at most this often.
const DEMO_READING_STEP: Duration = Duration::from_millis(1200);

/// Where a replay reads from.
enum Input {
    Stdin,
    File(PathBuf),
    Demo,
    /// Made in memory (a database session's event log), named by the label.
    Bytes(bytes::Bytes),
}

fn main() -> ExitCode {
    // A write past `ulimit -f` fails with EFBIG and is reported like any
    // other write error (naming the file), instead of SIGXFSZ killing the
    // process mid-recording with a core dump and no word.
    // SAFETY: setting a standard signal's disposition, before any thread.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let cli = Cli::parse();
    let _log = logging::init();
    let mut config = match Config::load(cli.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ocview: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(theme) = cli.theme {
        config.theme = Some(theme);
    }
    if cli.follow {
        config.follow_attention = true;
    } else if cli.no_follow {
        config.follow_attention = false;
    }
    if cli.archive.no_archive_opencode_db {
        config.archive_opencode_db = false;
    }
    match cli.archive.setting(config.archive.as_ref()) {
        Ok(setting) => {
            let _ = ARCHIVE.set(setting);
        }
        Err(e) => return finish(Err(Usage(e).into())),
    }
    let network = cli.discover;
    // The flag or the setting: either one keeps every answer unsent.
    let read_only = cli.read_only || config.read_only;
    let Some(mut command) = cli.command else {
        return finish(discover_and_attach(config, network, read_only, cli.session));
    };
    // Two spellings of one address (localhost and 127.0.0.1) are one server.
    if let Command::Attach { urls, .. } | Command::Record { urls, .. } = &mut command {
        match fleet_members::distinct_urls(urls) {
            Ok(distinct) => *urls = distinct,
            Err(e) => return finish(Err(e)),
        }
    }
    let result = match command {
        Command::Stats(args) => match cli::stats::run(&args) {
            Ok(text) => {
                print!("{text}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => Err(anyhow::anyhow!(e)),
        },
        Command::Search(args) => {
            cli::archive::search(&args, &archive_setting()).map_err(anyhow::Error::msg)
        }
        Command::Archive { command } => archive_command(config, command),
        Command::Discover { json } => resolve_auth(&cli::AuthArgs::default())
            .and_then(|auth| discovered::options(network, &config.servers, &[], auth))
            .and_then(|options| discovered::list(&options, json)),
        Command::Record {
            urls,
            file,
            all,
            auth,
        } => resolve_auth(&auth).and_then(|auth| match urls.as_slice() {
            [url] => record(url, &file, all, auth, &config),
            _ => record_fleet(&urls, &file, all, auth, &config),
        }),
        Command::Export {
            source,
            session,
            format,
            reasoning,
            timeout,
            auth,
        } => resolve_auth(&auth).and_then(|auth| {
            export(
                &source,
                session.as_deref(),
                format,
                reasoning,
                timeout,
                auth,
            )
        }),
        Command::Replay {
            file,
            session,
            dump,
            pace,
        } if db_replay::is_database(&file) => db_replay::replay(config, &file, session, dump, pace),
        Command::Replay {
            file,
            dump: true,
            session: Some(_),
            ..
        } => Err(Usage(format!(
            "--session with --dump takes an opencode database, and {} is a recording",
            file.display()
        ))
        .into()),
        Command::Replay {
            file, dump: true, ..
        } => dump_replay(&file),
        Command::History { db } => db_replay::history(config, db),
        Command::Demo { dump: true, .. } => {
            dump_input(Box::new(Cursor::new(DEMO)), Path::new("demo"))
        }
        Command::Replay {
            file,
            dump: false,
            pace,
            session,
        } => {
            let label = label_of(&file);
            if file.as_os_str() == "-" {
                viewer(config, &label, Input::Stdin, pace, session)
            } else {
                // Named at once when it cannot be read, before any terminal.
                open_recording(&file)
                    .and_then(|_| viewer(config, &label, Input::File(file), pace, session))
            }
        }
        Command::Demo { dump: false, pace } => viewer(config, "demo", Input::Demo, pace, None),
        Command::Attach {
            urls,
            all,
            auth,
            record,
            session,
            dump_after: None,
            dump_when_idle: false,
            ..
        } if urls.len() > 1 => resolve_auth(&auth)
            .and_then(|auth| fleet_members::from_urls(&urls, auth, all))
            .and_then(|fleet| {
                let viewer = Viewer { read_only, session };
                fleet_viewer(config, fleet, viewer, record.as_deref(), None)
            }),
        Command::Attach { urls, .. } if urls.len() > 1 => {
            Err(Usage("--dump-after and --dump-when-idle take one server".into()).into())
        }
        Command::Attach {
            urls,
            all,
            auth,
            record,
            session,
            dump_after,
            dump_when_idle,
            timeout,
        } => discovered::attach_url(urls.into_iter().next()).and_then(|url| {
            let auth = resolve_auth(&auth)?;
            let client = Client::new(&url, auth);
            let when = match (dump_after, dump_when_idle) {
                (Some(s), _) => Some(DumpWhen::After(Duration::from_secs_f64(s.max(0.0)))),
                (None, true) => Some(DumpWhen::Idle {
                    timeout: Duration::from_secs_f64(timeout.max(1.0)),
                }),
                _ => None,
            };
            let options = LiveOptions {
                all_projects: all,
                // `--dump-when-idle` pages each session itself, after the
                // sync (`attach_dump`); `--dump-after` dumps what the store
                // holds at that moment.
                load_all_messages: matches!(when, Some(DumpWhen::After(_))),
                ..Default::default()
            };
            match when {
                Some(when) => attach_dump(client, options, when),
                None => {
                    let viewer = Viewer { read_only, session };
                    attach_viewer(config, &url, client, options, viewer, record.as_deref())
                }
            }
        }),
    };
    finish(result)
}

/// The archive, as the flags, the environment and the config set it.
static ARCHIVE: std::sync::OnceLock<Setting> = std::sync::OnceLock::new();

fn archive_setting() -> Setting {
    ARCHIVE.get().cloned().unwrap_or(Setting::Off)
}

/// The archive's size cap and age limit, from the config.
fn archive_limits(config: &Config) -> ocview::archive::Limits {
    ocview::archive::Limits::from_settings(config.archive_max_mb, config.archive_max_age_days)
}

fn archive_command(config: Config, command: ArchiveCommand) -> anyhow::Result<ExitCode> {
    let setting = archive_setting();
    match command {
        ArchiveCommand::Import { files, opencode_db } => {
            let mut code = ExitCode::SUCCESS;
            if !files.is_empty() {
                code = cli::archive::import(&files, &setting).map_err(anyhow::Error::msg)?;
            }
            if let Some(db) = opencode_db {
                let db_code =
                    cli::archive::import_db(db.as_deref(), &archive_limits(&config), &setting)
                        .map_err(anyhow::Error::msg)?;
                if db_code != ExitCode::SUCCESS {
                    code = db_code;
                }
            }
            Ok(code)
        }
        ArchiveCommand::Stats { json } => {
            cli::archive::stats(json, &setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Prune => {
            cli::archive::prune(&archive_limits(&config), &setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Vacuum => cli::archive::vacuum(&setting).map_err(anyhow::Error::msg),
        ArchiveCommand::Export { session, file } => {
            cli::archive::export(session.as_deref(), &file, &setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Replay {
            session,
            dump,
            pace,
        } => {
            let (id, bytes) =
                cli::archive::recording(&session, &setting).map_err(anyhow::Error::msg)?;
            let label = format!("archive {id}");
            if dump {
                dump_input(Box::new(Cursor::new(bytes)), Path::new(&label))
            } else {
                viewer(config, &label, Input::Bytes(bytes), pace, Some(id))
            }
        }
    }
}

/// The archive for a viewer: searchable (`F`), and for a live source
/// written with what it receives, from `live`.
fn connect_archive(app: &mut App, live: Option<Origin>) {
    let setting = archive_setting();
    if setting == Setting::Off {
        return;
    }
    app.archive.setting = Some(setting.clone());
    // This machine's opencode database goes in too, in the background,
    // unless it alone is turned off.
    let db = app
        .config
        .archive_opencode_db
        .then(|| ocview::source::opencode_db::DbEnv::from_process().database())
        .flatten();
    if let Some(db) = db {
        app.archive.opencode_db = Some(ocview::archive::db_follow::spawn(
            setting.clone(),
            db,
            archive_limits(&app.config),
            say_archive(app),
        ));
    }
    if let Some(origin) = live {
        app.archive.tap = Some(ocview::archive::writer::spawn_bounded(
            setting,
            origin,
            archive_limits(&app.config),
            say_archive(app),
        ));
    }
}

/// `ocview record` keeps what it records in the archive too (when on);
/// what goes wrong with it is said on stderr.
fn record_tap(server: Option<String>, config: &Config) -> Option<ocview::archive::writer::Tap> {
    let setting = archive_setting();
    if setting == Setting::Off {
        return None;
    }
    Some(ocview::archive::writer::spawn_bounded(
        setting,
        Origin {
            server,
            host: ocview::archive::origin::hostname(),
            file: None,
        },
        archive_limits(config),
        Box::new(|line| eprintln!("ocview: {}", ocview::model::wire::sanitize::line(&line))),
    ))
}

/// How the archive's threads reach the status line.
fn say_archive(app: &App) -> Box<dyn Fn(String) + Send> {
    let done = app.verbs.done_sender();
    Box::new(move |line| {
        let _ = done.send(AppMsg::Archive(Reply::Said(line)));
    })
}

/// A file the viewer replays goes into the archive, on a thread of its own.
fn archive_file(app: &App, path: &Path) {
    let setting = archive_setting();
    if setting == Setting::Off {
        return;
    }
    let say = say_archive(app);
    let done = app.verbs.done_sender();
    let path = path.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("archive-import".into())
        .spawn(move || {
            let result = match setting.open() {
                Ok(Some(mut engine)) if engine.read_only().is_none() => {
                    import_replayed(&mut *engine, &path, &done)
                }
                Ok(_) => Ok(()),
                Err(e) => Err(format!("{e}: ocview goes on without it")),
            };
            if let Err(e) = result {
                say(e);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("archive: no import thread: {e}");
    }
}

/// Import a replayed file, saying on the status line how far it is while
/// a large one runs (a short one says nothing) and going quiet when done.
fn import_replayed(
    engine: &mut dyn ocview::archive::Engine,
    path: &Path,
    done: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
) -> Result<(), String> {
    use ocview::archive::progress::{Pacer, status_line};
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut pacer = Pacer::new(Duration::from_secs(1), Duration::from_millis(250));
    let mut on = |step| {
        if pacer.due(&step) {
            let _ = done.send(AppMsg::Archive(Reply::Progress(Some(status_line(
                &name, &step,
            )))));
        }
    };
    let result = ocview::archive::import::import_file_with(engine, path, &mut on).map(drop);
    if pacer.spoke() {
        let _ = done.send(AppMsg::Archive(Reply::Progress(None)));
    }
    result
}

/// The exit code for a command's result, its error said on stderr.
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) if e.is::<Usage>() => {
            eprintln!("ocview: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("ocview: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A mistake in how ocview was called (a bad URL): exit 2, like a bad flag.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A server URL checked before anything is sent; `from` names where it
/// came from when that was not the command line.
fn server_url(url: &str, from: Option<&str>) -> anyhow::Result<String> {
    ocview::source::live::url::check_url(url).map_err(|e| {
        let from = from.map(|f| format!(" in {f}")).unwrap_or_default();
        Usage(format!("bad server URL{from}: {e}")).into()
    })
}

/// A recording to read, or why not, naming it: a missing or unreadable
/// file, a directory. `-` is standard input.
fn open_recording(path: &Path) -> anyhow::Result<Box<dyn BufRead + Send>> {
    let shown = || ocview::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    if path.as_os_str() != "-" && path.is_dir() {
        anyhow::bail!(
            "cannot read {}: it is a directory, not a recording",
            shown()
        );
    }
    source::open_input(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", shown()))
}

/// What a replay says when its input held no event at all: for records
/// that could not be applied, the form the input was read as, the first
/// failing record's line and why (see `IngestStats::diagnosis`).
fn no_events(path: &Path, stats: &source::IngestStats) -> anyhow::Error {
    let name = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        ocview::model::wire::sanitize::line(&path.display().to_string()).into_owned()
    };
    if let Some(why) = stats.diagnosis() {
        let why = ocview::model::wire::sanitize::line(&why).into_owned();
        anyhow::anyhow!("{name}: no events ({why})")
    } else if stats.skipped > 0 {
        anyhow::anyhow!("{name}: no events (only a header)")
    } else if stats.applied + stats.ignored + stats.stale + stats.held == 0 && stats.lines > 0 {
        let form = stats.form.unwrap_or("unknown form");
        anyhow::anyhow!(
            "{name}: no events (read as {form}, {} lines: no records in it)",
            stats.lines
        )
    } else {
        anyhow::anyhow!("{name}: no events (it is empty)")
    }
}

/// The exit code for output cut short by a closed pipe (`| head`): what a
/// shell reports for a program SIGPIPE ended (128 + 13), quietly, so
/// `set -o pipefail` scripts still see the output was not all written.
const CLOSED_PIPE: u8 = 141;

/// Write `text` to standard output; any failure is an error (a closed pipe
/// a quiet one).
fn write_stdout(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => write_failed(e),
    }
}

fn label_of(file: &Path) -> String {
    if file.as_os_str() == "-" {
        "replay stdin".into()
    } else {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("replay {name}")
    }
}

fn viewer(
    config: Config,
    label: &str,
    input: Input,
    pace: PaceArgs,
    session: Option<String>,
) -> anyhow::Result<ExitCode> {
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
        app.archive.none_because = Some(ocview::app::overlays::archive_search::DEMO_KEEPS_NONE);
    } else {
        connect_archive(&mut app, None);
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

/// Basic auth from the flags and the environment; a mistake in them is a
/// usage error (exit 2).
fn resolve_auth(args: &cli::AuthArgs) -> anyhow::Result<Option<Auth>> {
    args.resolve().map_err(|e| Usage(e).into())
}

fn record(
    url: &str,
    file: &Path,
    all: bool,
    auth: Option<Auth>,
    config: &Config,
) -> anyhow::Result<ExitCode> {
    let url = server_url(url, None)?;
    let url = url.as_str();
    let tap = record_tap(Some(ocview::archive::origin::origin_url(url)), config);
    let rt = runtime()?;
    let n = rt.block_on(launch::record_headless(
        Client::new(url, auth),
        file,
        all,
        tap,
    ));
    rt.shutdown_background();
    eprintln!("ocview: recorded {} events to {}", n?, file.display());
    Ok(ExitCode::SUCCESS)
}

fn export(
    source_arg: &str,
    session: Option<&str>,
    format: ExportArg,
    reasoning: bool,
    timeout: f64,
    auth: Option<Auth>,
) -> anyhow::Result<ExitCode> {
    use ocview::headless::export::{self, ExportFormat};
    let format = match format {
        ExportArg::Md => ExportFormat::Markdown,
        ExportArg::Json => ExportFormat::Json,
    };
    if source_arg.contains("://") {
        let url = server_url(source_arg, None)?;
        return export_server(&url, session, format, reasoning, timeout, auth);
    }
    let path = Path::new(source_arg);
    // `host:4096` is a server without its scheme, unless such a file exists.
    if !path.exists()
        && source_arg.contains(':')
        && ocview::source::live::url::check_url(&format!("http://{source_arg}")).is_ok()
    {
        return Err(Usage(format!(
            "{source_arg:?} is neither a file nor a server URL: did you mean http://{source_arg}?"
        ))
        .into());
    }
    let input = open_recording(path)?;
    let mut store = Store::new();
    let stats = source::ingest(&mut ReplayReader::new(input), &mut store, &mut NoObserver)
        .map_err(|e| anyhow::anyhow!("cannot read {source_arg}: {e}"))?;
    if stats.events == 0 {
        return Err(no_events(path, &stats));
    }
    let sessions = export::pick(&store, session).map_err(anyhow::Error::msg)?;
    let text = export::render(&sessions, format, reasoning);
    write_stdout(&text)
}

/// `export URL`: once the server's sessions are idle, each written page
/// by page as the server gives them, never the whole session in memory.
fn export_server(
    url: &str,
    session: Option<&str>,
    format: ocview::headless::export::ExportFormat,
    reasoning: bool,
    timeout: f64,
    auth: Option<Auth>,
) -> anyhow::Result<ExitCode> {
    use ocview::headless::server_export::{self, ExportError};
    let client = Client::new(url, auth);
    let rt = runtime()?;
    let when = DumpWhen::Idle {
        timeout: Duration::from_secs_f64(timeout.max(1.0)),
    };
    // The sessions, their statuses and errors; no messages yet.
    let app = rt.block_on(launch::attach_store(
        client.clone(),
        LiveOptions::default(),
        when,
    ));
    let mut store = match app {
        Ok(app) => app.store,
        Err(e) => {
            rt.shutdown_background();
            return Err(e);
        }
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = rt.block_on(server_export::write(
        &client, &mut store, session, format, reasoning, &mut out,
    ));
    rt.shutdown_background();
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ExportError::Write(e)) => write_failed(e),
        Err(ExportError::Other(e)) => Err(anyhow::anyhow!("{e}")),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn attach_dump(client: Client, options: LiveOptions, when: DumpWhen) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let idle = matches!(when, DumpWhen::Idle { .. });
    let app = rt.block_on(launch::attach_store(client.clone(), options, when));
    let mut app = match app {
        Ok(app) => app,
        Err(e) => {
            rt.shutdown_background();
            return Err(e);
        }
    };
    // Written as it is made, never held whole.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if idle {
        // Each session's pages through a scratch file, a turn at a time
        // (issue 26: the store holding every message peaked at 9× the text).
        use ocview::headless::server_export::ExportError;
        let written = rt.block_on(ocview::headless::dump_pages::write(
            &client,
            &mut app.store,
            &mut app.stats,
            &mut out,
        ));
        rt.shutdown_background();
        return match written {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(ExportError::Write(e)) => write_failed(e),
            Err(ExportError::Other(e)) => Err(anyhow::anyhow!("{e}")),
        };
    }
    rt.shutdown_background();
    match ocview::headless::dump::write_live(&app.store, &app.stats, &mut out) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => write_failed(e),
    }
}

/// `ocview` alone: watch every server found and configured, in one
/// fleet, and keep looking for more; with none, say how to start one
/// (exit 1).
fn discover_and_attach(
    config: Config,
    network: bool,
    read_only: bool,
    session: Option<String>,
) -> anyhow::Result<ExitCode> {
    let auth = resolve_auth(&cli::AuthArgs::default())?;
    let configured = fleet_members::from_config(&config.fleet)?;
    let options = discovered::options(network, &config.servers, &configured, auth)?;
    let found = discovered::run(&options)?;
    let (fleet, pinned) = fleet_members::with_discovered(configured, &found.servers);
    if fleet.is_empty() {
        // No server, but opencode's database is here: its sessions.
        if let Some(db) = db_replay::local_database() {
            eprintln!(
                "ocview: no server found; showing the sessions in {}",
                db.display()
            );
            return db_replay::history(config, Some(db));
        }
        eprintln!("{}", ocview::source::live::discover::NOTHING_FOUND);
        return Ok(ExitCode::FAILURE);
    }
    // Said before the screen is taken, and there after it is given back.
    eprintln!(
        "ocview: watching {} (and any that appear later):",
        servers(fleet.len())
    );
    for server in &found.servers {
        eprintln!("    {}", discovered::line(server));
    }
    let watch = fleet_watch::Watch {
        options,
        interval: fleet_watch::WATCH_INTERVAL,
        found: found.servers.clone(),
        // Only a named server comes with credentials (discovery's word).
        member: Box::new(move |server, key| {
            fleet_members::member(
                &server.url,
                key,
                server.auth.clone(),
                false,
                server.directory.clone(),
            )
        }),
    };
    let viewer = Viewer { read_only, session };
    fleet_viewer(config, fleet, viewer, None, Some((watch, pinned)))
}

/// What the live viewers take from the command line besides the servers.
struct Viewer {
    read_only: bool,
    /// `--session ID`: opened once known.
    session: Option<String>,
}

/// The viewer on a fleet of servers.
fn fleet_viewer(
    config: Config,
    fleet: Vec<ocview::source::live::fleet::FleetServer>,
    viewer: Viewer,
    record: Option<&Path>,
    watch: Option<(fleet_watch::Watch, std::collections::HashSet<String>)>,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() {
        anyhow::bail!("standard output is not a terminal; the fleet viewer needs one");
    }
    let mut app = App::new(config, "fleet", false).map_err(|e| anyhow::anyhow!("{e}"))?;
    app.wanted_session = viewer.session;
    // Each server's sessions keep their own id; the origin names this
    // machine, and each member's server comes with its report.
    connect_archive(
        &mut app,
        Some(Origin {
            server: None,
            host: ocview::archive::origin::hostname(),
            file: None,
        }),
    );
    let rt = runtime()?;
    let outcome = rt.block_on(ocview::app::launch::fleet::fleet_tui(
        app,
        fleet,
        viewer.read_only,
        record,
        watch,
    ));
    rt.shutdown_background();
    Ok(match outcome? {
        Outcome::Done => ExitCode::SUCCESS,
        Outcome::Interrupted(code) => ExitCode::from(code),
    })
}

fn servers(n: usize) -> String {
    if n == 1 {
        "1 server".into()
    } else {
        format!("{n} servers")
    }
}

/// `ocview record URL URL… FILE`.
fn record_fleet(
    urls: &[String],
    file: &Path,
    all: bool,
    auth: Option<Auth>,
    config: &Config,
) -> anyhow::Result<ExitCode> {
    let fleet = fleet_members::from_urls(urls, auth, all)?;
    // Each member's sessions are kept with its own server (its report).
    let tap = record_tap(None, config);
    let rt = runtime()?;
    let n = rt.block_on(ocview::app::launch::fleet::record_fleet(fleet, file, tap));
    rt.shutdown_background();
    eprintln!("ocview: recorded {} events to {}", n?, file.display());
    Ok(ExitCode::SUCCESS)
}

fn attach_viewer(
    config: Config,
    url: &str,
    client: Client,
    options: LiveOptions,
    viewer: Viewer,
    record: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "standard output is not a terminal; use --dump-when-idle or --dump-after for a plain transcript"
        );
    }
    let mut app = App::new(config, url.to_string(), false).map_err(|e| anyhow::anyhow!("{e}"))?;
    app.wanted_session = viewer.session;
    connect_archive(
        &mut app,
        Some(Origin {
            server: Some(ocview::archive::origin::origin_url(url)),
            host: ocview::archive::origin::hostname(),
            file: None,
        }),
    );
    let rt = runtime()?;
    let outcome = rt.block_on(launch::attach_tui(
        app,
        client,
        options,
        viewer.read_only,
        record,
    ));
    rt.shutdown_background();
    Ok(match outcome? {
        Outcome::Done => ExitCode::SUCCESS,
        Outcome::Interrupted(code) => ExitCode::from(code),
    })
}

/// Plain mode: the transcript as it happens, colour only on a terminal;
/// at the recorded pace when `pace` says so, else as fast as it reads.
/// A closed pipe ends it quietly (exit 0: the reader stopped reading); any
/// other write error (a full disk) ends it with a message and exit 1.
fn plain(
    input: Box<dyn BufRead + Send>,
    path: &Path,
    pace: Option<Pace>,
    colors: ColorSetting,
) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    // NO_COLOR and `colors = "none"` hold here too.
    let color = stdout.is_terminal() && ColorDepth::from_env(colors) != ColorDepth::None;
    let mut printer = ocview::headless::plain::PlainPrinter::new(stdout.lock(), color);
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

/// A transcript that could not be written: quiet for a closed pipe.
fn write_failed(e: std::io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(ExitCode::from(CLOSED_PIPE))
    } else {
        Err(anyhow::anyhow!("cannot write to standard output: {e}"))
    }
}

/// A read that failed part-way, naming what was read.
fn read_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    let name = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        ocview::model::wire::sanitize::line(&path.display().to_string()).into_owned()
    };
    anyhow::anyhow!("cannot read {name}: {e}")
}

fn dump_replay(file: &Path) -> anyhow::Result<ExitCode> {
    let input = open_recording(file)?;
    dump_input(input, file)
}

fn dump_input(input: Box<dyn BufRead + Send>, path: &Path) -> anyhow::Result<ExitCode> {
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let stats = source::ingest(&mut reader, &mut store, &mut NoObserver)
        .map_err(|e| read_error(path, e))?;
    if stats.events == 0 {
        return Err(no_events(path, &stats));
    }
    write_stdout(&ocview::headless::dump::render(&store, &stats))
}
