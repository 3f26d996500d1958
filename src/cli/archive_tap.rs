//! The archive beside a command: searchable from a viewer, written with
//! what a live source or a recording brings, and a replayed file imported.

use std::path::Path;
use std::time::Duration;

use crate::app::App;
use crate::app::config::Config;
use crate::app::msg::AppMsg;
use crate::app::overlays::archive_search::Reply;
use crate::archive::{Origin, Setting};
use crate::cli::io::Setup;

/// The archive's size cap and age limit, from the config.
pub(crate) fn archive_limits(config: &Config) -> crate::archive::Limits {
    crate::archive::Limits::from_settings(config.archive_max_mb, config.archive_max_age_days)
}

/// The archive for a viewer: searchable (`F`), and for a live source
/// written with what it receives, from `live`.
pub(crate) fn connect_archive(app: &mut App, live: Option<Origin>, setting: &Setting) {
    if *setting == Setting::Off {
        return;
    }
    let setting = setting.clone();
    app.archive.setting = Some(setting.clone());
    // This machine's opencode database goes in too, in the background,
    // unless it alone is turned off.
    let db = app
        .config
        .archive_opencode_db
        .then(|| crate::source::opencode_db::DbEnv::from_process().database())
        .flatten();
    if let Some(db) = db {
        app.archive.opencode_db = Some(crate::archive::db_follow::spawn(
            setting.clone(),
            db,
            archive_limits(&app.config),
            say_archive(app),
        ));
    }
    if let Some(origin) = live {
        app.archive.tap = Some(crate::archive::writer::spawn_bounded(
            setting,
            origin,
            archive_limits(&app.config),
            say_archive(app),
        ));
    }
}

/// `ocview record` keeps what it records in the archive too (when on);
/// what goes wrong with it is said on stderr.
pub(crate) fn record_tap(
    server: Option<String>,
    setup: &Setup,
) -> Option<crate::archive::writer::Tap> {
    if setup.archive == Setting::Off {
        return None;
    }
    Some(crate::archive::writer::spawn_bounded(
        setup.archive.clone(),
        Origin {
            server,
            host: crate::archive::origin::hostname(),
            file: None,
        },
        archive_limits(&setup.config),
        Box::new(|line| eprintln!("ocview: {}", crate::model::wire::sanitize::line(&line))),
    ))
}

/// How the archive's threads reach the status line.
pub(crate) fn say_archive(app: &App) -> Box<dyn Fn(String) + Send> {
    let done = app.verbs.done_sender();
    Box::new(move |line| {
        let _ = done.send(AppMsg::Archive(Reply::Said(line)));
    })
}

/// A file the viewer replays goes into the archive, on a thread of its own.
pub(crate) fn archive_file(app: &App, path: &Path) {
    let Some(setting) = app.archive.setting.clone() else {
        return;
    };
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
pub(crate) fn import_replayed(
    engine: &mut dyn crate::archive::Engine,
    path: &Path,
    done: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
) -> Result<(), String> {
    use crate::archive::progress::{Pacer, status_line};
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
    let result = crate::archive::import::import_file_with(engine, path, &mut on).map(drop);
    if pacer.spoke() {
        let _ = done.send(AppMsg::Archive(Reply::Progress(None)));
    }
    result
}
