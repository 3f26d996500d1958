//! The archive's list on PostgreSQL, heard of through LISTEN/NOTIFY: the
//! listener comes back when PostgreSQL restarts and the list catches up,
//! once, on what was written while nobody listened; an open archived
//! session is not sent whole again on each NOTIFY for it, only what is new.

use crate::support;
use crate::support::postgres as postgres_support;

use std::time::{Duration, Instant};

use ocview::archive::Setting;
use ocview::archive::list_reader::{self, origin_key};
use ocview::archive::postgres::PgArchive;
use ocview::model::store::fleet;
use ocview::source::live::LiveCommand;
use ocview::source::msg::SourceMsg;
use support::archived::{T, archive_session, archive_teammates_session, session_lines, teammate};
use tokio::sync::mpsc::Receiver;

/// What the reader sends until `done` says enough (at most `limit`).
fn receive_until(
    rx: &mut Receiver<SourceMsg>,
    limit: Duration,
    mut done: impl FnMut(&[SourceMsg]) -> bool,
) -> Vec<SourceMsg> {
    let start = Instant::now();
    let mut got = Vec::new();
    while !done(&got) {
        assert!(
            start.elapsed() < limit,
            "the archive's list reader sent only {} messages in {limit:?}: {got:?}",
            got.len()
        );
        match rx.try_recv() {
            Ok(msg) => got.push(msg),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    got
}

/// Everything the reader sends within `quiet`.
fn receive_for(rx: &mut Receiver<SourceMsg>, quiet: Duration) -> Vec<SourceMsg> {
    let start = Instant::now();
    let mut got = Vec::new();
    while start.elapsed() < quiet {
        match rx.try_recv() {
            Ok(msg) => got.push(msg),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    got
}

fn says(msgs: &[SourceMsg], text: &str) -> bool {
    msgs.iter().any(|m| format!("{m:?}").contains(text))
}

/// Messages that list a session (a `session.updated`).
fn sessions(msgs: &[SourceMsg]) -> usize {
    use ocview::model::Event;
    use ocview::source::decode::record::Decoded;
    msgs.iter()
        .filter(|m| matches!(m, SourceMsg::Record(r)
            if matches!(&r.item, Ok(Decoded::Event(env)) if matches!(env.event, Event::SessionUpdated(_)))))
        .count()
}

/// Whether a connection of `user` LISTENs on the archive's channel.
fn listening(url: &str, user: &str) -> bool {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let Ok((client, connection)) = tokio_postgres::connect(url, tokio_postgres::NoTls).await
        else {
            return false;
        };
        let driver = tokio::spawn(connection);
        let rows = client
            .query(
                "SELECT 1 FROM pg_stat_activity WHERE usename = $1 AND query ILIKE 'LISTEN%'",
                &[&user],
            )
            .await
            .unwrap();
        driver.abort();
        !rows.is_empty()
    })
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A role that lists (and may be kept from logging in).
fn lister(pg: &postgres_support::Postgres) -> String {
    pg.sql("team", "CREATE ROLE lister LOGIN");
    pg.sql(
        "team",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO lister",
    );
    pg.url("team", "lister")
}

/// PostgreSQL restarts while the reader's role may not log in (so its
/// listener cannot come back at once): a teammate's session written then
/// is announced to no one. Once it may, the listener comes back, the list
/// catches up on it (its old connection broke: a new one), once; and a
/// session written afterwards appears through NOTIFY again.
#[test]
fn the_listener_comes_back_after_postgresql_restarts_and_nothing_is_missed() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("team");
    let mut writer = PgArchive::open(&url).unwrap();
    archive_session(
        &mut writer,
        teammate(),
        &session_lines("ses_before", "Before the restart", "/p", "one", 90),
    );
    drop(writer);
    let reader_url = lister(&pg);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let _handle = list_reader::spawn(Setting::Postgres(reader_url), None, tx);
    receive_until(&mut rx, Duration::from_secs(20), |m| {
        says(m, "Before the restart")
    });
    wait_until("the reader listens", Duration::from_secs(10), || {
        listening(&url, "lister")
    });

    pg.sql("team", "ALTER ROLE lister NOLOGIN");
    pg.kill();
    std::thread::sleep(Duration::from_millis(1500));
    pg.start_again().unwrap();
    let mut writer = PgArchive::open(&url).unwrap();
    archive_session(
        &mut writer,
        teammate(),
        &session_lines(
            "ses_missed",
            "Written while nobody listened",
            "/p",
            "two",
            60,
        ),
    );
    assert!(
        !listening(&url, "lister"),
        "the listener came back too soon"
    );
    pg.sql("team", "ALTER ROLE lister LOGIN");
    let back = Instant::now();
    let caught_up = receive_until(&mut rx, Duration::from_secs(10), |m| {
        says(m, "Written while nobody listened")
    });
    println!(
        "the session written while nobody listened: in the list {:?} after the reader may log in again",
        back.elapsed()
    );
    // Once: the session listed before is not sent again.
    let mut caught_up = caught_up;
    caught_up.extend(receive_for(&mut rx, Duration::from_millis(1500)));
    assert_eq!(sessions(&caught_up), 1, "{caught_up:?}");

    wait_until("the reader listens again", Duration::from_secs(5), || {
        listening(&url, "lister")
    });
    let written = Instant::now();
    archive_session(
        &mut writer,
        teammate(),
        &session_lines("ses_after", "Written after the restart", "/p", "three", 30),
    );
    receive_until(&mut rx, Duration::from_secs(10), |m| {
        says(m, "Written after the restart")
    });
    println!(
        "a session written after the restart: in the list {:?} after its write",
        written.elapsed()
    );
}

/// An open archived session: a NOTIFY for it that changes nothing sends
/// nothing; a new part sends that part, not the session again.
#[test]
fn an_open_session_is_not_sent_whole_again_on_each_notify() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("team");
    let mut writer = PgArchive::open(&url).unwrap();
    archive_teammates_session(&mut writer, 30);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let handle = list_reader::spawn(Setting::Postgres(url.clone()), None, tx);
    receive_until(&mut rx, Duration::from_secs(20), |m| {
        says(m, "Teammate fixes billing")
    });
    wait_until("the reader listens", Duration::from_secs(10), || {
        listening(&url, "postgres")
    });
    let team = origin_key(Some("ana-laptop"), Some("http://10.0.0.7:4096"), None);
    assert!(handle.send(LiveCommand::Open(fleet::scoped("ses_team1", &team))));
    let opened = receive_until(&mut rx, Duration::from_secs(10), |m| {
        m.iter()
            .any(|m| matches!(m, SourceMsg::Messages { complete: true, .. }))
    });
    assert!(says(&opened, "The invoice rounding is fixed"), "{opened:?}");

    // Five notifications of the session, nothing changed.
    let notify = r#"SELECT pg_notify('ocview_archive', '{"session":"ses_team1"}')"#;
    pg.sql("team", &[notify; 5].join("; "));
    let unchanged = receive_for(&mut rx, Duration::from_millis(1500));
    assert!(unchanged.is_empty(), "{unchanged:?}");

    // A new part: that part.
    let t = T - 20_000;
    archive_session(
        &mut writer,
        teammate(),
        &format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_second","messageID":"msg_ses_team1","sessionID":"ses_team1","type":"text","text":"A second thought","time":{{"start":{t}}}}}}}}}
"#
        ),
    );
    let mut new = receive_until(&mut rx, Duration::from_secs(10), |m| {
        says(m, "A second thought")
    });
    new.extend(receive_for(&mut rx, Duration::from_millis(500)));
    assert!(!says(&new, "The invoice rounding is fixed"), "{new:?}");
    assert!(
        !new.iter().any(|m| matches!(m, SourceMsg::Messages { .. })),
        "{new:?}"
    );
}
