use super::*;

const TWO: &[schema::Migration] = &[
    (1, "numbers", "CREATE TABLE numbers (n INTEGER NOT NULL);"),
    (2, "words", "CREATE TABLE words (w TEXT NOT NULL);"),
];

/// The Rust step of version 1: it sees its own SQL done and the next
/// migration's not yet.
fn fill_numbers(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    let words: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = 'words'",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(words, 0, "the step runs before the next migration");
    tx.execute_batch("INSERT INTO numbers VALUES (1), (2), (3);")
}

fn refuse(_: &rusqlite::Transaction) -> rusqlite::Result<()> {
    Err(rusqlite::Error::InvalidQuery)
}

fn count(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_rust_step_runs_after_its_sql_once_and_in_its_transaction() {
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    let steps: &[(i64, Step)] = &[(1, fill_numbers)];
    assert_eq!(run(&mut c, TWO, steps).unwrap(), Ran::Current);
    assert_eq!(count(&c, "SELECT count(*) FROM numbers"), 3);
    assert_eq!(count(&c, "SELECT count(*) FROM words"), 0);
    assert_eq!(versions(&c).unwrap(), (Some(2), 2));
    // Once: a second run finds everything recorded.
    assert_eq!(run(&mut c, TWO, steps).unwrap(), Ran::Current);
    assert_eq!(count(&c, "SELECT count(*) FROM numbers"), 3);

    // A failing step takes its migration's SQL back with it.
    let three: Vec<schema::Migration> = TWO
        .iter()
        .copied()
        .chain([(3, "more", "CREATE TABLE more (m INTEGER);")])
        .collect();
    let failing: &[(i64, Step)] = &[(1, fill_numbers), (3, refuse)];
    let err = run(&mut c, &three, failing).unwrap_err();
    assert!(matches!(err, MigrateError::Db(_)), "{err}");
    assert_eq!(
        count(&c, "SELECT count(*) FROM sqlite_master WHERE name = 'more'"),
        0
    );
    assert_eq!(versions(&c).unwrap(), (Some(2), 2));
}

#[test]
fn a_legacy_archive_is_recorded_with_refinerys_checksums_and_not_run_again() {
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    // As the runner before refinery left it: version 1's SQL, user_version 1.
    c.execute_batch(TWO[0].2).unwrap();
    c.pragma_update(None, "user_version", 1).unwrap();
    c.execute_batch("INSERT INTO numbers VALUES (7);").unwrap();
    run(&mut c, TWO, &[]).unwrap();
    assert_eq!(count(&c, "SELECT n FROM numbers"), 7);
    let recorded: Vec<(i64, String, String)> = c
        .prepare(&format!(
            "SELECT version, name, checksum FROM {HISTORY} ORDER BY version"
        ))
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<(i64, String, String)> = refinery_list(TWO)
        .unwrap()
        .iter()
        .map(|m| {
            (
                m.version() as i64,
                m.name().to_string(),
                m.checksum().to_string(),
            )
        })
        .collect();
    assert_eq!(recorded, expected);
}

#[test]
fn a_changed_migration_is_refused_by_refinery() {
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    run(&mut c, &TWO[..1], &[]).unwrap();
    let changed: &[schema::Migration] =
        &[(1, "numbers", "CREATE TABLE numbers (n INTEGER);"), TWO[1]];
    let err = run(&mut c, changed, &[]).unwrap_err();
    assert!(matches!(err, MigrateError::History(_)), "{err}");
}

#[test]
fn the_plan_adopts_runs_or_stops() {
    let fresh = plan(TWO, None, 0);
    assert_eq!(
        (fresh.adopt, fresh.run, fresh.newer),
        (None, vec![1, 2], None)
    );
    let legacy = plan(TWO, None, 1);
    assert_eq!(
        (legacy.adopt, legacy.run, legacy.newer),
        (Some(1), vec![2], None)
    );
    let current = plan(TWO, Some(2), 2);
    assert_eq!(
        (current.adopt, current.run, current.newer),
        (None, vec![], None)
    );
    assert_eq!(plan(TWO, Some(9), 2).newer, Some(9));
    assert_eq!(plan(TWO, None, 9).newer, Some(9));
}

#[test]
fn the_word_index_and_one_being_built_write_a_batch_as_one_segment() {
    let hashsize = |c: &rusqlite::Connection, table: &str| {
        count(
            c,
            &format!("SELECT v FROM {table}_config WHERE k = 'hashsize'"),
        )
    };
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    let sqlite = crate::archive::sqlite::schema::MIGRATIONS;
    run(&mut c, sqlite, crate::archive::sqlite::schema::STEPS).unwrap();
    assert_eq!(hashsize(&c, "search"), 16 << 20);
    // A re-index under way when the migration runs: its new index too.
    c.execute_batch(crate::archive::sqlite::reindex::SQL_20)
        .unwrap();
    let tx = c.transaction().unwrap();
    crate::archive::sqlite::reindex::flush_by_batch(&tx).unwrap();
    tx.commit().unwrap();
    assert_eq!(hashsize(&c, "search_next"), 16 << 20);
}

#[test]
fn the_word_index_and_one_being_built_merge_sixty_four_segments_at_a_time() {
    let setting = |c: &rusqlite::Connection, table: &str, key: &str| {
        count(
            c,
            &format!("SELECT v FROM {table}_config WHERE k = '{key}'"),
        )
    };
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    let sqlite = crate::archive::sqlite::schema::MIGRATIONS;
    run(&mut c, sqlite, crate::archive::sqlite::schema::STEPS).unwrap();
    assert_eq!(setting(&c, "search", "automerge"), 64);
    assert_eq!(setting(&c, "search", "crisismerge"), 64);
    // A re-index under way when the migration runs: its new index too.
    c.execute_batch(crate::archive::sqlite::reindex::SQL_20)
        .unwrap();
    assert_eq!(setting(&c, "search_next", "automerge"), 16);
    let tx = c.transaction().unwrap();
    crate::archive::sqlite::reindex::merge_wider(&tx).unwrap();
    tx.commit().unwrap();
    assert_eq!(setting(&c, "search_next", "automerge"), 64);
    assert_eq!(setting(&c, "search_next", "crisismerge"), 64);
    // Twenty segments written one by one stay twenty: none merged.
    for n in 0..20 {
        c.execute(
            "INSERT INTO search (rowid, body) VALUES (?1, 'word')",
            [n + 1],
        )
        .unwrap();
    }
    let segments = count(&c, "SELECT count(DISTINCT segid) FROM search_idx");
    assert_eq!(segments, 20);
}
