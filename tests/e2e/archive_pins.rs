//! Pruning nobody is surprised by (#40): a pinned session survives a prune
//! down to 1 MB, and a dry run lists what the real run that follows takes,
//! on both engines; a team archive is pruned by its own policy, which a
//! user who may only read cannot set, never by a machine's config.

use crate::support::fresh_archive::{Files, Fresh, Server};
use crate::support::postgres as postgres_support;

use ocview::archive::import::import_file;
use ocview::archive::{Engine, Limits, Setting, prune};

const DAY: i64 = 24 * 3600 * 1000;
const NOW: i64 = 1_795_547_214_000;

/// Text that compresses as prose does, not as a repeated line.
fn words(seed: u64, bytes: usize) -> String {
    let mut x = seed | 1;
    let mut out = String::with_capacity(bytes);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 2 + (x % 8) as usize;
        for i in 0..len {
            out.push((b'a' + ((x >> (i * 5)) % 26) as u8) as char);
        }
        out.push(' ');
    }
    out
}

/// An archive of 24 sessions of about 120 KB each, one a day, oldest
/// first: `ses_pin00`…`ses_pin23`.
fn archive_of_sessions(setting: &Setting, dir: &std::path::Path) -> Box<dyn Engine> {
    let mut archive = setting.open().unwrap().unwrap();
    for path in recordings_of_sessions(dir) {
        import_file(&mut *archive, &path).unwrap();
    }
    archive
}

/// The recordings of `archive_of_sessions`' sessions, oldest first.
fn recordings_of_sessions(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for i in 0..24 {
        let id = format!("ses_pin{i:02}");
        let t = NOW - (30 - i) * DAY;
        let text = serde_json::to_string(&words(i as u64 + 7, 120_000)).unwrap();
        let rec = format!(
            r#"{{"type":"session.updated","properties":{{"info":{{"id":"{id}","title":"Session {i}","directory":"/work/a","time":{{"created":{t},"updated":{t}}}}}}}}}
{{"type":"message.updated","properties":{{"info":{{"id":"msg_{id}","sessionID":"{id}","role":"assistant","time":{{"created":{t}}}}}}}}}
{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{id}","messageID":"msg_{id}","sessionID":"{id}","type":"text","text":{text}}}}}}}
"#
        );
        let path = dir.join(format!("{id}.jsonl"));
        std::fs::write(&path, rec).unwrap();
        out.push(path);
    }
    out
}

/// `ocview archive import` keeps the archive within its size cap as it
/// goes: 24 sessions of about 120 KB into a 1 MB cap leave the newest,
/// the oldest pruned, said and on record.
#[test]
fn an_import_keeps_the_archive_within_its_cap_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("ocview")).unwrap();
    std::fs::write(
        config.join("ocview/config.toml"),
        "archive_max_mb = 1\narchive_max_age_days = 0\n",
    )
    .unwrap();
    let db = dir.path().join("a.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["archive", "import"])
        .args(recordings_of_sessions(dir.path()))
        .args(["--archive", &db.display().to_string()])
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("oldest sessions (size cap 1 MB)"), "{said}");
    let mut archive = Setting::Sqlite(db).open().unwrap().unwrap();
    let left = held(&mut *archive);
    assert!(
        left.len() < 24 && left.contains(&"ses_pin23".to_string()),
        "{left:?}"
    );
    assert!(!left.contains(&"ses_pin00".to_string()), "{left:?}");
    let log = std::fs::read_to_string(dir.path().join("state/ocview/prune.log")).unwrap();
    assert!(
        log.contains("ses_pin00") && log.contains("over the size cap"),
        "{log}"
    );
}

use crate::support::fresh_archive::session_ids as held;

fn pinned_sessions_survive(engines: &mut dyn Fresh, dir: &std::path::Path) {
    let setting = engines.fresh();
    let mut archive = archive_of_sessions(&setting, dir);
    assert!(
        archive.size().unwrap() > 2 << 20,
        "{}",
        archive.size().unwrap()
    );
    for id in ["ses_pin00", "ses_pin01"] {
        assert!(archive.set_pin(id, true, "box").unwrap());
    }
    assert!(
        !archive.set_pin("ses_pin00", true, "box").unwrap(),
        "pinned already"
    );
    assert_eq!(archive.pins().unwrap(), ["ses_pin00", "ses_pin01"]);
    let one_mb = Limits {
        max_bytes: Some(1 << 20),
        max_age_days: Some(20),
    };
    let before = archive.counts().unwrap();
    let size = archive.size().unwrap();
    let plan = prune::dry_run(&mut *archive, &one_mb, NOW).unwrap();
    // Nothing taken: every session and every byte is still there.
    assert_eq!(archive.counts().unwrap(), before);
    assert_eq!(archive.size().unwrap(), size);
    assert!(
        plan.by_age.len() >= 8 && !plan.by_size.is_empty(),
        "{plan:?}"
    );
    assert!(
        !plan
            .by_age
            .iter()
            .chain(&plan.by_size)
            .any(|id| id == "ses_pin00" || id == "ses_pin01")
    );
    let pruned = prune::prune(&mut *archive, &one_mb, NOW).unwrap();
    // The dry run is the run: the same sessions, for the same reasons, to
    // the same size.
    assert_eq!(
        (&pruned.by_age, &pruned.by_size, pruned.bytes_after),
        (&plan.by_age, &plan.by_size, plan.bytes_after),
        "the dry run is the run"
    );
    let left = held(&mut *archive);
    assert!(left.contains(&"ses_pin00".to_string()) && left.contains(&"ses_pin01".to_string()));
    assert!(left.len() < 24, "{left:?}");
    // Unpinned, it goes with the next prune.
    assert!(archive.set_pin("ses_pin00", false, "box").unwrap());
    prune::prune(&mut *archive, &one_mb, NOW).unwrap();
    assert!(!held(&mut *archive).contains(&"ses_pin00".to_string()));
}

#[test]
fn sqlite_pinned_sessions_survive_a_prune_down_to_1_mb() {
    let dir = tempfile::tempdir().unwrap();
    pinned_sessions_survive(&mut Files(tempfile::tempdir().unwrap(), 0), dir.path());
}

#[test]
fn postgres_pinned_sessions_survive_a_prune_down_to_1_mb() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    pinned_sessions_survive(&mut Server(pg, 0), dir.path());
}

#[test]
fn a_team_archive_is_pruned_by_its_policy_alone() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = pg.database("team_policy");
    let mut archive = archive_of_sessions(&Setting::Postgres(url.clone()), dir.path());
    let mine = Limits {
        max_bytes: Some(1 << 20),
        max_age_days: Some(1),
    };
    // No policy yet: a machine's config prunes nothing of it.
    let limits = prune::limits_for(&mut *archive, &mine).unwrap();
    assert_eq!(limits, Limits::NONE);
    assert_eq!(
        prune::prune(&mut *archive, &limits, NOW)
            .unwrap()
            .by_age
            .len(),
        0
    );

    // Someone who may only read cannot set one.
    pg.sql(
        "team_policy",
        "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;",
    );
    let mut reader = Setting::Postgres(pg.url("team_policy", "reader"))
        .open()
        .unwrap()
        .unwrap();
    let e = reader.set_policy(&mine, "reader@box").unwrap_err();
    assert!(e.to_string().contains("only who may write"), "{e}");

    // The owner sets it; every writer prunes to it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args([
            "archive",
            "policy",
            "--max-age-days",
            "10",
            "--archive",
            &url,
        ])
        .env_remove("OCVIEW_ARCHIVE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("age limit 10 days") && !said.contains("size cap"),
        "{said}"
    );
    let limits = prune::limits_for(&mut *archive, &Limits::NONE).unwrap();
    assert_eq!(limits.max_age_days, Some(10));
    let pruned = prune::prune(&mut *archive, &limits, NOW).unwrap();
    // 24 sessions a day apart, the newest 7 days old: 20 are older than 10.
    assert_eq!(pruned.by_age.len(), 20, "{pruned:?}");
    // A file's limits stay its machine's.
    let file = Setting::Sqlite(dir.path().join("local.db"));
    let mut local = file.open().unwrap().unwrap();
    assert_eq!(prune::limits_for(&mut *local, &mine).unwrap(), mine);
    assert!(local.set_policy(&mine, "me").is_err());
}

/// `M` on a session in the list pins it in the archive, and `M` again
/// unpins it; the writer says which.
#[test]
fn m_in_the_list_pins_the_session_and_again_unpins_it() {
    use ocview::app::msg::AppMsg;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.db");
    let mut app = crate::common::app_with(&crate::common::fixture(
        "a_bash_permission_once",
        "event.jsonl",
    ));
    let mut done = app.verbs.take_done();
    let tell = app.verbs.done_sender();
    app.archive.tap = Some(ocview::archive::writer::spawn(
        Setting::Sqlite(path.clone()),
        ocview::archive::Origin {
            server: None,
            host: "here".into(),
            file: None,
        },
        Box::new(move |line| {
            let _ = tell.send(AppMsg::Archive(
                ocview::app::overlays::archive_search::Reply::Said(line),
            ));
        }),
    ));
    let id = app.store.sessions()[0].info.id.clone();
    app.selected = Some(id.clone());
    let mut said_after = |app: &mut ocview::app::App, keys: &[&str]| -> String {
        crate::common::press(app, keys);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            while let Ok(d) = done.try_recv() {
                app.on_done(d);
            }
            if let Some(n) = app.notice.clone().filter(|n| n.contains("pinned")) {
                app.notice = None;
                return n;
            }
            assert!(std::time::Instant::now() < deadline, "nothing said");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let title = app.store.sessions()[0].title().to_string();
    let row = |app: &mut ocview::app::App| -> String {
        let s = crate::common::screen(app, 120, 24);
        // The list's row: left of the pane's border.
        s.lines()
            .filter_map(|l| l.split('│').next())
            .find(|l| l.contains(&title))
            .unwrap_or_else(|| panic!("{s}"))
            .to_string()
    };
    assert!(!row(&mut app).contains('⚑'));
    let said = said_after(&mut app, &["M"]);
    assert!(said.contains(" pinned: a prune never takes it"), "{said}");
    // Marked in the list as soon as it is said.
    assert!(row(&mut app).contains('⚑'), "{}", row(&mut app));
    let pins = |path: &std::path::Path| -> Vec<String> {
        let c = rusqlite::Connection::open(path).unwrap();
        let mut st = c.prepare("SELECT session_id FROM pins").unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(pins(&path), std::slice::from_ref(&id));
    let said = said_after(&mut app, &["M"]);
    assert!(said.contains(" unpinned"), "{said}");
    assert!(pins(&path).is_empty());
    assert!(!row(&mut app).contains('⚑'), "{}", row(&mut app));
}

/// A pin made elsewhere (`ocview archive pin`, a teammate) reaches every
/// running viewer's list through the archive's reader: SQLite by its
/// change mark, PostgreSQL by its NOTIFY.
fn a_pin_made_elsewhere_is_marked(setting: Setting, dir: &std::path::Path) {
    use ocview::source::msg::SourceMsg;
    let mut archive = archive_of_sessions(&setting, dir);
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let _reader = ocview::archive::list_reader::spawn(setting, None, tx);
    let pins_heard = |rx: &mut tokio::sync::mpsc::Receiver<SourceMsg>, want: &[&str]| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        loop {
            match rx.try_recv() {
                Ok(SourceMsg::ArchivePins(ids)) if ids == want => return ids,
                Ok(_) => {}
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no pins {want:?} heard"
            );
        }
    };
    // The first listing says none: nothing to send.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(archive.set_pin("ses_pin03", true, "elsewhere").unwrap());
    let ids = pins_heard(&mut rx, &["ses_pin03"]);
    let mut app = crate::common::app_with(&[]);
    app.on_source(SourceMsg::ArchivePins(ids));
    assert!(app.archive.pinned("ses_pin03@archive:elsewhere"));
    assert!(!app.archive.pinned("ses_pin04"));
    assert!(archive.set_pin("ses_pin03", false, "elsewhere").unwrap());
    pins_heard(&mut rx, &[]);
}

#[test]
fn sqlite_a_pin_made_elsewhere_is_marked_in_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    a_pin_made_elsewhere_is_marked(Setting::Sqlite(db), dir.path());
}

#[test]
fn postgres_a_pin_made_elsewhere_is_marked_in_the_list() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    a_pin_made_elsewhere_is_marked(Setting::Postgres(pg.database("pins_heard")), dir.path());
}
