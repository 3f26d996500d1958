//! The command line, acted on: flags and config into one setup, then the
//! command it names.

use std::io::Cursor;
use std::path::Path;
use std::process::ExitCode;

use crate::app::config::Config;
use crate::cli::PaceArgs;
use crate::cli::archive::ArchiveCommand;
use crate::cli::archive_tap::archive_limits;
use crate::cli::attach::discover_and_attach;
use crate::cli::io::Usage;
use crate::cli::io::{Setup, finish};
use crate::cli::io::{label_of, open_recording};
use crate::cli::replay::{Input, dump_input, dump_replay, viewer};
use crate::cli::{AttachArgs, Cli, Command, db_replay, discovered, fleet_members};
use std::path::PathBuf;

/// Run the command `cli` names; its exit code.
pub fn run(cli: Cli) -> ExitCode {
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
    crate::redact::set_policy(config.archive_redact);
    let archive = match cli.archive.setting(config.archive.as_ref()) {
        Ok(setting) => setting,
        Err(e) => return finish(Err(Usage(e).into())),
    };
    let network = cli.discover;
    // The flag or the setting: either one keeps every answer unsent.
    let read_only = cli.read_only || config.read_only;
    let setup = Setup { config, archive };
    let Some(mut command) = cli.command else {
        return finish(discover_and_attach(setup, network, read_only, cli.session));
    };
    // Two spellings of one address (localhost and 127.0.0.1) are one server.
    if let Command::Attach(AttachArgs { urls, .. }) | Command::Record { urls, .. } = &mut command {
        match fleet_members::distinct_urls(urls) {
            Ok(distinct) => *urls = distinct,
            Err(e) => return finish(Err(e)),
        }
    }
    let result = match command {
        Command::Stats(args) => crate::cli::stats::print(&args),
        Command::Search(args) => {
            crate::cli::archive::search(&args, &setup.archive).map_err(anyhow::Error::msg)
        }
        Command::Audit(args) => {
            crate::cli::audit::run(&args, &setup.archive).map_err(anyhow::Error::msg)
        }
        Command::Insights { command } => {
            crate::cli::insights::run(&command, &setup.archive).map_err(anyhow::Error::msg)
        }
        Command::Archive { command } => archive_command(setup, command),
        Command::Discover { json } => discovered::discover(network, &setup, json),
        Command::Record {
            urls,
            file,
            all,
            auth,
        } => crate::cli::record::run(&urls, &file, all, &auth, &setup),
        Command::Export {
            source,
            session,
            format,
            reasoning,
            timeout,
            no_redact,
            auth,
        } => crate::cli::export::run(
            &source,
            session.as_deref(),
            format,
            crate::cli::export::ExportOptions {
                reasoning,
                timeout,
                redact: !no_redact,
            },
            &auth,
        ),
        Command::Replay {
            file,
            session,
            dump,
            pace,
        } => replay_command(setup, file, session, dump, pace),
        Command::History { db } => db_replay::history(setup, db),
        Command::Demo { dump, pace } => crate::cli::replay::demo(setup, dump, pace),
        Command::Attach(args) => crate::cli::attach::run(setup, args, read_only),
    };
    finish(result)
}

/// `ocview archive …`: import, stats, prune, vacuum, export, replay.
pub(crate) fn archive_command(setup: Setup, command: ArchiveCommand) -> anyhow::Result<ExitCode> {
    let (config, setting) = (&setup.config, &setup.archive);
    match command {
        ArchiveCommand::Import { files, opencode_db } => {
            let mut code = ExitCode::SUCCESS;
            if !files.is_empty() {
                code = crate::cli::archive::import(&files, &archive_limits(config), setting)
                    .map_err(anyhow::Error::msg)?;
            }
            if let Some(db) = opencode_db {
                let db_code =
                    crate::cli::archive::import_db(db.as_deref(), &archive_limits(config), setting)
                        .map_err(anyhow::Error::msg)?;
                if db_code != ExitCode::SUCCESS {
                    code = db_code;
                }
            }
            Ok(code)
        }
        ArchiveCommand::Fill { url, session, auth } => {
            let auth = crate::cli::io::resolve_auth(&auth)?;
            crate::cli::archive_fill::fill(&url, session.as_deref(), auth, &setup)
        }
        ArchiveCommand::Stats { json } => {
            crate::cli::archive::stats(json, setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Prune { dry_run: true } => {
            crate::cli::archive_prune::prune_plan(&archive_limits(config), setting)
                .map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Prune { dry_run: false } => {
            crate::cli::archive_prune::prune(&archive_limits(config), setting)
                .map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Log => crate::cli::archive_prune::prune_log().map_err(anyhow::Error::msg),
        ArchiveCommand::Pin { session, off } => {
            crate::cli::archive_keep::pin(session.as_deref(), !off, setting)
                .map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Policy {
            max_mb,
            max_age_days,
        } => crate::cli::archive_keep::policy(max_mb, max_age_days, setting)
            .map_err(anyhow::Error::msg),
        ArchiveCommand::Vacuum => {
            crate::cli::archive_prune::vacuum(setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Reindex => {
            crate::cli::archive_prune::reindex(setting).map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Export {
            session,
            no_redact,
            file,
        } => crate::cli::archive_export::export(session.as_deref(), &file, !no_redact, setting)
            .map_err(anyhow::Error::msg),
        ArchiveCommand::Redactions { session, json } => {
            crate::cli::archive_export::redactions(session.as_deref(), json, setting)
                .map_err(anyhow::Error::msg)
        }
        ArchiveCommand::Replay {
            session,
            dump,
            pace,
        } => {
            let (id, bytes) =
                crate::cli::archive::recording(&session, setting).map_err(anyhow::Error::msg)?;
            let label = format!("archive {id}");
            if dump {
                dump_input(Box::new(Cursor::new(bytes)), Path::new(&label))
            } else {
                viewer(setup, &label, Input::Bytes(bytes), pace, Some(id))
            }
        }
    }
}

/// `ocview replay FILE`: opencode's database (a session of it), a dump,
/// the plain transcript or the viewer.
pub(crate) fn replay_command(
    setup: Setup,
    file: PathBuf,
    session: Option<String>,
    dump: bool,
    pace: PaceArgs,
) -> anyhow::Result<ExitCode> {
    if db_replay::is_database(&file) {
        return db_replay::replay(setup, &file, session, dump, pace);
    }
    if dump {
        if session.is_some() {
            return Err(Usage(format!(
                "--session with --dump takes an opencode database, and {} is a recording",
                file.display()
            ))
            .into());
        }
        return dump_replay(&file);
    }
    let label = label_of(&file);
    if file.as_os_str() == "-" {
        return viewer(setup, &label, Input::Stdin, pace, session);
    }
    // Named at once when it cannot be read, before any terminal.
    open_recording(&file)?;
    viewer(setup, &label, Input::File(file), pace, session)
}
