//! Words as people type them: one table of texts and queries, each query
//! finding its text or not, on both engines (SQLite and PostgreSQL), as
//! `ocview search` and the `F` overlay ask (`archive::words` splits both
//! sides): apostrophes, hyphens and dots, snake_case and camelCase parts,
//! paths, numbers, letters beyond ASCII, CJK, prefixes and phrases.

use crate::support::postgres as postgres_support;

use crate::support::archived::archive_session;
use ocview::archive::{Engine, Origin, Query, Setting};

/// The origin the table's sessions are written from.
fn words_box() -> Origin {
    Origin {
        server: None,
        host: "words-box".into(),
        file: None,
    }
}

/// Texts long enough to be indexed as their distinct words, each word
/// said many times, in tags, entities and cases.
const LONG_HTML: &str = concat!(
    "<p class=\"note\">Deploy <b>failed</b> &amp; rolled back at 10:42</p>\n",
    "<p class=\"note\">Deploy <b>failed</b> &amp; rolled back at 10:42</p>\n",
    "<p class=\"note\">Deploy <b>failed</b> &amp; rolled back at 10:42</p>\n",
    "<p class=\"note\">Deploy <b>failed</b> &amp; rolled back at 10:42</p>\n",
    "then the fallbackServer restarted<br/>cleanly&nbsp;at last"
);
const LONG_REPEATS: &str = concat!(
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "Error ERROR error: Timeout in parseJSON; retrying.\n",
    "then unique_marker_word once, and Naïve CAFÉ"
);

/// (text, query, found). A query ending in `*` is a prefix; one in double
/// quotes a phrase.
const CASES: &[(&str, &str, bool)] = &[
    ("It doesn't work on Fridays", "doesn't", true),
    ("It doesn't work on Fridays", "doesnt", false),
    ("I'll check the user's settings", "I'll", true),
    ("I'll check the user's settings", "user's", true),
    ("I'll check the user's settings", "user", true),
    ("I'll check the user's settings", "won't", false),
    ("set dont_inherit to true", "don't", false),
    ("set dont_inherit to true", "dont_inherit", true),
    ("set dont_inherit to true", "inherit", true),
    ("run the pre-commit hooks", "pre-commit", true),
    ("run the pre-commit hooks", "commit", true),
    ("edit config.toml then restart", "config.toml", true),
    ("edit config.toml then restart", "toml", true),
    ("edit config.toml then restart", "config.json", false),
    ("upgrade opencode to v1.18.33 today", "v1.18.33", true),
    ("upgrade opencode to v1.18.33 today", "v1.18.34", false),
    ("call read_file_async twice", "read_file_async", true),
    ("call read_file_async twice", "file", true),
    ("call parseJsonBody on it", "parseJsonBody", true),
    ("call parseJsonBody on it", "parsejsonbody", true),
    ("call parseJsonBody on it", "json", true),
    ("call parseJsonBody on it", "Body", true),
    ("call parseJsonBody on it", "\"json body\"", true),
    ("start the HTTPServer now", "server", true),
    ("start the HTTPServer now", "http", true),
    ("open /home/dev/src/main.rs", "src/main.rs", true),
    ("open /home/dev/src/main.rs", "main", true),
    ("open /home/dev/src/main.rs", "src/lib.rs", false),
    ("the build took 1234 ms", "1234", true),
    ("the build took 1234 ms", "123", false),
    ("the build took 1234 ms", "123*", true),
    ("Straßenbahn und café crème", "café", true),
    ("Straßenbahn und café crème", "cafe", true),
    ("Straßenbahn und café crème", "straßenbahn", true),
    ("Привет, мир программистов", "мир", true),
    ("Привет, мир программистов", "програм*", true),
    ("数据库连接失败了", "连接", true),
    ("数据库连接失败了", "连接失败", true),
    ("数据库连接失败了", "数据库", true),
    ("数据库连接失败了", "失连", false),
    ("データベースに接続できません", "データ", true),
    ("データベースに接続できません", "接続", true),
    ("the payload could not be serialized", "serializ*", true),
    ("the payload could not be serialized", "serializ", false),
    ("cargo build --release finished", "\"cargo build\"", true),
    ("build the cargo crate", "\"cargo build\"", false),
    (LONG_HTML, "failed", true),
    (LONG_HTML, "\"rolled back\"", true),
    (LONG_HTML, "fallback", true),
    (LONG_HTML, "restarted", true),
    (LONG_HTML, "cleanly", true),
    (LONG_HTML, "succeeded", false),
    (LONG_REPEATS, "timeout", true),
    (LONG_REPEATS, "\"error timeout\"", true),
    (LONG_REPEATS, "json", true),
    (LONG_REPEATS, "unique_marker_word", true),
    (LONG_REPEATS, "marker", true),
    (LONG_REPEATS, "naive", true),
    (LONG_REPEATS, "café", true),
    (LONG_REPEATS, "\"timeout error\"", false),
];

const SESSION: &str = "ses_words";

fn part_id(i: usize) -> String {
    format!("prt_words{i:03}")
}

/// Every case's text as a part of its own, in one session.
fn archived(archive: &mut dyn Engine) {
    let mut lines = vec![format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{SESSION}","title":"Words","directory":"/work/words","time":{{"created":1,"updated":2}}}}}}}}"#
    )];
    let mut seen = std::collections::HashSet::new();
    for (i, (text, _, _)) in CASES.iter().enumerate() {
        if !seen.insert(*text) {
            continue;
        }
        let message = format!("msg_words{i:03}");
        lines.push(format!(
            r#"{{"type":"message.updated","properties":{{"info":{{"id":"{message}","sessionID":"{SESSION}","role":"assistant","time":{{"created":{i}}}}}}}}}"#
        ));
        let text = serde_json::to_string(text).unwrap();
        lines.push(format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"{}","messageID":"{message}","sessionID":"{SESSION}","type":"text","text":{text},"time":{{"start":{}}}}}}}}}"#,
            part_id(i),
            1_000 + i
        ));
    }
    archive_session(archive, words_box(), &lines.join("\n"));
}

/// The cases whose query finds its text where it should not, or misses it.
fn wrong(archive: &mut dyn Engine) -> Vec<String> {
    let first_of = |text: &str| CASES.iter().position(|(t, _, _)| *t == text).unwrap();
    let mut out = Vec::new();
    for (text, query, found) in CASES {
        let mut q = Query::new(query);
        q.limit = 100;
        let hits = archive
            .search(&q)
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let wanted = part_id(first_of(text));
        let got = hits.iter().any(|h| h.part_id.as_deref() == Some(&wanted));
        if got != *found {
            out.push(format!(
                "{query:?} in {text:?}: found {got}, should be {found}"
            ));
        }
    }
    out
}

/// Every case of the table, on a new archive at `setting`.
fn the_table_holds(setting: Setting) {
    let mut archive = setting.open().unwrap().unwrap();
    archived(&mut *archive);
    let wrong = wrong(&mut *archive);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_table_of_words_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    the_table_holds(Setting::Sqlite(dir.path().join("archive.db")));
}

#[test]
fn the_table_of_words_on_postgres() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    the_table_holds(Setting::Postgres(pg.database("words")));
}

/// An SQLite archive of one part that says "cargo build" and, after it,
/// `apart` newer parts that hold the two words apart.
pub(crate) fn apart_archive(dir: &std::path::Path, apart: usize) -> Box<dyn Engine> {
    let mut archive = Setting::Sqlite(dir.join("archive.db"))
        .open()
        .unwrap()
        .unwrap();
    let mut lines = vec![
        r#"{"type":"session.updated","properties":{"info":{"id":"ses_apart","title":"Apart","directory":"/w","time":{"created":1,"updated":2}}}}"#.to_string(),
        r#"{"type":"message.updated","properties":{"info":{"id":"msg_apart","sessionID":"ses_apart","role":"assistant","time":{"created":1}}}}"#.to_string(),
    ];
    let part = |i: usize, text: &str| {
        format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_apart{i:05}","messageID":"msg_apart","sessionID":"ses_apart","type":"text","text":"{text}","time":{{"start":{}}}}}}}}}"#,
            PART_ZERO_MS + i as i64 * 1000
        )
    };
    lines.push(part(0, "then cargo build finished"));
    for i in 1..=apart {
        lines.push(part(i, "build the cargo crate"));
    }
    archive_session(&mut *archive, words_box(), &lines.join("\n"));
    archive
}

/// When `apart_archive`'s first part happened.
pub(crate) const PART_ZERO_MS: i64 = 1_700_000_000_000;

/// SQLite's index keeps no positions: a phrase's candidates (every part
/// holding its words) are read in rounds. Three hundred newer parts hold
/// "cargo" and "build" apart; the one that says "cargo build", older than
/// them all, is still found, and a phrase none holds finds nothing.
#[test]
fn a_phrase_is_found_past_rounds_of_parts_that_hold_its_words_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = apart_archive(dir.path(), 300);
    let mut found = |text: &str| -> Vec<Option<String>> {
        let found = archive.find(&Query::new(text)).unwrap();
        assert_eq!(found.unchecked_before, None, "{text}: all searched");
        found.hits.into_iter().map(|h| h.part_id).collect()
    };
    assert_eq!(
        found("\"cargo build\""),
        [Some("prt_apart00000".to_string())]
    );
    assert_eq!(
        found("cargo build").len(),
        50,
        "the words alone: every part"
    );
    assert!(found("\"crate cargo\"").is_empty());
}

/// Past the most parts one search reads for a phrase (20,000), it says
/// how far back it searched rather than let nothing found mean nowhere;
/// a search before that time finds the older part.
#[test]
fn a_phrase_past_the_parts_one_search_reads_says_how_far_back_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let apart = 20_100;
    let mut archive = apart_archive(dir.path(), apart);
    let found = archive.find(&Query::new("\"cargo build\"")).unwrap();
    assert!(found.hits.is_empty(), "{:?}", found.hits.first());
    let before = found.unchecked_before.expect("says it stopped");
    // The newest 20,000 parts were read; the older ones not.
    let oldest_read = PART_ZERO_MS + (apart as i64 - 19_999) * 1000;
    assert!(
        before > PART_ZERO_MS && before <= oldest_read + 1000,
        "{before}"
    );
    let mut q = Query::new("\"cargo build\"");
    q.until = Some(before);
    let older = archive.find(&q).unwrap();
    let ids: Vec<Option<String>> = older.hits.into_iter().map(|h| h.part_id).collect();
    assert_eq!(ids, [Some("prt_apart00000".to_string())]);
    assert_eq!(older.unchecked_before, None);
    // Words, not a phrase: no bound, nothing to say.
    let words = archive.find(&Query::new("cargo build")).unwrap();
    assert_eq!((words.hits.len(), words.unchecked_before), (50, None));
}
