//! `ocview archive fill URL`: a server's sessions archived whole, every
//! page of each as the server keeps it now, one page at a time (the
//! server answers one request at a time; a viewer's waits behind one page
//! at most), the writer never more than a few pages behind.

use std::process::ExitCode;

use crate::archive::{Origin, Setting};
use crate::cli::io::{Setup, runtime};
use crate::model::wire::sanitize;
use crate::source::live::archive_page;
use crate::source::live::client::{Auth, Client};

/// Pages waiting for the writer before the next is asked for.
const PAGES_AHEAD: usize = 2;

pub(crate) fn fill(
    url: &str,
    session: Option<&str>,
    auth: Option<Auth>,
    setup: &Setup,
) -> anyhow::Result<ExitCode> {
    if setup.archive == Setting::Off {
        anyhow::bail!(
            "the archive is off (--no-archive, archive = false in the config, or \
             OCVIEW_ARCHIVE=off): give one with --archive FILE|URL"
        );
    }
    let client = Client::new(url, auth);
    let rt = runtime()?;
    let snap = rt
        .block_on(crate::source::live::snapshot::load(&client, true))
        .map_err(|e| anyhow::anyhow!("{}: {e}", sanitize::line(url)))?;
    let tap = crate::archive::writer::spawn_bounded(
        setup.archive.clone(),
        Origin {
            server: Some(crate::archive::origin::origin_url(url)),
            host: crate::archive::origin::hostname(),
            file: None,
        },
        crate::cli::archive_tap::archive_limits(&setup.config),
        Box::new(|line| eprintln!("ocview: {}", sanitize::line(&line))),
    );
    // The sessions as the server lists them: titles, folders, statuses.
    for env in &snap.events {
        tap.event(env);
    }
    let mut ids: Vec<String> = match session {
        Some(id) => vec![id.to_string()],
        None => snap.session_ids.iter().cloned().collect(),
    };
    ids.sort();
    let mut code = ExitCode::SUCCESS;
    for id in &ids {
        let (kept, failed) = rt.block_on(fill_one(&client, &tap, id));
        let shown = sanitize::line(id);
        match failed {
            None => eprintln!("ocview: archived {shown} whole ({kept} messages)"),
            Some(why) => {
                code = ExitCode::FAILURE;
                eprintln!(
                    "ocview: {shown}: the server gave no more ({}); the archive keeps the {kept} \
                     messages it had",
                    sanitize::line(&why)
                );
            }
        }
    }
    tap.finish();
    Ok(code)
}

/// Every page of `session`, newest first, into the archive: the messages
/// given, and why the server stopped giving them (if it did).
async fn fill_one(
    client: &Client,
    tap: &crate::archive::writer::Tap,
    session: &str,
) -> (usize, Option<String>) {
    let (mut kept, mut cursor) = (0, None);
    loop {
        match archive_page::page(client, session, cursor.as_deref()).await {
            Ok((messages, next)) => {
                kept += messages.len();
                tap.loaded_page(messages);
                tokio::task::block_in_place(|| tap.wait_below(PAGES_AHEAD));
                match next {
                    Some(c) => cursor = Some(c),
                    None => return (kept, None),
                }
            }
            Err(why) => return (kept, Some(why)),
        }
    }
}
