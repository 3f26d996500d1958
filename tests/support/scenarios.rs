//! The real opencode 1.18.33 scenarios' event streams, and an archive of
//! every one of them built by the binary (`ocview archive import`).

use std::path::{Path, PathBuf};

/// The scenarios' folder.
pub fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-1.18.33")
}

/// An archive of every scenario's event stream, in `dir`.
pub fn archive_of_every_scenario(dir: &Path) -> PathBuf {
    let db = dir.join("archive.db");
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios())
        .unwrap()
        .map(|e| e.unwrap().path().join("event.jsonl"))
        .filter(|f| f.exists())
        .collect();
    files.sort();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .arg("--archive")
        .arg(&db)
        .args(["archive", "import"])
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    db
}
