//! Sources of events: recordings (replay) and, later, a live server.

pub mod address;
pub mod discover;
pub mod durable;
pub mod export_format;
pub mod fleet;
pub mod fleet_watch;
pub mod json_values;
pub mod lines;
pub mod live;
pub mod msg;
pub mod opencode_db;
pub mod playback;
pub mod player;
pub mod record;
pub mod recorder;
pub mod replay;
pub mod sse;
pub mod stats;
pub mod timeline;

pub use lines::MAX_LINE_BYTES;
pub use replay::{Format, ReplayReader, ingest};
pub use stats::{IngestStats, Problem, ProblemKind};

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Open a recording: a path, or `-` for standard input.
pub fn open_input(path: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    if path.as_os_str() == "-" {
        Ok(Box::new(BufReader::with_capacity(256 * 1024, io::stdin())))
    } else {
        let file = File::open(path)?;
        Ok(Box::new(BufReader::with_capacity(256 * 1024, file)))
    }
}
