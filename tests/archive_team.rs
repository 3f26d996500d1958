//! The team's archive: several writers on one PostgreSQL, bulk loads, and
//! the local spool that keeps what comes while the server is away.

#[path = "support/postgres.rs"]
mod postgres_support;

use std::time::Instant;

use ocview::archive::Setting;
use ocview::archive::rows::{Batch, EventRow, Origin, PartRow, SessionRow};

fn start_pg() -> Option<postgres_support::Postgres> {
    match postgres_support::Postgres::start() {
        Ok(pg) => Some(pg),
        Err(why) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED: no PostgreSQL here: {why}");
            None
        }
        Err(why) => panic!("PostgreSQL is needed in CI: {why}"),
    }
}

/// A batch of `n` events and `n` parts of session `sid`, numbered from `from`.
fn synthetic(host: &str, sid: &str, from: usize, n: usize) -> Batch {
    let mut b = Batch {
        origin: Origin {
            server: None,
            host: host.into(),
            file: None,
        },
        ..Default::default()
    };
    b.sessions.push(SessionRow {
        id: sid.into(),
        parent_id: None,
        title: format!("synthetic {sid}"),
        directory: Some("/p".into()),
        created: 1,
        updated: (from + n) as i64,
        raw: format!(r#"{{"id":"{sid}"}}"#),
    });
    for i in from..from + n {
        b.events.push(EventRow {
            key: format!("{sid}:e{i}"),
            session_id: sid.into(),
            time_ms: i as i64,
            json: format!(r#"{{"type":"x","n":{i}}}"#),
        });
        b.parts.push(PartRow {
            id: format!("{sid}:p{i}"),
            message_id: format!("{sid}:m{}", i / 10),
            session_id: sid.into(),
            kind: "text".into(),
            tool: None,
            state: None,
            model: None,
            agent: None,
            time: i as i64,
            updated: i as i64,
            text: format!("part {i} of the invoice ledger in {sid}"),
            raw: format!(r#"{{"id":"{sid}:p{i}","type":"text"}}"#),
        });
    }
    b
}

/// Rows (events + parts) a second into one PostgreSQL, in the writer's
/// batches; printed, never asserted.
#[test]
fn bulk_write_rate() {
    let Some(pg) = start_pg() else { return };
    let url = pg.database("rate");
    let mut archive = Setting::Postgres(url).open().unwrap().unwrap();
    let per_batch = 1000;
    let batches: usize = std::env::var("OCVIEW_RATE_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let started = Instant::now();
    for i in 0..batches {
        archive
            .write(&synthetic(
                "h",
                &format!("ses_{}", i % 4),
                i * per_batch,
                per_batch,
            ))
            .unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let rows = (batches * per_batch * 2) as f64;
    eprintln!(
        "PostgreSQL bulk write: {rows} rows in {secs:.2} s = {:.0} rows/s",
        rows / secs
    );
    let counts = archive.counts().unwrap();
    assert_eq!(counts.parts as usize, batches * per_batch);
    assert_eq!(counts.events as usize, batches * per_batch);
}
