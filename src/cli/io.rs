//! What every command shares: its errors and exit codes (a usage
//! mistake exits 2, a closed pipe 141), reading its input and writing its
//! output.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use crate::app::config::Config;
use crate::archive::Setting;
use crate::source::live::Auth;
use crate::source::{self};

/// The exit code for a command's result, its error said on stderr.
pub(crate) fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
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
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A server URL checked before anything is sent; `from` names where it
/// came from when that was not the command line.
pub(crate) fn server_url(url: &str, from: Option<&str>) -> anyhow::Result<String> {
    crate::source::live::url::check_url(url).map_err(|e| {
        let from = from.map(|f| format!(" in {f}")).unwrap_or_default();
        Usage(format!("bad server URL{from}: {e}")).into()
    })
}

/// A recording to read, or why not, naming it: a missing or unreadable
/// file, a directory. `-` is standard input.
pub(crate) fn open_recording(path: &Path) -> anyhow::Result<Box<dyn BufRead + Send>> {
    let shown = || crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
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
pub(crate) fn no_events(path: &Path, stats: &source::IngestStats) -> anyhow::Error {
    let name = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        crate::model::wire::sanitize::line(&path.display().to_string()).into_owned()
    };
    if let Some(why) = stats.diagnosis() {
        let why = crate::model::wire::sanitize::line(&why).into_owned();
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
pub(crate) const CLOSED_PIPE: u8 = 141;

/// Write `text` to standard output; any failure is an error (a closed pipe
/// a quiet one).
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => write_failed(e),
    }
}

/// A transcript that could not be written: quiet for a closed pipe.
pub(crate) fn write_failed(e: std::io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(ExitCode::from(CLOSED_PIPE))
    } else {
        Err(anyhow::anyhow!("cannot write to standard output: {e}"))
    }
}

/// A read that failed part-way, naming what was read.
pub(crate) fn read_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    let name = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        crate::model::wire::sanitize::line(&path.display().to_string()).into_owned()
    };
    anyhow::anyhow!("cannot read {name}: {e}")
}

pub(crate) fn label_of(file: &Path) -> String {
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

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Basic auth from the flags and the environment; a mistake in them is a
/// usage error (exit 2).
pub(crate) fn resolve_auth(args: &crate::cli::AuthArgs) -> anyhow::Result<Option<Auth>> {
    args.resolve().map_err(|e| Usage(e).into())
}

/// What every command starts from: the config, with the flags applied,
/// and where the archive is (the flags, the environment, then the config).
pub struct Setup {
    pub config: Config,
    pub archive: Setting,
}
