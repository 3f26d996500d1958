//! `ocview export`: a session as Markdown or JSON, from a recording or
//! from a server (page by page, never whole in memory).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::app::launch::{self, DumpWhen};
use crate::cli::ExportArg;
use crate::cli::io::Usage;
use crate::cli::io::no_events;
use crate::cli::io::open_recording;
use crate::cli::io::runtime;
use crate::cli::io::server_url;
use crate::cli::io::write_failed;
use crate::cli::io::write_stdout;
use crate::model::{NoObserver, Store};
use crate::source::live::{Auth, Client, LiveOptions};
use crate::source::{self, ReplayReader};

pub(crate) fn export(
    source_arg: &str,
    session: Option<&str>,
    format: ExportArg,
    options: ExportOptions,
    auth: Option<Auth>,
) -> anyhow::Result<ExitCode> {
    let ExportOptions {
        reasoning, redact, ..
    } = options;
    use crate::headless::export::{self, ExportFormat};
    let format = match format {
        ExportArg::Md => ExportFormat::Markdown,
        ExportArg::Json => ExportFormat::Json,
    };
    if source_arg.contains("://") {
        let url = server_url(source_arg, None)?;
        return export_server(&url, session, format, options, auth);
    }
    let path = Path::new(source_arg);
    // `host:4096` is a server without its scheme, unless such a file exists.
    if !path.exists()
        && source_arg.contains(':')
        && crate::source::live::url::check_url(&format!("http://{source_arg}")).is_ok()
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
    if !redact {
        return write_stdout(&text);
    }
    let mut tally = crate::redact::Tally::new();
    let r = crate::redact::Redactor::shared();
    let text = match format {
        ExportFormat::Json => r.redact_json(&text, &mut tally),
        ExportFormat::Markdown => r.redact(&text, &mut tally),
    };
    say_redacted(&tally);
    write_stdout(&text)
}

/// How `ocview export` writes: reasoning included, how long a server's
/// sessions are waited for, and whether secrets are redacted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExportOptions {
    pub reasoning: bool,
    pub timeout: f64,
    pub redact: bool,
}

/// What was redacted, on standard error (the transcript is on standard
/// output), when anything was.
fn say_redacted(tally: &crate::redact::Tally) {
    if !tally.is_empty() {
        eprintln!("ocview: {}", crate::cli::archive_export::said(tally));
    }
}

/// `export URL`: once the server's sessions are idle, each written page
/// by page as the server gives them, never the whole session in memory.
pub(crate) fn export_server(
    url: &str,
    session: Option<&str>,
    format: crate::headless::export::ExportFormat,
    options: ExportOptions,
    auth: Option<Auth>,
) -> anyhow::Result<ExitCode> {
    let ExportOptions {
        reasoning,
        timeout,
        redact,
    } = options;
    use crate::headless::server_export::{self, ExportError};
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
    let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = if redact {
        let json = format == crate::headless::export::ExportFormat::Json;
        let mut out = crate::redact::writer::RedactingWriter::new(out, json);
        let written = rt.block_on(server_export::write(
            &client, &mut store, session, format, reasoning, &mut out,
        ));
        written.and_then(|()| {
            let (_, tally) = out.finish().map_err(ExportError::Write)?;
            say_redacted(&tally);
            Ok(())
        })
    } else {
        let mut out = out;
        rt.block_on(server_export::write(
            &client, &mut store, session, format, reasoning, &mut out,
        ))
    };
    rt.shutdown_background();
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ExportError::Write(e)) => write_failed(e),
        Err(ExportError::Other(e)) => Err(anyhow::anyhow!("{e}")),
    }
}

/// `ocview export SOURCE`, its auth flags resolved first.
pub(crate) fn run(
    source_arg: &str,
    session: Option<&str>,
    format: ExportArg,
    options: ExportOptions,
    auth: &crate::cli::AuthArgs,
) -> anyhow::Result<ExitCode> {
    let auth = crate::cli::io::resolve_auth(auth)?;
    export(source_arg, session, format, options, auth)
}
