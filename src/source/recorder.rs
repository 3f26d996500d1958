//! Recording a live stream: every event received, verbatim, with its
//! receive time, one JSON object per line after a header line. Each line is
//! written whole with one write and reaches the file at once, so a crash or
//! `kill -9` loses at most the line being written and the file stays
//! replayable. Recordings can hold secrets: they are created mode 0600.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::sse::{SseDecoder, SseFrame};

/// The recording format's version, in the header line.
pub const FORMAT_VERSION: u32 = 1;

pub struct Recorder {
    file: File,
    start: Instant,
    decoder: SseDecoder,
    frames: Vec<SseFrame>,
    line: Vec<u8>,
    /// Events written.
    pub events: u64,
}

impl Recorder {
    /// Open (or append to) a recording and write its header line.
    pub fn create(
        path: &Path,
        server: &str,
        opencode_version: Option<&str>,
    ) -> io::Result<Recorder> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let header = json!({"ocview_recording": FORMAT_VERSION, "server": server, "opencode": opencode_version, "started_ms": now_ms});
        file.write_all(format!("{header}\n").as_bytes())?;
        Ok(Recorder {
            file,
            start: Instant::now(),
            decoder: SseDecoder::new(),
            frames: Vec::new(),
            line: Vec::new(),
            events: 0,
        })
    }

    /// Feed raw stream bytes; every complete event is written at once.
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.decoder.push(bytes, &mut self.frames);
        let frames = std::mem::take(&mut self.frames);
        for frame in &frames {
            self.write_event(&frame.data)?;
        }
        Ok(())
    }

    /// One event (its JSON text as received) as one line, in one write.
    pub fn write_event(&mut self, data: &str) -> io::Result<()> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let t = self.start.elapsed().as_millis() as u64;
        self.line.clear();
        // Verbatim when it is one line of JSON (the server's case); else
        // kept as a string so the line stays one JSON object.
        if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() && !data.contains('\n') {
            writeln!(self.line, "{{\"t\":{t},\"event\":{data}}}")?;
        } else {
            writeln!(self.line, "{}", json!({"t": t, "raw": data}))?;
        }
        self.file.write_all(&self.line)?;
        self.events += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn lines_are_whole_and_the_file_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let mut r = Recorder::create(&path, "http://x", Some("1.18.33")).unwrap();
        // A frame split across chunks is written once, whole.
        r.push(b"data: {\"type\":\"server.connected\",").unwrap();
        assert_eq!(r.events, 0);
        r.push(b"\"properties\":{}}\n\n: comment\n\n").unwrap();
        assert_eq!(r.events, 1);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("\"ocview_recording\":1"));
        assert!(lines[1].starts_with("{\"t\":") && lines[1].ends_with("\"properties\":{}}}"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
