//! The archive, one suite run against both engines: SQLite in a temporary
//! directory and a real PostgreSQL started here (tests/support/postgres.rs).
//! Import of every fixture format, duplicates, search with each filter,
//! replay of an archived session to the original's state, the newer-schema
//! and read-only cases. What only the file engine has is in `archive_file`.

use crate::support::postgres as postgres_support;
use crate::support::two_sessions;

use std::path::{Path, PathBuf};
use two_sessions::TWO_SESSIONS;

use ocview::archive::collect::Collector;
use ocview::archive::{Engine, Origin, Query, Setting, Trouble};
use ocview::model::{NoObserver, Store};
use ocview::source::{self, ReplayReader};

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every file of every form the viewer reads.
pub(crate) fn every_fixture_file() -> Vec<PathBuf> {
    let mut files = vec![
        fixtures().join("durable-stream.jsonl"),
        fixtures().join("opencode-export.json"),
        fixtures().join("opencode-run.ndjson"),
    ];
    let scenarios = fixtures().join("opencode-1.18.33");
    let mut dirs: Vec<_> = std::fs::read_dir(&scenarios)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        for name in [
            "event.jsonl",
            "event.sse",
            "global-event.jsonl",
            "export.json",
            "messages.json",
            "run.ndjson",
        ] {
            let f = dir.join(name);
            if f.exists() {
                files.push(f);
            }
        }
    }
    files
}

fn store_of(text: &[u8]) -> Store {
    let mut store = Store::new();
    source::ingest(
        &mut ReplayReader::new(std::io::Cursor::new(text.to_vec())),
        &mut store,
        &mut NoObserver,
    )
    .unwrap();
    store
}

fn store_of_file(path: &Path) -> Store {
    store_of(&std::fs::read(path).unwrap())
}

/// What a session shows, in a form two stores can be compared by.
fn fingerprint(store: &Store, id: &str) -> String {
    let s = store
        .session(id)
        .unwrap_or_else(|| panic!("no session {id}"));
    let mut out = format!(
        "{} {:?} parent {:?}\n",
        s.info.id, s.info.title, s.info.parent_id
    );
    for m in &s.messages {
        out.push_str(&format!(
            "  {} {} {:?} {:?}\n",
            m.info.id,
            m.info.role.label(),
            m.info.model,
            m.info.error.as_ref().map(|e| e.summary())
        ));
        for p in &m.parts {
            // A streamed todo list's part is named by its arrival count,
            // which heartbeats (not archived) moved on.
            let id = match p.id.split_once("~todo") {
                Some((after, _)) => format!("{after}~todo"),
                None => p.id.clone(),
            };
            out.push_str(&format!("    {id} {:?}\n", p.body));
        }
    }
    out
}

fn lines(events: &[String]) -> Vec<u8> {
    let mut text = Vec::new();
    for e in events {
        text.extend_from_slice(e.as_bytes());
        text.push(b'\n');
    }
    text
}

pub(crate) fn import(engine: &mut dyn Engine, path: &Path) -> ocview::archive::import::Imported {
    ocview::archive::import::import_file(engine, path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Opens a fresh, empty archive of one engine each time it is called.
pub(crate) trait Fresh {
    fn fresh(&mut self) -> Setting;
    /// Make the archive look written by a newer ocview.
    fn make_newer(&mut self, setting: &Setting);
    /// The same archive as a user who may only read (PostgreSQL only).
    fn reader(&mut self, setting: &Setting) -> Option<Setting>;
}

/// What a newer ocview's refinery recorded: a version this one lacks.
const NEWER: &str = "INSERT INTO ocview_schema_history (version, name, applied_on, checksum)
     VALUES (99, 'from_the_future', '2030-01-01T00:00:00Z', '1')";

struct Files(tempfile::TempDir, u32);

impl Fresh for Files {
    fn fresh(&mut self) -> Setting {
        self.1 += 1;
        Setting::Sqlite(self.0.path().join(format!("a{}/archive.db", self.1)))
    }
    fn make_newer(&mut self, setting: &Setting) {
        let Setting::Sqlite(path) = setting else {
            unreachable!()
        };
        let c = rusqlite::Connection::open(path).unwrap();
        c.execute_batch(NEWER).unwrap();
    }
    fn reader(&mut self, _: &Setting) -> Option<Setting> {
        None
    }
}

struct Server(postgres_support::Postgres, u32);

impl Fresh for Server {
    fn fresh(&mut self) -> Setting {
        self.1 += 1;
        Setting::Postgres(self.0.database(&format!("a{}", self.1)))
    }
    fn make_newer(&mut self, setting: &Setting) {
        let db = db_of(setting);
        self.0.sql(&db, NEWER);
    }
    fn reader(&mut self, setting: &Setting) -> Option<Setting> {
        let db = db_of(setting);
        self.0.sql(
            "postgres",
            "DO $$ BEGIN CREATE ROLE reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        );
        self.0
            .sql(&db, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader");
        Some(Setting::Postgres(self.0.url(&db, "reader")))
    }
}

fn db_of(setting: &Setting) -> String {
    let Setting::Postgres(url) = setting else {
        unreachable!()
    };
    let path = url.rsplit('/').next().unwrap();
    path.split('?').next().unwrap().to_string()
}

pub(crate) fn open(setting: &Setting) -> Box<dyn Engine> {
    setting
        .open()
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("on")
}

/// The whole suite, for one engine.
fn suite(engines: &mut dyn Fresh) {
    every_format_imports_and_twice_adds_nothing(engines);
    archived_sessions_replay_to_the_original_state(engines);
    search_finds_by_every_filter(engines);
    a_newer_archive_opens_read_only(engines);
    a_reader_searches_but_never_writes(engines);
    words_with_an_apostrophe_are_found_as_typed(engines);
    phrases_and_starred_words_are_found(engines);
    crate::archive_limits::the_age_limit_prunes_old_sessions_whole(engines);
    crate::archive_limits::the_size_cap_prunes_the_oldest_sessions(engines);
    an_export_imports_back_to_the_same_log(engines);
}

/// Events of a session the store never makes (deltas alone): logged,
/// with no row of their own.
const UNLISTED_SESSION: &str = r#"{"type":"message.part.delta","properties":{"sessionID":"ses_unlisted","messageID":"msg_u","partID":"prt_u","field":"text","delta":"lone"}}
{"type":"message.part.delta","properties":{"sessionID":"ses_unlisted","messageID":"msg_u","partID":"prt_u","field":"text","delta":" words"}}
"#;

/// Every session the log holds, and its parts' ids.
fn everything(archive: &mut dyn Engine) -> Vec<String> {
    let mut ids: Vec<String> = archive
        .oldest_sessions(None, 10_000)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.extend(archive.unlisted_sessions().unwrap());
    ids
}

fn an_export_imports_back_to_the_same_log(engines: &mut dyn Fresh) {
    let mut archive = open(&engines.fresh());
    // Every fixture of every form (two forms of one scenario are one
    // session whose log holds both forms' events), and a session with
    // events but no row.
    for f in every_fixture_file() {
        import(&mut *archive, &f);
    }
    let dir = tempfile::tempdir().unwrap();
    let unlisted = dir.path().join("unlisted.jsonl");
    std::fs::write(&unlisted, UNLISTED_SESSION).unwrap();
    import(&mut *archive, &unlisted);
    assert_eq!(archive.unlisted_sessions().unwrap(), ["ses_unlisted"]);
    let file = dir.path().join("export.jsonl");
    let mut out = std::fs::File::create(&file).unwrap();
    let done = ocview::archive::export::export(&mut *archive, None, false, &mut out).unwrap();
    drop(out);
    let counts = archive.counts().unwrap();
    assert_eq!(
        (done.sessions, done.events),
        (counts.sessions + 1, counts.events)
    );
    // What replay reads: a record a line, every one of them (the
    // fixtures' damaged records were archived as received, and come back
    // as they went in; pretty-printed ones come back on one line).
    let text = std::fs::read(&file).unwrap();
    assert_eq!(
        text.iter().filter(|b| **b == b'\n').count() as u64,
        done.events
    );
    let mut back = open(&engines.fresh());
    let read = import(&mut *back, &file);
    assert_eq!(read.records, done.events);
    assert!(counts.sessions >= 9, "{counts:?}");
    // Exact: as many sessions, messages, parts and events.
    assert_eq!(back.counts().unwrap(), counts);
    assert_eq!(
        back.oldest_sessions(None, 10_000).unwrap(),
        archive.oldest_sessions(None, 10_000).unwrap()
    );
    let ids = everything(&mut *archive);
    assert_eq!(everything(&mut *back), ids);
    let part_ids = |a: &mut dyn Engine, id: &str| -> Vec<String> {
        a.snapshot(id)
            .unwrap()
            .iter()
            .map(|e| {
                let j: serde_json::Value = serde_json::from_str(e).unwrap();
                j["properties"]["part"]["id"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    };
    for id in &ids {
        // The same events; their order within a log can differ where one
        // session came from several recordings (the import orders them).
        // And each event's own "id" may be minted on import: compared
        // without it.
        let sorted = |v: Vec<String>| {
            let mut v: Vec<String> = v
                .iter()
                .map(|e| {
                    let mut j: serde_json::Value = serde_json::from_str(e).unwrap_or_default();
                    if let Some(o) = j.as_object_mut() {
                        o.remove("id");
                    }
                    j.to_string()
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(back.events(id).unwrap()),
            sorted(archive.events(id).unwrap()),
            "{id}"
        );
        // The same latest state: the session (title, times), each message
        // and part, by the same ids (a todo list's too).
        assert_eq!(
            part_ids(&mut *back, id),
            part_ids(&mut *archive, id),
            "{id}"
        );
        let values = |v: Vec<String>| -> Vec<serde_json::Value> {
            v.iter().map(|e| serde_json::from_str(e).unwrap()).collect()
        };
        assert_eq!(
            values(back.snapshot(id).unwrap()),
            values(archive.snapshot(id).unwrap()),
            "{id}"
        );
    }
    // One session alone.
    let (one, _) = archive.oldest_sessions(None, 1).unwrap().remove(0);
    let mut alone = Vec::new();
    let done =
        ocview::archive::export::export(&mut *archive, Some(&one), false, &mut alone).unwrap();
    assert_eq!(done.sessions, 1);
    assert_eq!(
        alone,
        lines(&ocview::archive::export::session_log(&mut *archive, &one).unwrap())
    );
}

fn every_format_imports_and_twice_adds_nothing(engines: &mut dyn Fresh) {
    let setting = engines.fresh();
    let mut archive = open(&setting);
    let files = every_fixture_file();
    assert!(files.len() >= 40, "{files:?}");
    for f in &files {
        let done = import(&mut *archive, f);
        assert!(
            done.sessions > 0,
            "{}: no session ({:?})",
            f.display(),
            done.form
        );
    }
    let counts = archive.counts().unwrap();
    assert!(
        counts.sessions >= 9 && counts.parts > 50 && counts.events > 100,
        "{counts:?}"
    );
    for f in &files {
        let again = import(&mut *archive, f);
        assert_eq!(again.written.events, 0, "{}: events doubled", f.display());
        assert_eq!(again.written.parts, 0, "{}: parts rewritten", f.display());
    }
    assert_eq!(
        archive.counts().unwrap(),
        counts,
        "a second import added rows"
    );
}

fn archived_sessions_replay_to_the_original_state(engines: &mut dyn Fresh) {
    let mut checked = 0;
    for f in every_fixture_file() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        // One form per scenario (the others hold the same sessions), plus
        // the forms that are not bus events.
        if !(name == "event.jsonl"
            || name == "run.ndjson"
            || !f.starts_with(fixtures().join("opencode-1.18.33")))
        {
            continue;
        }
        // Each file alone: two forms of one scenario are one session.
        let mut archive = open(&engines.fresh());
        import(&mut *archive, &f);
        let original = store_of_file(&f);
        for session in original.sessions() {
            let id = session.id();
            let want = fingerprint(&original, id);
            let replayed = store_of(&lines(&archive.events(id).unwrap()));
            assert_eq!(
                fingerprint(&replayed, id),
                want,
                "{}: replayed {id}",
                f.display()
            );
            let opened = store_of(&lines(&archive.snapshot(id).unwrap()));
            assert_eq!(
                fingerprint(&opened, id),
                want,
                "{}: opened {id}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} sessions checked");
}

pub(crate) fn write_two_sessions(archive: &mut dyn Engine) {
    // Each from its own server, as two attached servers would.
    for (server, id) in [
        ("http://alpha-box:4096", "ses_alpha"),
        ("http://beta-box:4096", "ses_beta"),
    ] {
        let mut collector = Collector::new(Origin {
            server: Some(server.into()),
            host: "testhost".into(),
            file: None,
        });
        let mut reader = ReplayReader::new(std::io::Cursor::new(TWO_SESSIONS.as_bytes()));
        while let Some(record) = reader.next_record().unwrap() {
            collector.record(record);
        }
        let mut batch = collector.take();
        batch.sessions.retain(|s| s.id == id);
        batch.messages.retain(|m| m.session_id == id);
        batch.parts.retain(|p| p.session_id == id);
        batch.events.retain(|e| e.session_id == id);
        archive.write(&batch).unwrap();
    }
}

/// "doesn't", "don't", "user's" are found as people type them (the
/// apostrophe was dropped: "doesnt" matched nothing, "dont" matched
/// `dont_inherit`), with a typographic apostrophe too.
fn words_with_an_apostrophe_are_found_as_typed(engines: &mut dyn Fresh) {
    let mut archive = open(&engines.fresh());
    let lines = r#"{"type":"session.updated","properties":{"info":{"id":"ses_words","title":"Words","directory":"/work/w","time":{"created":1700000000000,"updated":1700000000000}}}}
{"type":"message.updated","properties":{"info":{"id":"msg_w1","sessionID":"ses_words","role":"assistant","time":{"created":1700000000000}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_w1","messageID":"msg_w1","sessionID":"ses_words","type":"text","text":"It doesn't build and the user's config is gone"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_w2","messageID":"msg_w1","sessionID":"ses_words","type":"text","text":"compile(dont_inherit=True) and don't stop"}}}
"#;
    write_lines(&mut *archive, lines);
    let a = &mut *archive;
    assert_eq!(found(a, &Query::new("doesn't")), ["ses_words/prt_w1"]);
    assert_eq!(
        found(a, &Query::new("doesn\u{2019}t build")),
        ["ses_words/prt_w1"]
    );
    assert_eq!(found(a, &Query::new("user's")), ["ses_words/prt_w1"]);
    assert_eq!(found(a, &Query::new("don't")), ["ses_words/prt_w2"]);
    assert!(found(a, &Query::new("won't")).is_empty());
}

/// A quoted phrase finds its words next to each other, in order; `word*`
/// any word it starts, wherever it stands in the query (issue 39, point 3).
fn phrases_and_starred_words_are_found(engines: &mut dyn Fresh) {
    let mut archive = open(&engines.fresh());
    let lines = r#"{"type":"session.updated","properties":{"info":{"id":"ses_phr","title":"Phrases","directory":"/work/p","time":{"created":1700000000000,"updated":1700000000000}}}}
{"type":"message.updated","properties":{"info":{"id":"msg_p1","sessionID":"ses_phr","role":"assistant","time":{"created":1700000000000}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_p1","messageID":"msg_p1","sessionID":"ses_phr","type":"text","text":"Run cargo build --release, then serialize config.toml"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_p2","messageID":"msg_p1","sessionID":"ses_phr","type":"text","text":"build the cargo release notes"}}}
"#;
    write_lines(&mut *archive, lines);
    let a = &mut *archive;
    let mut both = found(a, &Query::new("cargo build"));
    both.sort();
    assert_eq!(both, ["ses_phr/prt_p1", "ses_phr/prt_p2"]);
    assert_eq!(found(a, &Query::new("\"cargo build\"")), ["ses_phr/prt_p1"]);
    assert_eq!(
        found(a, &Query::new("\"cargo build release\"")),
        ["ses_phr/prt_p1"]
    );
    assert!(found(a, &Query::new("\"build cargo\"")).is_empty());
    assert_eq!(
        found(a, &Query::new("serializ* config.toml")),
        ["ses_phr/prt_p1"]
    );
    assert!(found(a, &Query::new("serializ config.toml")).is_empty());
}

/// Bus events, a line each, collected and written as one batch.
fn write_lines(archive: &mut dyn Engine, lines: &str) {
    let mut collector = Collector::new(Origin::default());
    let mut reader = ReplayReader::new(std::io::Cursor::new(lines.as_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    archive.write(&collector.take()).unwrap();
}

pub(crate) fn found(archive: &mut dyn Engine, q: &Query) -> Vec<String> {
    archive
        .search(q)
        .unwrap_or_else(|e| panic!("{q:?}: {e}"))
        .into_iter()
        .map(|h| format!("{}/{}", h.session_id, h.part_id.unwrap_or_default()))
        .collect()
}

fn search_finds_by_every_filter(engines: &mut dyn Fresh) {
    let setting = engines.fresh();
    let mut archive = open(&setting);
    write_two_sessions(&mut *archive);
    let q = |f: &dyn Fn(&mut Query)| {
        let mut q = Query::new("invoice");
        f(&mut q);
        q
    };
    let a = &mut *archive;
    // Newest first: beta's parts are later than alpha's.
    assert_eq!(
        found(a, &q(&|_| {})),
        [
            "ses_beta/prt_b2",
            "ses_beta/prt_b1",
            "ses_alpha/prt_a2",
            "ses_alpha/prt_a1"
        ]
    );
    assert_eq!(
        found(a, &q(&|q| q.project = Some("alpha".into()))),
        ["ses_alpha/prt_a2", "ses_alpha/prt_a1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.server = Some("beta-box".into()))),
        ["ses_beta/prt_b2", "ses_beta/prt_b1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.since = Some(1_705_000_000_000))),
        ["ses_beta/prt_b2", "ses_beta/prt_b1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.until = Some(1_705_000_000_000))),
        ["ses_alpha/prt_a2", "ses_alpha/prt_a1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.model = Some("claude".into()))),
        ["ses_alpha/prt_a2", "ses_alpha/prt_a1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.agent = Some("plan".into()))),
        ["ses_beta/prt_b2", "ses_beta/prt_b1"]
    );
    assert_eq!(
        found(a, &q(&|q| q.tool = Some("bash".into()))),
        ["ses_alpha/prt_a2"]
    );
    assert_eq!(
        found(a, &q(&|q| q.state = Some("error".into()))),
        ["ses_beta/prt_b2"]
    );
    // Titles, tool inputs (paths) and errors; a prefix while typing.
    assert_eq!(
        found(a, &Query::new("billing")),
        ["ses_alpha/prt_a2", "ses_alpha/"]
    );
    assert_eq!(found(a, &Query::new("README.md")), ["ses_beta/prt_b2"]);
    let typing = Query {
        prefix: true,
        ..Query::new("templ")
    };
    assert_eq!(found(a, &typing), ["ses_beta/prt_b1"]);
    assert!(found(a, &Query::new("templ")).is_empty());
    // Snippets mark the word, and say where it was found.
    let hit = &a.search(&q(&|q| q.tool = Some("bash".into()))).unwrap()[0];
    assert!(hit.plain_snippet().contains("«invoice»"), "{hit:?}");
    assert_eq!(hit.title, "Billing fixes");
    assert_eq!(hit.project.as_deref(), Some("/work/alpha"));
    assert_eq!(hit.server.as_deref(), Some("http://alpha-box:4096"));
    assert_eq!(hit.host.as_deref(), Some("testhost"));
    // Query syntax is never the engine's.
    for nasty in ["\"", "*", "NEAR(", "a OR", "'", "\\", ":*", "&|!"] {
        a.search(&Query::new(nasty))
            .unwrap_or_else(|e| panic!("{nasty}: {e}"));
    }
}

fn a_newer_archive_opens_read_only(engines: &mut dyn Fresh) {
    let setting = engines.fresh();
    {
        let mut archive = open(&setting);
        write_two_sessions(&mut *archive);
    }
    engines.make_newer(&setting);
    let mut archive = open(&setting);
    let why = archive.read_only().expect("read-only").to_string();
    assert!(
        why.contains("newer ocview (schema 99") && !why.contains('\n'),
        "{why}"
    );
    assert_eq!(found(&mut *archive, &Query::new("billing")).len(), 2);
    let e = archive.write(&Default::default()).unwrap_err();
    assert_eq!(e.trouble, Trouble::ReadOnly, "{e}");
}

fn a_reader_searches_but_never_writes(engines: &mut dyn Fresh) {
    let setting = engines.fresh();
    {
        let mut archive = open(&setting);
        write_two_sessions(&mut *archive);
    }
    let Some(reader) = engines.reader(&setting) else {
        return;
    };
    let mut archive = open(&reader);
    let why = archive.read_only().expect("read-only").to_string();
    assert!(why.contains("reader may only read"), "{why}");
    assert_eq!(found(&mut *archive, &Query::new("docs")).len(), 2);
    let mut batch = ocview::archive::rows::Batch::default();
    batch.events.push(ocview::archive::rows::EventRow {
        key: "x".into(),
        session_id: "s".into(),
        time_ms: 0,
        json: "{}".into(),
    });
    let e = archive.write(&batch).unwrap_err();
    assert_eq!(e.trouble, Trouble::ReadOnly, "{e}");
    assert!(e.to_string().contains("not written"), "{e}");
}

#[test]
fn sqlite_engine_passes_the_suite() {
    suite(&mut Files(tempfile::tempdir().unwrap(), 0));
}

#[test]
fn postgres_engine_passes_the_suite() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    // The same archive as SQLite's: a team archive's redaction (and its
    // text deltas kept home) is tested apart (`archive_redact`).
    ocview::redact::set_policy(ocview::redact::Policy::Off);
    suite(&mut Server(pg, 0));
}
