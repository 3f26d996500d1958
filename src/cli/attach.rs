//! `ocview attach` and `ocview` alone: the viewer on one server or a
//! fleet (found, configured or named), and the dumps of a server's
//! sessions.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::app::App;
use crate::app::launch::{self, DumpWhen, Outcome};
use crate::archive::Origin;
use crate::cli::archive_tap::connect_archive;
use crate::cli::io::Usage;
use crate::cli::io::runtime;
use crate::cli::io::write_failed;
use crate::cli::io::{Setup, resolve_auth};
use crate::cli::{AttachArgs, db_replay, discovered, fleet_members};
use crate::source::live::fleet_watch;
use crate::source::live::{Client, LiveOptions};

pub(crate) fn attach_dump(
    client: Client,
    options: LiveOptions,
    when: DumpWhen,
) -> anyhow::Result<ExitCode> {
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
        use crate::headless::server_export::ExportError;
        let written = rt.block_on(crate::headless::dump_pages::write(
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
    match crate::headless::dump::write_live(&app.store, &app.stats, &mut out) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => write_failed(e),
    }
}

/// `ocview` alone: watch every server found and configured, in one
/// fleet, and keep looking for more; with none, say how to start one
/// (exit 1).
pub(crate) fn discover_and_attach(
    setup: Setup,
    network: bool,
    read_only: bool,
    session: Option<String>,
) -> anyhow::Result<ExitCode> {
    let auth = resolve_auth(&crate::cli::AuthArgs::default())?;
    let configured = fleet_members::from_config(&setup.config.fleet)?;
    let options = discovered::options(network, &setup.config.servers, &configured, auth)?;
    let found = discovered::run(&options)?;
    let (fleet, pinned) = fleet_members::with_discovered(configured, &found.servers);
    if fleet.is_empty() {
        // No server, but opencode's database is here: its sessions.
        if let Some(db) = db_replay::local_database() {
            eprintln!(
                "ocview: no server found; showing the sessions in {}",
                db.display()
            );
            return db_replay::history(setup, Some(db));
        }
        eprintln!("{}", crate::source::live::discover::NOTHING_FOUND);
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
    fleet_viewer(setup, fleet, viewer, None, Some((watch, pinned)))
}

/// What the live viewers take from the command line besides the servers.
pub(crate) struct Viewer {
    pub(crate) read_only: bool,
    /// `--session ID`: opened once known.
    pub(crate) session: Option<String>,
}

/// The viewer on a fleet of servers.
pub(crate) fn fleet_viewer(
    setup: Setup,
    fleet: Vec<crate::source::live::fleet::FleetServer>,
    viewer: Viewer,
    record: Option<&Path>,
    watch: Option<(fleet_watch::Watch, std::collections::HashSet<String>)>,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() {
        anyhow::bail!("standard output is not a terminal; the fleet viewer needs one");
    }
    let mut app = App::new(setup.config, "fleet", false).map_err(|e| anyhow::anyhow!("{e}"))?;
    app.wanted_session = viewer.session;
    // Each server's sessions keep their own id; the origin names this
    // machine, and each member's server comes with its report.
    connect_archive(
        &mut app,
        Some(Origin {
            server: None,
            host: crate::archive::origin::hostname(),
            file: None,
        }),
        &setup.archive,
    );
    let rt = runtime()?;
    let outcome = rt.block_on(crate::app::launch::fleet::fleet_tui(
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

pub(crate) fn servers(n: usize) -> String {
    if n == 1 {
        "1 server".into()
    } else {
        format!("{n} servers")
    }
}

pub(crate) fn attach_viewer(
    setup: Setup,
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
    let mut app =
        App::new(setup.config, url.to_string(), false).map_err(|e| anyhow::anyhow!("{e}"))?;
    app.wanted_session = viewer.session;
    connect_archive(
        &mut app,
        Some(Origin {
            server: Some(crate::archive::origin::origin_url(url)),
            host: crate::archive::origin::hostname(),
            file: None,
        }),
        &setup.archive,
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

/// `ocview attach URL…`: the viewer on one server or a fleet, or a dump.
pub(crate) fn run(setup: Setup, args: AttachArgs, read_only: bool) -> anyhow::Result<ExitCode> {
    let AttachArgs {
        urls,
        all,
        auth,
        record,
        session,
        dump_after,
        dump_when_idle,
        timeout,
    } = args;
    let viewer = Viewer { read_only, session };
    if urls.len() > 1 {
        if dump_after.is_some() || dump_when_idle {
            return Err(Usage("--dump-after and --dump-when-idle take one server".into()).into());
        }
        let fleet = fleet_members::from_urls(&urls, resolve_auth(&auth)?, all)?;
        return fleet_viewer(setup, fleet, viewer, record.as_deref(), None);
    }
    let url = discovered::attach_url(urls.into_iter().next())?;
    let client = Client::new(&url, resolve_auth(&auth)?);
    let when = match (dump_after, dump_when_idle) {
        (Some(s), _) => Some(DumpWhen::After(Duration::from_secs_f64(s.max(0.0)))),
        (None, true) => Some(DumpWhen::Idle {
            timeout: Duration::from_secs_f64(timeout.max(1.0)),
        }),
        _ => None,
    };
    let options = LiveOptions {
        all_projects: all,
        // `--dump-when-idle` pages each session itself, after the sync
        // (`attach_dump`); `--dump-after` dumps what the store holds at
        // that moment.
        load_all_messages: matches!(when, Some(DumpWhen::After(_))),
        ..Default::default()
    };
    match when {
        Some(when) => attach_dump(client, options, when),
        None => attach_viewer(setup, &url, client, options, viewer, record.as_deref()),
    }
}
