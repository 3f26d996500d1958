//! PostgreSQL's index of the parts the log holds (schema 10): one document
//! per block of the log, not per part. A block matches when its parts
//! together have the words; a hit is only a part that has them itself, in
//! its latest state, in order where the query asks for a phrase. Many
//! blocks are read newest first, in rounds, and ruled out by their oldest
//! and newest parts' times; a project's blocks are found by its sessions,
//! few or many. An archive of schema 9 or 10 is upgraded and finds the same
//! hits, and a writer that may not upgrade it, upgraded under it, goes on
//! writing. A message the log holds is kept as its place there.

use crate::support::postgres as postgres_support;

use ocview::archive::collect::Collector;
use ocview::archive::rows::Batch;
use ocview::archive::{Engine, Origin, Query, Setting, schema};
use ocview::source::ReplayReader;

const SESSION: &str = "ses_blocks";

fn batch_of(lines: &[String]) -> Batch {
    let mut collector = Collector::new(Origin {
        server: Some("http://blocks-box:4096".into()),
        host: "testhost".into(),
        file: None,
    });
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    let mut reader = ReplayReader::new(std::io::Cursor::new(text.into_bytes()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    collector.take()
}

fn session(updated: i64) -> String {
    format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{SESSION}","title":"Blocks","directory":"/work/blocks","time":{{"created":1,"updated":{updated}}}}}}}}}"#
    )
}

fn message(id: &str, time: i64) -> String {
    format!(
        r#"{{"type":"message.updated","properties":{{"info":{{"id":"{id}","sessionID":"{SESSION}","role":"assistant","agent":"build","providerID":"anthropic","modelID":"claude-x","time":{{"created":{time}}}}}}}}}"#
    )
}

fn text_part(id: &str, message: &str, text: &str, time: i64) -> String {
    format!(
        r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"{id}","messageID":"{message}","sessionID":"{SESSION}","type":"text","text":"{text}","time":{{"start":{time}}}}}}}}}"#
    )
}

fn delta(id: &str, message: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message.part.delta","properties":{{"sessionID":"{SESSION}","messageID":"{message}","partID":"{id}","field":"text","delta":"{text}"}}}}"#
    )
}

/// A new archive in database `name` of `pg`.
fn opened(pg: &postgres_support::Postgres, name: &str) -> Box<dyn Engine> {
    Setting::Postgres(pg.database(name))
        .open()
        .unwrap()
        .unwrap()
}

fn parts_found(archive: &mut dyn Engine, text: &str, f: impl Fn(&mut Query)) -> Vec<String> {
    let mut q = Query::new(text);
    f(&mut q);
    archive
        .search(&q)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .into_iter()
        .filter_map(|h| h.part_id)
        .collect()
}

fn found(archive: &mut dyn Engine, text: &str) -> Vec<String> {
    let mut ids = parts_found(archive, text, |_| {});
    ids.sort();
    ids
}

/// The first batch: three parts the log holds as they are (one block), one
/// part grown by deltas (not the log's: a document of its own).
fn first_batch() -> Batch {
    batch_of(&[
        session(10),
        message("msg_1", 1_000),
        text_part("prt_a", "msg_1", "the invoice total", 1_001),
        text_part("prt_b", "msg_1", "a billing report", 1_002),
        text_part("prt_c", "msg_1", "rs billing then README", 1_003),
        text_part("prt_d", "msg_1", "overdue ", 1_004),
        delta("prt_d", "msg_1", "invoice"),
    ])
}

#[test]
fn a_blocks_document_finds_only_the_parts_that_have_the_words() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("blocks");
    let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    let batch = first_batch();
    let logged: Vec<&str> = batch
        .parts
        .iter()
        .filter(|p| p.logged_as.is_some())
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(logged, ["prt_a", "prt_b", "prt_c"], "{:?}", batch.parts);
    archive.write(&batch).unwrap();

    // The log's parts have no document of their own; their block has one.
    let own = postgres_support::rows(&url, "SELECT id, tsv IS NOT NULL FROM parts ORDER BY id");
    assert_eq!(
        own,
        [
            ["prt_a", "f"],
            ["prt_b", "f"],
            ["prt_c", "f"],
            ["prt_d", "t"]
        ]
    );
    let blocks = postgres_support::rows(
        &url,
        "SELECT count(*) FROM event_blocks WHERE tsv IS NOT NULL AND newest = 1003",
    );
    assert_eq!(blocks, [["1"]]);
    // The message, as the log holds it, is kept as its place there, and
    // read back from it.
    let message = postgres_support::rows(
        &url,
        "SELECT raw = '', logged IS NOT NULL FROM messages WHERE id = 'msg_1'",
    );
    assert_eq!(message, [["t", "t"]]);
    let snapshot = archive.snapshot(SESSION).unwrap();
    assert!(
        snapshot
            .iter()
            .any(|e| e.contains("message.updated") && e.contains("claude-x")),
        "{snapshot:#?}"
    );

    assert_eq!(found(&mut *archive, "invoice"), ["prt_a", "prt_d"]);
    assert_eq!(found(&mut *archive, "billing"), ["prt_b", "prt_c"]);
    // The block has both words; no one part has them.
    assert!(found(&mut *archive, "invoice report").is_empty());
    assert_eq!(found(&mut *archive, "billing report"), ["prt_b"]);
    // A phrase: its pieces in order, in one part.
    assert_eq!(found(&mut *archive, "billing.rs"), Vec::<String>::new());
    assert_eq!(found(&mut *archive, "rs.billing"), ["prt_c"]);
    // Prefixes, and the filters a part answers.
    let typed = parts_found(&mut *archive, "bill", |q| q.prefix = true);
    assert_eq!(typed.len(), 2, "{typed:?}");
    assert_eq!(
        parts_found(&mut *archive, "billing", |q| q.until = Some(1_003)),
        ["prt_b"]
    );
    assert_eq!(
        parts_found(&mut *archive, "invoice", |q| q.since = Some(1_002)),
        ["prt_d"]
    );
    assert_eq!(
        parts_found(&mut *archive, "invoice", |q| q.model =
            Some("claude".into()))
        .len(),
        2
    );
    assert!(parts_found(&mut *archive, "invoice", |q| q.tool = Some("bash".into())).is_empty());
    assert!(
        parts_found(&mut *archive, "invoice", |q| q.project =
            Some("elsewhere".into()))
        .is_empty()
    );
    assert_eq!(
        parts_found(&mut *archive, "invoice", |q| q.server =
            Some("blocks-box".into()))
        .len(),
        2
    );
    let hit = archive.search(&Query::new("total")).unwrap().remove(0);
    assert_eq!(hit.plain_snippet(), "the invoice «total»");
    assert_eq!(hit.title, "Blocks");

    // The same batch again adds nothing and finds the same.
    assert_eq!(archive.write(&batch).unwrap().parts, 0);
    assert_eq!(found(&mut *archive, "invoice"), ["prt_a", "prt_d"]);

    // A part's later state is found, its earlier one no longer: the old
    // block still has the word, the part's place has moved on.
    archive
        .write(&batch_of(&[
            session(20),
            text_part("prt_a", "msg_1", "the receipt total", 1_001),
        ]))
        .unwrap();
    assert_eq!(found(&mut *archive, "invoice"), ["prt_d"]);
    assert_eq!(found(&mut *archive, "receipt"), ["prt_a"]);
}

#[test]
fn many_blocks_are_read_newest_first_until_the_hits_are_settled() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let mut archive = opened(&pg, "rounds");
    // 60 blocks, one per batch; each has a part with the word and one
    // without. Written out of time order, so blocks' order is not time's.
    let mut order: Vec<i64> = (0..60).collect();
    order.sort_by_key(|i| (i * 37) % 60);
    for i in order {
        let time = 10_000 + i * 100;
        archive
            .write(&batch_of(&[
                session(time),
                message(&format!("msg_{i:02}"), time),
                text_part(
                    &format!("prt_{i:02}"),
                    &format!("msg_{i:02}"),
                    "a common word",
                    time,
                ),
                text_part(
                    &format!("prt_{i:02}_x"),
                    &format!("msg_{i:02}"),
                    "nothing here",
                    time + 1,
                ),
            ]))
            .unwrap();
    }
    let mut newest = |limit: u32, f: &dyn Fn(&mut Query)| {
        parts_found(&mut *archive, "common", |q| {
            q.limit = limit;
            f(q)
        })
    };
    let expected: Vec<String> = (0..60).rev().map(|i| format!("prt_{i:02}")).collect();
    assert_eq!(newest(20, &|_| {}), expected[..20]);
    assert_eq!(newest(50, &|_| {}), expected[..50]);
    assert_eq!(newest(100, &|_| {}), expected);
    // Older than the newest blocks: the rounds go on past them.
    assert_eq!(
        newest(5, &|q| q.until = Some(10_000 + 10 * 100)),
        expected[50..55]
    );
}

#[test]
fn a_project_of_few_or_many_sessions_finds_the_same_hits() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let mut archive = opened(&pg, "projects");
    archive.write(&first_batch()).unwrap();
    let in_project = |archive: &mut dyn Engine, project: &str| {
        let mut ids = parts_found(archive, "invoice", |q| {
            q.project = Some(project.into());
            q.until = Some(1_004);
        });
        ids.sort();
        ids
    };
    // One session: its blocks are found by it.
    assert_eq!(in_project(&mut *archive, "/work/blocks"), ["prt_a"]);
    // More sessions than are named to the blocks' query: the blocks are
    // walked newest first, each checked against its session.
    let others: Vec<String> = (0..1_001)
        .map(|i| {
            format!(
                r#"{{"type":"session.updated","properties":{{"info":{{"id":"ses_other_{i}","title":"Other","directory":"/work/blocks-{i}","time":{{"created":1,"updated":5}}}}}}}}"#
            )
        })
        .collect();
    archive.write(&batch_of(&others)).unwrap();
    assert_eq!(in_project(&mut *archive, "/work/blocks"), ["prt_a"]);
    assert!(in_project(&mut *archive, "/work/blocks-7").is_empty());
}

/// The grants a writer with no right to change the schema has: it writes
/// an archive at the version it finds.
const WRITER: &str =
    "DO $$ BEGIN CREATE ROLE writer LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;";
const WRITER_GRANTS: &str =
    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO writer;
     GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO writer;";

#[test]
fn a_schema_9_archive_moves_its_parts_documents_into_their_blocks() {
    an_older_archive_finds_the_same_hits(9);
}

#[test]
fn a_schema_10_archive_gets_its_blocks_oldest_times() {
    an_older_archive_finds_the_same_hits(10);
}

/// An archive at `version`, written by a writer of that version that may
/// not upgrade it, then upgraded: the same hits as one made now, with a
/// date range too (it rules blocks out by their oldest and newest parts).
fn an_older_archive_finds_the_same_hits(version: i64) {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    // The same parts in an archive made now, to compare with.
    let mut now = opened(&pg, "now");
    now.write(&first_batch()).unwrap();
    // Its block spans the times of the three parts in its document.
    let span = "SELECT oldest, newest FROM event_blocks WHERE tsv IS NOT NULL";
    assert_eq!(
        postgres_support::rows(&pg.url("now", "postgres"), span),
        [["1001", "1003"]]
    );
    let queries = [
        "invoice",
        "billing",
        "invoice report",
        "rs.billing",
        "total",
    ];
    let expected: Vec<Vec<String>> = queries.iter().map(|q| found(&mut *now, q)).collect();
    let dated = |archive: &mut dyn Engine| {
        [
            (None, Some(1_003)),
            (Some(1_002), Some(1_004)),
            (Some(1_004), None),
        ]
        .map(|(since, until)| {
            parts_found(archive, "billing", |q| {
                q.since = since;
                q.until = until;
            })
        })
    };
    let expected_dated = dated(&mut *now);
    assert_eq!(
        expected_dated,
        [vec!["prt_b"], vec!["prt_c", "prt_b"], vec![]]
    );

    // An archive at `version`, written as that version writes, by a
    // writer that may not upgrade it.
    let db = format!("v{version}");
    let url = pg.database(&db);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (mut c, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let older: Vec<_> = ocview::archive::postgres::schema::MIGRATIONS
            .iter()
            .copied()
            .filter(|m| m.0 <= version)
            .collect();
        ocview::archive::postgres::migrate::run(
            &mut c,
            &older,
            ocview::archive::postgres::schema::STEPS,
        )
        .await
        .unwrap();
    });
    pg.sql("postgres", WRITER);
    pg.sql(&db, WRITER_GRANTS);
    let mut writer = Setting::Postgres(pg.url(&db, "writer"))
        .open()
        .unwrap()
        .unwrap();
    assert!(writer.read_only().is_none());
    writer.write(&first_batch()).unwrap();
    let own = postgres_support::rows(&url, "SELECT count(*) FROM parts WHERE tsv IS NOT NULL");
    let own_expected = if version == 9 { "4" } else { "1" };
    assert_eq!(own, [[own_expected]], "schema {version}'s documents");
    // Before schema 10 a message keeps its JSON, the log's or not.
    let kept = postgres_support::rows(
        &url,
        "SELECT count(*) FILTER (WHERE raw = ''), count(*) FROM messages",
    );
    let without = if version == 9 { "0" } else { &kept[0][1] };
    assert_eq!(kept[0][0], without, "schema {version}'s messages: {kept:?}");

    let mut upgraded = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    let latest = postgres_support::rows(&url, "SELECT max(version) FROM ocview_schema");
    assert_eq!(latest, [[schema::LATEST.to_string()]]);
    assert_eq!(postgres_support::rows(&url, span), [["1001", "1003"]]);
    // The writer opened before the upgrade goes on writing as it did, in
    // a new block, then stops: its part is found with a date range too.
    writer
        .write(&batch_of(&[
            session(30),
            text_part("prt_late", "msg_1", "a late notice", 1_010),
        ]))
        .unwrap();
    drop(writer);
    assert_eq!(
        parts_found(&mut *upgraded, "late", |q| q.until = Some(1_020)),
        ["prt_late"]
    );
    assert_eq!(found(&mut *upgraded, "late"), ["prt_late"]);
    let own = postgres_support::rows(&url, "SELECT id FROM parts WHERE tsv IS NOT NULL");
    assert_eq!(own, [["prt_d"]], "the log's parts gave theirs to the block");
    let got: Vec<Vec<String>> = queries.iter().map(|q| found(&mut *upgraded, q)).collect();
    assert_eq!(got, expected);
    assert_eq!(dated(&mut *upgraded), expected_dated);
}

#[test]
fn text_past_a_blocks_budget_keeps_a_document_of_its_own() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("budget");
    let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    // Five parts of 60 kB of words in one block: four fit its 256 kB, one
    // does not. The budget counts each word once: a block takes any
    // number of parts that say the same words over and over.
    let words = |i: i64| -> String { (0..6_000).map(|n| format!("w{i}x{n:05} ")).collect() };
    let lorem = "lorem ".repeat(10_000);
    let mut lines = vec![session(10), message("msg_0", 990)];
    for i in 0..8 {
        let text = format!("again{i} {lorem}");
        lines.push(text_part(&format!("prt_r{i}"), "msg_0", &text, 990 + i));
    }
    lines.push(message("msg_1", 1_000));
    for i in 0..5 {
        lines.push(text_part(
            &format!("prt_{i}"),
            "msg_1",
            &format!("marker{i} lorem {}", words(i)),
            1_000 + i,
        ));
    }
    archive.write(&batch_of(&lines)).unwrap();
    let own = postgres_support::rows(&url, "SELECT id FROM parts WHERE tsv IS NOT NULL");
    assert_eq!(own, [["prt_4"]]);
    for i in 0..5 {
        assert_eq!(
            found(&mut *archive, &format!("marker{i}")),
            [format!("prt_{i}")]
        );
    }
    for i in 0..8 {
        assert_eq!(
            found(&mut *archive, &format!("again{i}")),
            [format!("prt_r{i}")]
        );
    }
    assert_eq!(found(&mut *archive, "w3x00042"), ["prt_3"]);
    assert_eq!(found(&mut *archive, "w4x05999"), ["prt_4"]);
    assert_eq!(found(&mut *archive, "lorem").len(), 13);
}

#[test]
fn a_message_sent_again_unchanged_keeps_its_place_in_the_log() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("messages");
    let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    // One collector, two batches: the second has a new part of the message
    // and not its `message.updated`, so the message comes again without a
    // place in the log of its own.
    let mut collector = Collector::new(Origin {
        server: None,
        host: "testhost".into(),
        file: None,
    });
    let mut feed = |lines: &[String]| {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut reader = ReplayReader::new(std::io::Cursor::new(text.into_bytes()));
        while let Some(record) = reader.next_record().unwrap() {
            collector.record(record);
        }
        collector.take()
    };
    let first = feed(&[
        session(10),
        message("msg_1", 1_000),
        text_part("prt_a", "msg_1", "first", 1_001),
    ]);
    archive.write(&first).unwrap();
    // Received later, as a recording says: the message's row is newer.
    let second = feed(&[format!(
        r#"{{"t":5000,"event":{}}}"#,
        text_part("prt_b", "msg_1", "second", 1_002)
    )]);
    let again = second.messages.iter().find(|m| m.id == "msg_1");
    assert!(
        again.is_some_and(|m| m.logged_as.is_none()),
        "{:?}",
        second.messages
    );
    archive.write(&second).unwrap();
    let kept = postgres_support::rows(
        &url,
        "SELECT raw = '', logged IS NOT NULL FROM messages WHERE id = 'msg_1'",
    );
    assert_eq!(kept, [["t", "t"]], "kept as its place, not copied");
    let snapshot = archive.snapshot(SESSION).unwrap();
    assert!(
        snapshot
            .iter()
            .any(|e| e.contains("message.updated") && e.contains("claude-x")),
        "{snapshot:#?}"
    );
}

/// Words the server's parser makes otherwise than a plain run of letters
/// and digits, beside plain ones: each block's words, part made by ocview
/// (`lexemes`), hold every word the server makes of each of its parts.
#[test]
fn a_blocks_words_made_here_hold_every_word_the_server_makes_of_its_parts() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("made_here");
    // The server makes plain words as ocview does: they are made here.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agrees = rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        ocview::archive::postgres::lexemes::server_agrees(&client).await
    });
    assert!(agrees);
    let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    let shapes = [
        "7056e656ab",
        "1e5x",
        "2E3",
        "e5",
        "+5",
        "x+1",
        "~home",
        "a~b",
        "0x1F",
        "0123",
        "sha256",
        "f(x)=y",
        "[a,b]",
        "'quoted'",
        "don't",
        "Ünïcödé",
        "ДОМ",
        "東京",
        "IMPORT",
        "Import",
        "v1.18.33",
        "src/main.rs",
        "a-b",
        "x_y",
        "http://h.example/p?q=1",
        "mail@host.example",
        "<b>bold</b>",
        "&amp;",
        "99999999999999999999",
        "3.14",
        "-7",
        "#tag",
        "$5",
        "50%",
        "a|b",
        "`tick`",
        "ABCe9",
        "9e9e9",
        "e1e",
        "x1E1y",
    ];
    let mut word = crate::support::words::random_words(7, 1 << 40);
    let mut lines = vec![session(10), message("msg_1", 1_000)];
    let mut texts = Vec::new();
    for i in 0..40usize {
        // Begun by a plain word: the parser makes `~a` or `+5` a word of
        // its own only at the very start of what it reads.
        let mut text = format!("part{i} ");
        for n in 0..60 {
            let shape = shapes[(i * 7 + n * 3) % shapes.len()];
            text.push_str(&format!("{shape} {}{n} ", word().to_uppercase()));
        }
        let quoted = serde_json::to_string(&text).unwrap();
        let id = format!("prt_{i:02}");
        lines.push(text_part(
            &id,
            "msg_1",
            &quoted[1..quoted.len() - 1],
            1_001 + i as i64,
        ));
        texts.push((id, text));
    }
    archive.write(&batch_of(&lines)).unwrap();
    let values: Vec<String> = texts
        .iter()
        .map(|(id, text)| format!("('{id}', $t${text}$t$)"))
        .collect();
    // A part's own document is its text with these spaced (`tsvector_sql`).
    let missing = postgres_support::rows(
        &url,
        &format!(
            "SELECT t.id, w FROM (VALUES {}) AS t(id, text)
             JOIN parts p ON p.id = t.id
             JOIN event_blocks b ON b.pk = p.logged >> 16,
             unnest(tsvector_to_array(to_tsvector('simple',
                 translate(t.text, './-_:@', '      ')))) AS w
             WHERE p.tsv IS NULL AND NOT (w = ANY (tsvector_to_array(b.tsv)))",
            values.join(", ")
        ),
    );
    assert_eq!(missing, Vec::<Vec<String>>::new());
    let in_blocks = postgres_support::rows(
        &url,
        "SELECT count(*) FROM parts WHERE tsv IS NULL AND logged IS NOT NULL",
    );
    assert_eq!(in_blocks, [["40"]]);
    // Found through the blocks: a word made here, and one the parser made.
    let plain = texts[3].1.split(' ').nth(2).unwrap().to_lowercase();
    assert_eq!(found(&mut *archive, &plain), ["prt_03"]);
    assert_eq!(found(&mut *archive, "ünïcödé").len(), 40);
}

/// An import's reading stage makes each part's runs ahead
/// (`Engine::rows_ahead`): the blocks' documents are the same as the
/// writer makes of the whole texts.
#[test]
fn blocks_made_of_runs_made_ahead_are_the_blocks_of_the_whole_texts() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let mut lines = vec![session(10), message("msg_1", 1_000)];
    for i in 0..30i64 {
        let text = format!(
            "Part{i} said <b>twice</b> &amp; again: src/main.rs v1.18.{i} parseJSON x+{i} ~tilde \
             Naïve CAFÉ 東京 {}",
            "repeated words repeated WORDS ".repeat(i as usize)
        );
        lines.push(text_part(&format!("prt_{i:02}"), "msg_1", &text, 1_001 + i));
    }
    // Grown by deltas, not the log's: a document of its own, its text made
    // by the writer though its runs were made ahead.
    lines.push(text_part("prt_own", "msg_1", "overdue ", 1_100));
    lines.push(delta("prt_own", "msg_1", "invoice"));
    let batch = batch_of(&lines);
    let blocks = |name: &str, ahead: bool| {
        let url = pg.database(name);
        let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
        // Redacted ahead, as an import's reading stage does: the writer
        // keeps what was made ahead.
        let mut batch = ocview::archive::redacted::ahead(batch.clone(), true);
        if ahead {
            let prepare = archive
                .rows_ahead()
                .expect("PostgreSQL prepares rows ahead");
            batch.parts.iter_mut().for_each(prepare);
            assert!(batch.parts.iter().all(|p| p.prepared.is_some()));
        }
        archive.write(&batch).unwrap();
        assert_eq!(found(&mut *archive, "tilde").len(), 30);
        assert_eq!(found(&mut *archive, "invoice"), ["prt_own"]);
        postgres_support::rows(
            &url,
            "SELECT tsv::text, newest::text FROM event_blocks WHERE tsv IS NOT NULL ORDER BY pk",
        )
    };
    let whole = blocks("whole_texts", false);
    assert!(!whole.is_empty());
    assert_eq!(blocks("runs_ahead", true), whole);
}

/// An import as `ocview archive import` runs it (through the keeper a team
/// archive is written by) makes the parts' rows on its preparing stage,
/// lets the word indexes' pending lists grow while it writes, and leaves
/// them merged into the indexes at its end: a search after it reads no
/// pending list, and finds what was imported. Its blocks are stored
/// without the server's compression.
#[test]
fn an_import_leaves_the_word_indexes_merged_its_rows_made_ahead() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("bulk_import");
    let keeper = ocview::archive::keeper::Keeper::open(&Setting::Postgres(url.clone()), &|_| {})
        .unwrap()
        .unwrap();
    assert!(
        keeper.rows_ahead().is_some(),
        "made ahead through the keeper"
    );
    drop(keeper);
    let mut lines = vec![session(10), message("msg_1", 1_000)];
    let mut word = crate::support::words::random_words(7, 100_000);
    for i in 0..300 {
        let words: Vec<String> = (0..40).map(|_| word()).collect();
        let id = format!("prt_{i:03}");
        lines.push(text_part(&id, "msg_1", &words.join(" "), 1_001 + i));
    }
    // Words the server's parser makes (past ASCII, with signs): positions.
    lines.push(text_part(
        "prt_parsed",
        "msg_1",
        "Ünïcode café ~home/x+1 7056e656 naïve Ünïcode",
        1_999,
    ));
    lines.push(text_part(
        "prt_last",
        "msg_1",
        "quarterly invoice reconciled",
        2_000,
    ));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bulk.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = crate::archive_import_db::ocview()
        .args(["archive", "import", "--archive", &url])
        .arg(&file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // Each index's pages still pending: none (a later merge finds nothing).
    for index in ["event_blocks_tsv", "parts_tsv", "sessions_tsv"] {
        let left =
            postgres_support::rows(&url, &format!("SELECT gin_clean_pending_list('{index}')"));
        assert_eq!(left, [["0"]], "{index}");
    }
    // A block's events (zstd) and words are stored as they are: the
    // server's own compression gave up on every one, after trying.
    let storage = postgres_support::rows(
        &url,
        "SELECT attname, attstorage FROM pg_attribute
         WHERE attrelid = 'event_blocks'::regclass AND attname IN ('data', 'tsv') ORDER BY 1",
    );
    assert_eq!(storage, [["data", "e"], ["tsv", "e"]]);
    // And their words keep no positions, the parser's neither.
    let placed = postgres_support::rows(
        &url,
        "SELECT count(*) FILTER (WHERE tsv <> strip(tsv)), count(tsv) FROM event_blocks",
    );
    assert_eq!(placed[0][0], "0", "{placed:?}");
    assert_ne!(placed[0][1], "0", "{placed:?}");
    let mut archive = Setting::Postgres(url).open().unwrap().unwrap();
    assert_eq!(found(&mut *archive, "reconciled"), ["prt_last"]);
}

/// During an import, the word indexes' pending lists are merged by a
/// connection of their own beside the writes, not by the write that fills
/// them (which held the import for seconds): after some batches, with
/// the import still going on, nothing is left pending for a merge.
#[test]
fn an_import_merges_the_pending_lists_beside_its_writes() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let url = pg.database("merged_beside");
    let mut archive = Setting::Postgres(url.clone()).open().unwrap().unwrap();
    archive.bulk(true);
    let mut word = crate::support::words::random_words(11, 100_000);
    let mut last_word = String::new();
    // One merge's worth (one every 8 batches, `postgres::upkeep`): asked
    // once the last is written, whatever the machine's speed.
    for b in 0..8 {
        let message_id = format!("msg_{b:02}");
        let mut lines = vec![session(10 + b), message(&message_id, 1_000 + b)];
        for i in 0..20 {
            let words: Vec<String> = (0..40).map(|_| word()).collect();
            last_word = words[0].clone();
            let id = format!("prt_{b:02}_{i:02}");
            lines.push(text_part(
                &id,
                &message_id,
                &words.join(" "),
                1_000 + b * 100 + i,
            ));
        }
        archive.write(&batch_of(&lines)).unwrap();
    }
    // The merge asked is sent as this connection's work is awaited; the
    // server merges meanwhile (a merge asked now waits for it, then finds
    // nothing).
    for _ in 0..10 {
        archive.counts().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left = postgres_support::rows(&url, "SELECT gin_clean_pending_list('event_blocks_tsv')");
    assert_eq!(left, [["0"]], "the blocks' words were left pending");
    archive.bulk(false);
    assert!(found(&mut *archive, &last_word).contains(&"prt_07_19".to_string()));
}
