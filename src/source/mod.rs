//! Where events come from, by flow:
//! - `decode`: text to records (a line, an SSE frame, an export document,
//!   a Durable Stream event, a run line) and a record into the store;
//! - `recording`: files and standard input read as they were written or
//!   at a pace (replay, the player, the seekable timeline), and recording
//!   a live stream to a file;
//! - `live`: opencode servers (the REST client, the SSE stream and its
//!   sync, paging, replies), fleets of them, and finding them;
//! - `opencode_db`: opencode's own database, with no server running.
//!
//! Every source sends the app the same messages (`msg::SourceMsg`).

pub mod decode;
pub mod list_member;
pub mod live;
pub mod msg;
pub mod opencode_db;
pub mod recording;
pub mod timeline;

pub use decode::form::Format;
pub use decode::lines::MAX_LINE_BYTES;
pub use decode::stats::{IngestStats, Problem, ProblemKind};
pub use recording::replay::{ReplayReader, ingest};

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
