//! `ocview record`: one server's or a fleet's events to a file.

use std::path::Path;
use std::process::ExitCode;

use crate::app::launch::{self};
use crate::cli::archive_tap::record_tap;
use crate::cli::fleet_members;
use crate::cli::io::server_url;
use crate::cli::io::{Setup, runtime};
use crate::source::live::{Auth, Client};

pub(crate) fn record(
    url: &str,
    file: &Path,
    all: bool,
    auth: Option<Auth>,
    setup: &Setup,
) -> anyhow::Result<ExitCode> {
    let url = server_url(url, None)?;
    let url = url.as_str();
    let tap = record_tap(Some(crate::archive::origin::origin_url(url)), setup);
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

/// `ocview record URL URL… FILE`.
pub(crate) fn record_fleet(
    urls: &[String],
    file: &Path,
    all: bool,
    auth: Option<Auth>,
    setup: &Setup,
) -> anyhow::Result<ExitCode> {
    let fleet = fleet_members::from_urls(urls, auth, all)?;
    // Each member's sessions are kept with its own server (its report).
    let tap = record_tap(None, setup);
    let rt = runtime()?;
    let n = rt.block_on(crate::app::launch::fleet::record_fleet(fleet, file, tap));
    rt.shutdown_background();
    eprintln!("ocview: recorded {} events to {}", n?, file.display());
    Ok(ExitCode::SUCCESS)
}

/// `ocview record URL… FILE`.
pub(crate) fn run(
    urls: &[String],
    file: &Path,
    all: bool,
    auth: &crate::cli::AuthArgs,
    setup: &Setup,
) -> anyhow::Result<ExitCode> {
    let auth = crate::cli::io::resolve_auth(auth)?;
    match urls {
        [url] => record(url, file, all, auth, setup),
        _ => record_fleet(urls, file, all, auth, setup),
    }
}
