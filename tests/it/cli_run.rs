//! Commands run in process (`ocview::cli::run::run`), exactly as the
//! binary runs them after parsing: the archive each run uses is the one
//! its own flags name, not one left behind by an earlier run.

use std::process::ExitCode;

use clap::Parser;
use ocview::archive::Setting;
use ocview::cli::Cli;
use ocview::cli::run::run;

/// A run of `ocview ARGS…` with an empty config of its own.
fn ocview(config: &std::path::Path, args: &[&str]) -> ExitCode {
    let mut argv = vec!["ocview", "--config", config.to_str().unwrap()];
    argv.extend_from_slice(args);
    run(Cli::parse_from(argv))
}

#[test]
fn each_run_keeps_to_the_archive_its_own_flags_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    );
    let first = dir.path().join("first.db");
    let second = dir.path().join("second.db");
    for db in [&first, &second] {
        let code = ocview(
            &config,
            &[
                "--archive",
                db.to_str().unwrap(),
                "archive",
                "import",
                fixture,
            ],
        );
        assert_eq!(code, ExitCode::SUCCESS, "{}", db.display());
    }
    for db in [&first, &second] {
        let mut engine = Setting::Sqlite(db.clone()).open().unwrap().unwrap();
        let counts = engine.counts().unwrap();
        assert_eq!(counts.sessions, 1, "{}: {counts:?}", db.display());
        assert!(counts.parts > 0, "{}: {counts:?}", db.display());
    }
    // `--no-archive` in the same process: nothing is opened or written.
    let code = ocview(&config, &["--no-archive", "archive", "stats"]);
    assert_ne!(code, ExitCode::SUCCESS);
}

#[test]
fn a_mistake_in_the_call_exits_2_and_a_missing_file_1() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let recording = dir.path().join("r.jsonl");
    std::fs::write(&recording, "").unwrap();
    let r = recording.to_str().unwrap();
    let usage = ocview(
        &config,
        &["--no-archive", "replay", r, "--dump", "--session", "ses_x"],
    );
    assert_eq!(usage, ExitCode::from(2));
    let missing = dir.path().join("missing.jsonl");
    let failed = ocview(
        &config,
        &[
            "--no-archive",
            "replay",
            missing.to_str().unwrap(),
            "--dump",
        ],
    );
    assert_eq!(failed, ExitCode::FAILURE);
    // Two servers with a dump flag: a usage error, said before any network.
    let fleet_dump = ocview(
        &config,
        &[
            "--no-archive",
            "attach",
            "http://127.0.0.1:9",
            "http://127.0.0.1:10",
            "--dump-when-idle",
        ],
    );
    assert_eq!(fleet_dump, ExitCode::from(2));
}
