//! What ocview makes is private whatever the umask: the archive and its folder, the log, an export.

use std::path::Path;

/// Under umask 000, what ocview makes is still private: the archive and
/// its folder, an export, the log and its folder.
#[test]
fn files_ocview_makes_are_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("data/archive.db");
    let export = dir.path().join("export.jsonl");
    let state = dir.path().join("state");
    let recording = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode-run.ndjson"
    );
    let run = |args: &[&str]| {
        crate::support::succeeded(
            std::process::Command::new("sh")
                .arg("-c")
                .arg("umask 000 && exec \"$0\" \"$@\"")
                .arg(env!("CARGO_BIN_EXE_ocview"))
                .args(args)
                .env_remove("OCVIEW_ARCHIVE")
                .env("XDG_STATE_HOME", &state),
        );
    };
    let a = archive.to_str().unwrap();
    run(&["archive", "--archive", a, "import", recording]);
    run(&[
        "archive",
        "--archive",
        a,
        "export",
        export.to_str().unwrap(),
    ]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&archive), 0o600);
    assert_eq!(mode(archive.parent().unwrap()), 0o700);
    assert_eq!(mode(&export), 0o600);
    let log = state.join("ocview/ocview.log");
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}
