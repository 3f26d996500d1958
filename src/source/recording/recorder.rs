//! Recording a live stream: every event received, verbatim, with its
//! receive time, one JSON object per line after a header line. Each line is
//! written whole with one write and reaches the file at once, so a crash or
//! `kill -9` loses at most the line being written and the file stays
//! replayable. Recordings can hold secrets: they are created mode 0600.
//! The file is created (or appended to) only when the first event is to be
//! written: a server that cannot be reached leaves no file behind.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::source::decode::sse::{SseDecoder, SseFrame};

/// The recording format's version, in the header line.
pub const FORMAT_VERSION: u32 = 1;

/// How a notice saying the recording stopped (a write failed) begins.
pub const STOPPED: &str = "recording stopped: ";

/// What a live source hands the recorder, in the order it happened.
pub enum Feed {
    /// A new connection: a frame the last one cut off is dropped, not glued
    /// to the first event of this one.
    Connected,
    /// Bytes of the event stream, as received.
    Stream(bytes::Bytes),
    /// State loaded over REST, as the bus event that says the same (what
    /// the viewer applied): written with `"from":"rest"`, so a recording
    /// started on a busy server replays to what the viewer showed.
    Loaded(serde_json::Value),
    /// What one server of a fleet received: its lines name it.
    From(std::sync::Arc<str>, Box<Feed>),
}

pub struct Recorder {
    path: PathBuf,
    /// Open once the first event is written.
    file: Option<File>,
    /// The header line, written before the first event.
    header: String,
    start: Instant,
    decoder: SseDecoder,
    /// A fleet's servers each send a stream of their own.
    fleet_decoders: std::collections::HashMap<std::sync::Arc<str>, SseDecoder>,
    /// The server the line being written comes from (a fleet).
    server: Option<std::sync::Arc<str>>,
    frames: Vec<SseFrame>,
    line: Vec<u8>,
    /// Events written.
    pub events: u64,
    /// Bytes written (the header included).
    pub bytes: u64,
}

impl Recorder {
    /// Prepare a recording to `path` (appended to when it exists). Checks
    /// now that the file can be written, but creates it only when the first
    /// event comes.
    pub fn create(
        path: &Path,
        server: &str,
        opencode_version: Option<&str>,
    ) -> io::Result<Recorder> {
        probe(path)?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let header = json!({"ocview_recording": FORMAT_VERSION, "server": server, "opencode": opencode_version, "started_ms": now_ms});
        Ok(Recorder {
            path: path.to_path_buf(),
            file: None,
            header: format!("{header}\n"),
            start: Instant::now(),
            decoder: SseDecoder::new(),
            fleet_decoders: Default::default(),
            server: None,
            frames: Vec::new(),
            line: Vec::new(),
            events: 0,
            bytes: 0,
        })
    }

    /// The file, opened (and its header written) on first use.
    fn file(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)?;
            // `mode` applies only to a new file: one the person named that
            // exists keeps its mode (never changed by ocview).
            file.write_all(self.header.as_bytes())?;
            self.bytes += self.header.len() as u64;
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    pub fn feed(&mut self, feed: Feed) -> io::Result<()> {
        match feed {
            Feed::Connected => {
                self.decoder = SseDecoder::new();
                Ok(())
            }
            Feed::Stream(bytes) => self.push(&bytes),
            Feed::Loaded(event) => {
                let t = self.start.elapsed().as_millis() as u64;
                self.line.clear();
                let line = match &self.server {
                    Some(server) => {
                        json!({"t": t, "server": &**server, "event": event, "from": "rest"})
                    }
                    None => json!({"t": t, "event": event, "from": "rest"}),
                };
                writeln!(self.line, "{line}")?;
                self.write_line()
            }
            Feed::From(server, feed) => {
                // Each server's stream is decoded apart: frames of two
                // servers never mix.
                let own = self.fleet_decoders.remove(&server).unwrap_or_default();
                let fleet = std::mem::replace(&mut self.decoder, own);
                self.server = Some(server.clone());
                let written = self.feed(*feed);
                self.server = None;
                let own = std::mem::replace(&mut self.decoder, fleet);
                self.fleet_decoders.insert(server, own);
                written
            }
        }
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
        let server = match &self.server {
            Some(key) => format!(",\"server\":{}", json!(&**key)),
            None => String::new(),
        };
        if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() && !data.contains('\n') {
            writeln!(self.line, "{{\"t\":{t}{server},\"event\":{data}}}")?;
        } else {
            let raw = match &self.server {
                Some(key) => json!({"t": t, "server": &**key, "raw": data}),
                None => json!({"t": t, "raw": data}),
            };
            writeln!(self.line, "{raw}")?;
        }
        self.write_line()
    }

    /// `self.line`, whole, in one write.
    fn write_line(&mut self) -> io::Result<()> {
        let line = std::mem::take(&mut self.line);
        let written = self.file().and_then(|f| f.write_all(&line));
        self.line = line;
        written?;
        self.events += 1;
        self.bytes += self.line.len() as u64;
        Ok(())
    }
}

/// Can `path` be written? Opened for appending when it exists; else
/// created and removed at once, so nothing is left behind.
fn probe(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    match OpenOptions::new().append(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)?;
            std::fs::remove_file(path)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn lines_are_whole_and_a_named_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        // A file the person named that is there already is appended to,
        // its mode left as they set it (a new one is private: e2e_record).
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut r = Recorder::create(&path, "http://x", Some("1.18.33")).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"",
            "nothing before the first event"
        );
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
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn no_file_until_the_first_event() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let mut r = Recorder::create(&path, "http://x", None).unwrap();
        assert!(!path.exists(), "checked, not created");
        r.feed(Feed::Connected).unwrap();
        assert!(!path.exists(), "a connection alone writes nothing");
        drop(r);
        assert!(!path.exists());
        let e = Recorder::create(dir.path(), "http://x", None)
            .err()
            .unwrap();
        assert!(e.to_string().contains("directory"), "{e}");
        let e = Recorder::create(&dir.path().join("no/such/dir"), "http://x", None)
            .err()
            .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_full_disk_is_an_error() {
        let mut r = Recorder::create(Path::new("/dev/full"), "http://x", None).unwrap();
        let e = r
            .push(b"data: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}");
        assert_eq!(r.events, 0);
    }

    #[test]
    fn a_new_connection_drops_a_cut_frame_and_loaded_state_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let mut r = Recorder::create(&path, "http://x", None).unwrap();
        r.feed(Feed::Connected).unwrap();
        let info = json!({"id": "ses_a", "title": "loaded"});
        let loaded = json!({"type": "session.updated", "properties": {"info": info}});
        r.feed(Feed::Loaded(loaded)).unwrap();
        // The connection ends mid-frame; the next one starts clean.
        r.feed(Feed::Stream(bytes::Bytes::from_static(
            b"data: {\"type\":\"sess",
        )))
        .unwrap();
        r.feed(Feed::Connected).unwrap();
        let connected = b"data: {\"type\":\"server.connected\",\"properties\":{}}\n\n";
        r.feed(Feed::Stream(bytes::Bytes::from_static(connected)))
            .unwrap();
        assert_eq!(r.events, 2);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].contains(r#""from":"rest""#), "{}", lines[1]);
        assert!(lines[2].contains("server.connected"), "{}", lines[2]);
        let mut store = crate::model::Store::new();
        let mut reader = crate::source::ReplayReader::new(text.as_bytes());
        let stats =
            crate::source::ingest(&mut reader, &mut store, &mut crate::model::NoObserver).unwrap();
        assert_eq!(stats.malformed, 0);
        assert_eq!(store.session("ses_a").unwrap().title(), "loaded");
    }

    #[test]
    fn a_fleets_lines_name_their_server_and_replay_scoped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.jsonl");
        let mut r = Recorder::create(&path, "http://a:1 http://b:2", None).unwrap();
        let from = |key: &str, feed: Feed| Feed::From(key.into(), Box::new(feed));
        let created = |id: &str| {
            format!(
                "data: {{\"type\":\"session.created\",\"properties\":{{\"info\":{{\"id\":\"{id}\",\"title\":\"t\"}}}}}}\n\n"
            )
        };
        // Two servers' frames, each cut in two and interleaved: each
        // server's stream is decoded on its own.
        let (a, b) = (created("ses_same"), created("ses_same"));
        r.feed(from(
            "a:1",
            Feed::Stream(a.as_bytes()[..20].to_vec().into()),
        ))
        .unwrap();
        r.feed(from(
            "b:2",
            Feed::Stream(b.as_bytes()[..30].to_vec().into()),
        ))
        .unwrap();
        r.feed(from(
            "a:1",
            Feed::Stream(a.as_bytes()[20..].to_vec().into()),
        ))
        .unwrap();
        r.feed(from(
            "b:2",
            Feed::Stream(b.as_bytes()[30..].to_vec().into()),
        ))
        .unwrap();
        let report =
            json!({"type": "ocview.server", "properties": {"url": "http://b:2", "state": "gone"}});
        r.feed(from("b:2", Feed::Loaded(report))).unwrap();
        assert_eq!(r.events, 3);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains(r#""server":"a:1""#), "{}", lines[1]);
        assert!(lines[2].contains(r#""server":"b:2""#), "{}", lines[2]);
        let mut store = crate::model::Store::new();
        let mut reader = crate::source::ReplayReader::new(text.as_bytes());
        let stats =
            crate::source::ingest(&mut reader, &mut store, &mut crate::model::NoObserver).unwrap();
        assert_eq!(stats.malformed, 0);
        // One id on two servers: two sessions.
        assert!(store.session("ses_same@a:1").is_some());
        assert!(store.session("ses_same@b:2").is_some());
        assert_eq!(store.servers().len(), 1);
        assert_eq!(
            store.servers()[0].state,
            crate::model::store::fleet::ServerState::Gone
        );
    }
}
