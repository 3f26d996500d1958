//! Starting the viewer (or a headless recording) on a fleet of servers.

use std::collections::HashSet;
use std::path::Path;

use tokio::sync::mpsc;

use crate::app::App;
use crate::app::launch::{Outcome, RECORD_REACH, reach, start_recording_of, tui};
use crate::source::live::fleet::{self, FleetServer};
use crate::source::live::fleet_watch::{self, Watch};
use crate::source::msg::SourceState;

/// Watch `servers` in the viewer until the user quits; with `watch`, servers
/// found later join and vanished ones are marked gone (`pinned` URLs never
/// are).
pub async fn fleet_tui(
    mut app: App,
    servers: Vec<FleetServer>,
    read_only: bool,
    record: Option<&Path>,
    watch: Option<(Watch, HashSet<String>)>,
) -> anyhow::Result<Outcome> {
    let (tx, rx) = mpsc::channel(8192);
    let raw = match record {
        Some(path) => {
            let urls: Vec<&str> = servers.iter().map(|s| s.client.base()).collect();
            let recording = start_recording_of(&urls.join(" "), path, None)?;
            Some(recording.feed_while_viewing(&mut app, &tx))
        }
        None => None,
    };
    let members: Vec<(String, String)> = servers
        .iter()
        .map(|s| (s.client.base().to_string(), s.key.clone()))
        .collect();
    app.message_totals = crate::app::launch::message_totals::for_fleet(&members, tx.clone());
    let tx_history = tx.clone();
    let handle = fleet::spawn(servers, tx, read_only, raw);
    let named = watch.is_none();
    if let Some((watch, pinned)) = watch {
        fleet_watch::spawn(watch, members.clone(), pinned, handle.control.clone());
    }
    // Each server's state is on its heading; the source as a whole is live.
    app.source.state = SourceState::Live;
    // Every session in opencode's database and in the archive, beside
    // the servers'.
    // Servers named (`attach URL URL…`): their archived sessions alone.
    let scope = named.then(|| {
        let urls: Vec<&str> = members.iter().map(|(url, _)| url.as_str()).collect();
        crate::archive::list_reader::Scope::of(&urls)
    });
    let archive = crate::app::launch::archive_list::spawn(&mut app, scope, tx_history.clone());
    let history = crate::app::launch::history::spawn(tx_history);
    app.live = Some(if history.is_none() && archive.is_none() {
        handle.commands
    } else {
        crate::app::launch::archive_list::route(Some(handle.commands), history, archive)
    });
    app.replies = handle.replies;
    let outcome = tui(app, rx).await;
    drop(handle.control);
    outcome
}

/// `ocview record URL URL… FILE`: one recording of several servers, each
/// line naming its server, until a signal. Servers that do not answer at
/// the start are said and left out; none answering is an error.
pub async fn record_fleet(
    servers: Vec<FleetServer>,
    path: &Path,
    archive: Option<crate::archive::writer::Tap>,
) -> anyhow::Result<u64> {
    let checks = servers.iter().map(|s| async move {
        match tokio::time::timeout(RECORD_REACH, reach(&s.client)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("{e}")),
            Err(_) => Err(format!(
                "no answer from {} within {} s",
                s.client.base(),
                RECORD_REACH.as_secs()
            )),
        }
    });
    let answers = futures_util::future::join_all(checks).await;
    let mut reached = Vec::new();
    for (server, answer) in servers.into_iter().zip(answers) {
        match answer {
            Ok(()) => reached.push(server),
            Err(e) => eprintln!("ocview: left out {}: {e}", server.key),
        }
    }
    if reached.is_empty() {
        anyhow::bail!("no server answered");
    }
    let urls: Vec<&str> = reached.iter().map(|s| s.client.base()).collect();
    let mut recording = start_recording_of(&urls.join(" "), path, None)?;
    let (tx, mut rx) = mpsc::channel(8192);
    for server in &mut reached {
        // Every session's messages, as a fresh attach that opens them shows.
        server.options.load_all_messages = true;
    }
    let _handle = fleet::spawn(reached, tx, true, Some(recording.feed.clone()));
    let stop = crate::app::terminal::termination_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            why = &mut recording.failed => match why {
                Ok(why) => anyhow::bail!("recording stopped: {why}"),
                Err(_) => break,
            },
            msg = rx.recv() => match msg {
                None => break,
                Some(msg) => if let Some(tap) = &archive { tap.source_msg(&msg) },
            },
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // The archive's last batch is written (waiting a few seconds at most).
    tokio::task::block_in_place(|| drop(archive));
    if let Ok(why) = recording.failed.try_recv() {
        anyhow::bail!("recording stopped: {why}");
    }
    Ok(recording.written.load(std::sync::atomic::Ordering::SeqCst))
}
