//! Secrets kept out of what leaves the machine (#40): a session with 36
//! planted secrets of 19 kinds, in its title, user and assistant text (the
//! latter streamed in pieces), a bash command and output, a file read and
//! one written. In a team archive (PostgreSQL) none is in `pg_dump`, in
//! what the archive gives back, nor found by search, and each session says
//! how many were redacted by which rule; `archive export`, `export` and
//! `Y` redact by default, `--no-redact` keeps them; the same session with
//! look-alikes (git SHAs, UUIDs, base64 images, lock files' hashes, words
//! beside `key` and `token`) loses nothing.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::postgres as postgres_support;
use crate::support::secrets::{self, Planted};

fn ocview(archive: &str, args: &[&str]) -> Output {
    crate::support::succeeded(
        Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(args)
            .args(["--archive", archive])
            .env_remove("OCVIEW_ARCHIVE"),
    )
}

/// The planted secrets `text` still holds.
fn leaked<'a>(text: &str, planted: &'a [Planted]) -> Vec<&'a str> {
    planted
        .iter()
        .filter(|p| text.contains(&p.value))
        .map(|p| p.kind)
        .collect()
}

fn recording(dir: &Path, text: &str) -> String {
    let path = dir.join("session.jsonl");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn no_secret_reaches_the_team_archive() {
    let Some(pg) = postgres_support::Postgres::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = secrets::with_secrets();
    assert!(planted.len() >= 30);
    let kinds: std::collections::HashSet<&str> = planted.iter().map(|p| p.kind).collect();
    assert!(kinds.len() >= 15, "{kinds:?}");
    assert_eq!(leaked(&text, &planted).len(), planted.len(), "all planted");
    let file = recording(dir.path(), &text);
    let url = pg.database("team");
    ocview(&url, &["archive", "import", &file]);

    // The database as a backup holds it.
    let dump = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$(ls -d /usr/lib/postgresql/*/bin | tail -1)/pg_dump\" -h 127.0.0.1 -p {} -U postgres team",
            pg.port
        ))
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains("[REDACTED:"), "the dump holds the session");
    assert_eq!(leaked(&dump, &planted), Vec::<&str>::new(), "in pg_dump");

    // Everything the archive gives back (its compressed log included),
    // written out as it is kept.
    let kept = ocview(&url, &["archive", "export", "--no-redact", "-"]);
    let kept = String::from_utf8_lossy(&kept.stdout);
    assert!(kept.contains(secrets::SESSION));
    assert_eq!(leaked(&kept, &planted), Vec::<&str>::new(), "in the log");
    assert!(
        !kept.contains("message.part.delta"),
        "a secret streamed in pieces is in no piece: deltas stay home"
    );

    // Searched for, none is found.
    for p in &planted {
        let word = p
            .value
            .split(['.', '-', '_', '/'])
            .next_back()
            .unwrap_or(&p.value);
        // Nothing found exits 1, as grep does.
        let out = Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["search", "--json", word, "--archive", &url])
            .env_remove("OCVIEW_ARCHIVE")
            .output()
            .unwrap();
        let hits: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(hits.as_array().map(Vec::len), Some(0), "{}: {hits}", p.kind);
    }

    // The session says how many, by which rules, and never the values.
    let said = ocview(&url, &["archive", "redactions", secrets::SESSION, "--json"]);
    let said = String::from_utf8_lossy(&said.stdout);
    let rules: Vec<serde_json::Value> = serde_json::from_str(&said).unwrap();
    let total: u64 = rules.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert!(
        total >= planted.len() as u64,
        "{total} of {}: {said}",
        planted.len()
    );
    assert!(rules.len() >= 10, "{said}");
    assert_eq!(leaked(&said, &planted), Vec::<&str>::new());
}

#[test]
fn exports_redact_unless_asked_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = secrets::with_secrets();
    let file = recording(dir.path(), &text);
    // The local archive keeps what it saw (`archive_redact = "shared"`).
    let db = dir.path().join("archive.db").display().to_string();
    ocview(&db, &["archive", "import", &file]);
    let raw = ocview(&db, &["archive", "export", "--no-redact", "-"]);
    assert_eq!(
        leaked(&String::from_utf8_lossy(&raw.stdout), &planted).len(),
        planted.len()
    );
    let out = ocview(&db, &["archive", "export", "-"]);
    let exported = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        leaked(&exported, &planted),
        Vec::<&str>::new(),
        "archive export"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("secrets redacted ("), "{said}");
    // What was exported still plays.
    let back = dir.path().join("back.jsonl");
    std::fs::write(&back, exported.as_bytes()).unwrap();
    let (store, _) = crate::common::replay_file(&back);
    let session = store.session(secrets::SESSION).unwrap();
    assert_eq!(session.messages.len(), 2);

    for format in ["md", "json"] {
        let out = ocview(&db, &["export", &file, "--format", format]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("deploy notes"), "{format}");
        assert_eq!(
            leaked(&text, &planted),
            Vec::<&str>::new(),
            "export {format}"
        );
        if format == "json" {
            serde_json::from_str::<serde_json::Value>(&text).expect("still JSON");
        }
        let kept = ocview(&db, &["export", &file, "--format", format, "--no-redact"]);
        let kept = String::from_utf8_lossy(&kept.stdout);
        // Markdown shows a tool's output cut to its first lines.
        let shown = leaked(&kept, &planted).len();
        assert!(shown * 2 >= planted.len(), "{format} --no-redact: {shown}");
    }
}

#[test]
fn look_alikes_lose_nothing_to_redaction() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, text) = secrets::without_secrets();
    let file = recording(dir.path(), &text);
    let export = |redact: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
        c.args(["export", &file, "--format", "json"]);
        if !redact {
            c.arg("--no-redact");
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    };
    let (exported, kept) = (export(true), export(false));
    // Each line as the JSON export writes it (escaped).
    let shown = |l: &String| {
        let q = serde_json::to_string(l).unwrap();
        q[1..q.len() - 1].to_string()
    };
    assert!(
        lines.iter().all(|l| kept.contains(&shown(l))),
        "the export shows them all"
    );
    let lost: Vec<&String> = lines
        .iter()
        .filter(|l| !exported.contains(&shown(l)))
        .collect();
    let rate = lost.len() as f64 / lines.len() as f64;
    eprintln!(
        "false positives: {} of {} look-alikes ({:.0}%): {lost:?}",
        lost.len(),
        lines.len(),
        rate * 100.0
    );
    assert!(lost.is_empty(), "{lost:?}");
}
