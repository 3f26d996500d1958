//! A PostgreSQL archive made by an ocview of schema 5 (its migrations run
//! by hand, its rows written as that ocview wrote them: a `search` table
//! holding each document's text) upgrades to the index without text, kept
//! in the parts' and sessions' rows, and finds the same hits, with the same
//! highlighted snippets, as an archive made new; a reader granted rights
//! before the upgrade searches before and after it.

use crate::support::postgres as postgres_support;
use crate::support::two_sessions;

use ocview::archive::collect::Collector;
use ocview::archive::query::indexable;
use ocview::archive::rows::Batch;
use ocview::archive::{Engine, Origin, Query, Setting, schema};
use ocview::source::ReplayReader;
use two_sessions::TWO_SESSIONS;

fn batch() -> Batch {
    let mut collector = Collector::new(Origin {
        server: Some("http://alpha-box:4096".into()),
        host: "testhost".into(),
        file: None,
    });
    let mut reader = ReplayReader::new(std::io::Cursor::new(TWO_SESSIONS.as_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take()
}

/// The archive as an ocview of schema 5 left it: its migrations, then the
/// batch's rows as its write made them (the index's `body` the text, its
/// `tsv` generated from it).
async fn write_schema_5(url: &str, batch: &Batch) {
    let (c, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    c.batch_execute("CREATE TABLE ocview_schema (version BIGINT NOT NULL)")
        .await
        .unwrap();
    for (v, _, sql) in ocview::archive::postgres::schema::MIGRATIONS
        .iter()
        .filter(|(v, _, _)| *v <= 5)
    {
        c.batch_execute(sql).await.unwrap();
        c.execute("INSERT INTO ocview_schema (version) VALUES ($1)", &[v])
            .await
            .unwrap();
    }
    let o = &batch.origin;
    for s in &batch.sessions {
        c.execute(
            "INSERT INTO sessions (id, parent_id, title, directory, server, host, file, created, updated, raw)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[&s.id, &s.parent_id, &s.title, &s.directory, &o.server, &o.host, &o.file,
              &s.created, &s.updated, &s.raw],
        )
        .await
        .unwrap();
        c.execute(
            "INSERT INTO search (doc, session_id, message_id, part_id, kind, time, tool, state, model, agent, body)
             VALUES ('t:' || $1, $1, NULL, NULL, 'title', $2, NULL, NULL, NULL, NULL, $3)",
            &[&s.id, &s.updated, &indexable(&s.title).into_owned()],
        )
        .await
        .unwrap();
    }
    for m in &batch.messages {
        c.execute(
            "INSERT INTO messages (id, session_id, role, model, agent, created, updated, raw)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &m.id,
                &m.session_id,
                &m.role,
                &m.model,
                &m.agent,
                &m.created,
                &m.updated,
                &m.raw,
            ],
        )
        .await
        .unwrap();
    }
    for p in &batch.parts {
        c.execute(
            "INSERT INTO parts (id, message_id, session_id, kind, tool, state, time, updated, raw)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &p.id,
                &p.message_id,
                &p.session_id,
                &p.kind,
                &p.tool,
                &p.state,
                &p.time,
                &p.updated,
                &p.raw,
            ],
        )
        .await
        .unwrap();
        if !p.text.trim().is_empty() {
            c.execute(
                "INSERT INTO search (doc, session_id, message_id, part_id, kind, time, tool, state, model, agent, body)
                 VALUES ('p:' || $1, $2, $3, $1, $4, $5, $6, $7, $8, $9, $10)",
                &[&p.id, &p.session_id, &p.message_id, &p.kind, &p.time, &p.tool, &p.state,
                  &p.model, &p.agent, &indexable(&p.text).into_owned()],
            )
            .await
            .unwrap();
        }
    }
    for e in &batch.events {
        c.execute(
            "INSERT INTO events (key, session_id, time, json) VALUES ($1, $2, $3, $4)",
            &[&e.key, &e.session_id, &e.time_ms, &e.json],
        )
        .await
        .unwrap();
    }
}

/// Every query's hits: where, when, and the snippet with its marks.
fn hits_of(archive: &mut dyn Engine) -> Vec<String> {
    let q = |text: &str, f: &dyn Fn(&mut Query)| {
        let mut q = Query::new(text);
        f(&mut q);
        q
    };
    let queries = [
        q("invoice", &|_| {}),
        q("invoice", &|q| q.project = Some("alpha".into())),
        q("invoice", &|q| q.server = Some("alpha-box".into())),
        q("invoice", &|q| q.since = Some(1_705_000_000_000)),
        q("invoice", &|q| q.model = Some("claude".into())),
        q("invoice", &|q| q.agent = Some("plan".into())),
        q("invoice", &|q| q.tool = Some("bash".into())),
        q("invoice", &|q| q.state = Some("error".into())),
        q("billing", &|_| {}),
        q("README.md", &|_| {}),
        q("templ", &|q| q.prefix = true),
    ];
    let mut out = Vec::new();
    for query in &queries {
        for h in archive.search(query).unwrap_or_else(|e| panic!("{e}")) {
            out.push(format!(
                "{:?}: {} {:?} {:?} {} {} {:?} {}",
                query.text,
                h.session_id,
                h.message_id,
                h.part_id,
                h.kind,
                h.time,
                h.project,
                h.plain_snippet()
            ));
        }
    }
    out
}

fn version_and_columns(pg: &postgres_support::Postgres, db: &str) -> (i64, Vec<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (c, connection) =
            tokio_postgres::connect(&pg.url(db, "postgres"), tokio_postgres::NoTls)
                .await
                .unwrap();
        tokio::spawn(connection);
        let version: i64 = c
            .query_one("SELECT max(version) FROM ocview_schema", &[])
            .await
            .unwrap()
            .get(0);
        let columns = c
            .query(
                "SELECT column_name::text FROM information_schema.columns
                 WHERE table_name = 'search' ORDER BY ordinal_position",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        (version, columns)
    })
}

#[test]
fn a_schema_5_archive_upgrades_and_finds_the_same_hits() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let batch = batch();
    let new_url = pg.database("made_new");
    let mut made_new = Setting::Postgres(new_url).open().unwrap().unwrap();
    made_new.write(&batch).unwrap();
    let expected = hits_of(&mut *made_new);
    assert!(
        expected
            .iter()
            .any(|h| h.contains("ses_alpha") && h.contains("«invoice»")),
        "{expected:#?}"
    );
    assert_eq!(expected.len(), 22, "{expected:#?}");

    let old_url = pg.database("old");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(write_schema_5(&old_url, &batch));
    pg.sql(
        "postgres",
        "DO $$ BEGIN CREATE ROLE reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    );
    pg.sql(
        "old",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
    );
    assert!(
        version_and_columns(&pg, "old")
            .1
            .contains(&"body".to_string())
    );
    // A reader may not upgrade it, and searches it as it is meanwhile.
    let mut early_reader = Setting::Postgres(pg.url("old", "reader"))
        .open()
        .unwrap()
        .unwrap();
    assert!(early_reader.read_only().is_some());
    assert_eq!(hits_of(&mut *early_reader), expected);
    drop(early_reader);
    assert_eq!(version_and_columns(&pg, "old").0, 5);

    let mut upgraded = Setting::Postgres(old_url).open().unwrap().unwrap();
    let (version, columns) = version_and_columns(&pg, "old");
    assert_eq!(version, schema::LATEST);
    assert!(columns.is_empty(), "the search table is gone: {columns:?}");
    assert_eq!(hits_of(&mut *upgraded), expected);
    // Writing the same again adds nothing (its rows from before schema 9
    // keep their JSON and no hash, and are told equal all the same); the
    // upgraded index takes new text.
    assert_eq!(upgraded.write(&batch).unwrap().parts, 0);
    assert_eq!(hits_of(&mut *upgraded), expected);
    drop(upgraded);

    let mut reader = Setting::Postgres(pg.url("old", "reader"))
        .open()
        .unwrap()
        .unwrap();
    assert!(reader.read_only().is_some());
    assert_eq!(hits_of(&mut *reader), expected);
}
