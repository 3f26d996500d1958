//! A big file replayed in the viewer goes into the archive off the loop's
//! thread: its first frame is drawn before the archive has it all (order,
//! not time); while the import runs the status line says how far it is
//! ("archive: indexing big.jsonl 45 %"), and it goes quiet when done.

use crate::support::big_events;
use crate::support::tmux;

use std::time::{Duration, Instant};

/// (records committed, done) of `file`'s import, read without writing.
fn committed(db: &std::path::Path, file: &str) -> Option<(i64, bool)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.query_row(
        "SELECT records, done FROM imports WHERE file = ?1",
        [file],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ok()
}

#[test]
fn a_big_replayed_file_draws_first_then_says_its_progress_then_goes_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    big_events::write(
        &mut std::io::BufWriter::new(std::fs::File::create(&big).unwrap()),
        120,
        40,
    );
    let file = std::fs::canonicalize(&big).unwrap().display().to_string();
    let db = dir.path().join("archive.db");
    let t = tmux::Tmux::start_sized("archive-progress", 120, 30);
    t.line(&format!(
        "{} --archive {} replay {}",
        env!("CARGO_BIN_EXE_ocview"),
        db.display(),
        big.display()
    ));
    // Long enough for the whole import: a viewer that archived the file
    // before drawing fails on what it committed, not on a deadline.
    t.wait_for_secs("the first frame", 300, |s| s.contains("big session 0"));
    let at_first_frame = committed(&db, &file);
    assert!(
        !at_first_frame.is_some_and(|(_, done)| done),
        "the first frame waited for the archive: {at_first_frame:?}"
    );
    t.wait_for_secs("the import's progress", 60, |s| {
        s.contains("archive: indexing big.jsonl") && s.contains('%')
    });
    let started = Instant::now();
    while !committed(&db, &file).is_some_and(|(_, done)| done) {
        assert!(started.elapsed() < Duration::from_secs(300), "never done");
        std::thread::sleep(Duration::from_millis(100));
    }
    t.wait_for("the progress to go", |s| !s.contains("archive: indexing"));
    t.keys(&["q"]);
}
