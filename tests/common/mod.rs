//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ocview::model::{NoObserver, ReplyObserver, Store};
use ocview::source::{IngestStats, ReplayReader, ingest};

/// `../shared/fixtures/opencode-1.18.33`, or `$OCVIEW_FIXTURES`.
pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("OCVIEW_FIXTURES") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/opencode-1.18.33")
}

/// Every scenario folder, sorted. Panics when there are none: a test that
/// silently walks nothing would prove nothing.
pub fn scenarios() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixtures at {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("event.jsonl").is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no fixture scenarios in {}", dir.display());
    out
}

pub fn replay_bytes(bytes: &[u8]) -> (Store, IngestStats) {
    replay_with(bytes, &mut NoObserver)
}

pub fn replay_with(bytes: &[u8], obs: &mut dyn ReplyObserver) -> (Store, IngestStats) {
    let mut reader = ReplayReader::new(bytes);
    let mut store = Store::new();
    let stats = ingest(&mut reader, &mut store, obs).expect("in-memory read cannot fail");
    (store, stats)
}

pub fn replay_file(path: &Path) -> (Store, IngestStats) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    replay_bytes(&bytes)
}
