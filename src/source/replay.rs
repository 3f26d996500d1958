//! The replay source: a recorded stream, read record by record in constant
//! memory and fed through the same reducer as live data.
//!
//! The format is detected from the content: SSE text (`data:` lines) or JSON
//! lines of any shape `record::decode` accepts.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use super::json_values::{Piece, ValueCutter};
use super::lines::{LineReader, decode_utf8};
use super::record::{self, Decoded, RecordError};
use super::sse::SseDecoder;
use super::stats::{IngestStats, ProblemKind};
use crate::model::{Outcome, ReplyObserver, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON record per line (bus events, `opencode run --format json`,
    /// ocview recordings, Durable Stream events).
    JsonLines,
    Sse,
    /// A JSON array of records, as editor plugins save recordings.
    EventArray,
    /// `GET /session/:id/message`: an array of `{info, parts}`.
    MessageList,
    /// `opencode export` (`{info, messages}`), alone or in an array.
    Document,
    /// JSON objects one after another, each over several lines (`jq .`).
    PrettyObjects,
}

impl Format {
    /// What the form is called in the dump's summary and in diagnoses.
    pub fn label(self) -> &'static str {
        match self {
            Format::JsonLines => "JSON lines",
            Format::Sse => "SSE text",
            Format::EventArray => "JSON array of events",
            Format::MessageList => "message list (GET /session/:id/message)",
            Format::Document => "opencode export document",
            Format::PrettyObjects => "pretty-printed JSON objects",
        }
    }

    /// Read by cutting JSON values out of the text, not line by line.
    fn is_values(self) -> bool {
        matches!(
            self,
            Format::EventArray | Format::MessageList | Format::Document | Format::PrettyObjects
        )
    }
}

/// The most one value of a JSON-values form may hold: an export document
/// is one value, and a big session's is tens of megabytes.
const MAX_VALUE_BYTES: usize = 4 * super::lines::MAX_LINE_BYTES;

/// One record of a recording, decoded.
#[derive(Debug)]
pub struct Record {
    /// Line number (1-based) of the record, or of an SSE frame's first line.
    pub line: u64,
    /// Set when the record had to be cured before use.
    pub repaired: Option<&'static str>,
    pub item: Result<Decoded, RecordError>,
}

impl Record {
    /// When the record happened (ms since the epoch), if it says.
    pub fn time(&self) -> Option<i64> {
        match &self.item {
            Ok(Decoded::Event(env)) => env.received_ms,
            Ok(Decoded::Run(run)) => run.timestamp,
            Ok(Decoded::Durable(event)) => event.timestamp,
            Ok(Decoded::Message(m)) => m.created,
            _ => None,
        }
    }
}

pub struct ReplayReader<R> {
    lines: LineReader<R>,
    format: Option<Format>,
    buf: Vec<u8>,
    sse: SseDecoder,
    frames: Vec<super::sse::SseFrame>,
    /// Cuts the values of the JSON-values forms.
    values: ValueCutter,
    pieces: Vec<Piece>,
    queue: VecDeque<Record>,
    done: bool,
    /// The line the form was told from.
    detected_at: u64,
}

impl<R: BufRead> ReplayReader<R> {
    pub fn new(inner: R) -> Self {
        ReplayReader {
            lines: LineReader::new(inner),
            format: None,
            buf: Vec::new(),
            sse: SseDecoder::new(),
            frames: Vec::new(),
            values: ValueCutter::new(MAX_VALUE_BYTES),
            pieces: Vec::new(),
            queue: VecDeque::new(),
            done: false,
            detected_at: 0,
        }
    }

    /// The detected format, once the first non-blank line was read (a
    /// JSON-values form is refined by its first record).
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.lines.lines_read()
    }

    /// The next record; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let format = &mut self.format;
            let sse = &mut self.sse;
            let frames = &mut self.frames;
            let queue = &mut self.queue;
            let values = &mut self.values;
            let pieces = &mut self.pieces;
            let detected_at = &mut self.detected_at;
            let step = self.lines.read_with(&mut self.buf, |line, info| {
                // Editors on some systems start a UTF-8 file with a BOM.
                let line = match info.number {
                    1 => line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line),
                    _ => line,
                };
                let form = match *format {
                    Some(f) => f,
                    None => {
                        let trimmed = line.trim_ascii_start();
                        if trimmed.is_empty() {
                            return None;
                        }
                        *detected_at = info.number;
                        *format.insert(detect(trimmed))
                    }
                };
                if info.too_long {
                    return Some(Record {
                        line: info.number,
                        repaired: None,
                        item: Err(RecordError::too_long(format!(
                            "line longer than {} bytes, skipped",
                            super::lines::MAX_LINE_BYTES
                        ))),
                    });
                }
                match form {
                    Format::JsonLines => (!line.trim_ascii().is_empty())
                        .then(|| decode_record(line, info.number, info.terminated)),
                    Format::Sse => {
                        // Give the decoder the line's real ending: CR, LF
                        // and CRLF all end a line in SSE, and a CR the line
                        // reader dropped may be the blank line of a frame.
                        sse.push(line, frames);
                        let ending: &[u8] = match (info.cr, info.terminated) {
                            (true, true) => b"\r\n",
                            (true, false) => b"\r",
                            (false, true) => b"\n",
                            (false, false) => b"",
                        };
                        sse.push(ending, frames);
                        for frame in frames.drain(..) {
                            queue.push_back(frame.record());
                        }
                        None
                    }
                    Format::PrettyObjects
                        if values.value_start() == Some(*detected_at) && whole_object(line) =>
                    {
                        // The first "object" never ended, and a line that is
                        // a whole object comes: JSON lines whose first line
                        // was cut. That line alone is lost.
                        values.reset();
                        *format = Some(Format::JsonLines);
                        queue.push_back(Record {
                            line: *detected_at,
                            repaired: None,
                            item: Err(RecordError::truncated(
                                "truncated: a cut line, the lines after it read one by one",
                            )),
                        });
                        queue.push_back(decode_record(line, info.number, info.terminated));
                        None
                    }
                    _ => {
                        values.push_line(line, info.number, pieces);
                        for piece in pieces.drain(..) {
                            queue.extend(piece_records(piece, format));
                        }
                        None
                    }
                }
            })?;
            match step {
                None => {
                    self.done = true;
                    if self.format.is_some_and(Format::is_values) {
                        self.values.finish(&mut self.pieces);
                        for piece in self.pieces.drain(..) {
                            self.queue.extend(piece_records(piece, &mut self.format));
                        }
                    }
                    if self.format == Some(Format::Sse)
                        && let Some(frame) = self.sse.finish()
                    {
                        // The last frame lacks its blank line (a capture
                        // stopped mid-stream): its data is whole, so it is
                        // applied, and the cure is counted.
                        let mut record = frame.record();
                        if record.item.is_ok() && record.repaired.is_none() {
                            record.repaired = Some("last SSE frame had no blank line");
                        }
                        self.queue.push_back(record);
                    }
                }
                Some(Some(record)) => return Ok(Some(record)),
                Some(None) => {}
            }
        }
    }
}

/// The records one cut value stands for, refining the form by the first
/// value that decodes: an array of `{info, parts}` is a message list, a
/// `{info, messages}` an export document.
fn piece_records(piece: Piece, format: &mut Option<Format>) -> Vec<Record> {
    let error = |line, e| {
        vec![Record {
            line,
            repaired: None,
            item: Err(e),
        }]
    };
    let (line, text, in_array) = match piece {
        Piece::Value {
            line,
            text,
            in_array,
        } => (line, text, in_array),
        Piece::Junk { line, start } => {
            return error(
                line,
                RecordError::not_json(format!("{start:?} cannot start a record")),
            );
        }
        Piece::TooLong { line } => {
            return error(
                line,
                RecordError::too_long(format!(
                    "record longer than {MAX_VALUE_BYTES} bytes, skipped"
                )),
            );
        }
        Piece::Truncated { line } => {
            return error(
                line,
                RecordError::truncated("truncated: the input ends inside this record"),
            );
        }
    };
    let mut record = decode_record(&text, line, true);
    if let Err(e) = &mut record.item {
        e.message = rebase_position(&e.message, line);
    }
    let refine = |format: &mut Option<Format>, to: Format| {
        if matches!(format, Some(Format::EventArray | Format::PrettyObjects)) {
            *format = Some(to);
        }
    };
    let saved = match &record.item {
        Err(e) if e.fault == super::record::Fault::Shape => {
            super::export_format::saved_records(&text, line)
        }
        _ => None,
    };
    match saved {
        Some((kind, records)) => {
            match kind {
                super::export_format::Saved::Message if in_array => {
                    refine(format, Format::MessageList)
                }
                super::export_format::Saved::Message => {}
                super::export_format::Saved::Export => refine(format, Format::Document),
            }
            records
        }
        None => vec![record],
    }
}

impl<R: BufRead> Iterator for ReplayReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// serde counts lines from the start of the value it read; the reader
/// counts them from the start of the input. "at line 3 column 5" of a
/// value that starts on line 40 is line 42 of the input.
fn rebase_position(message: &str, start: u64) -> String {
    const AT: &str = " at line ";
    let Some(at) = message.rfind(AT) else {
        return message.to_string();
    };
    let rest = &message[at + AT.len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[..digits].parse::<u64>() {
        Ok(n) if n > 0 => format!("{}{AT}{}{}", &message[..at], start + n - 1, &rest[digits..]),
        _ => message.to_string(),
    }
}

/// A line that is a whole JSON object by itself, from its first column (a
/// pretty-printed value's inner lines are indented or not whole).
fn whole_object(line: &[u8]) -> bool {
    line.starts_with(b"{\"")
        && serde_json::from_slice::<serde::de::IgnoredAny>(line.trim_ascii_end()).is_ok()
}

/// The form of a recording, from its first non-blank line.
pub(crate) fn detect(first: &[u8]) -> Format {
    const SSE_FIELDS: [&[u8]; 5] = [b"data:", b":", b"event:", b"id:", b"retry:"];
    let compact: Vec<u8> = first
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if SSE_FIELDS.iter().any(|f| first.starts_with(f)) {
        Format::Sse
    } else if compact.starts_with(b"[") {
        Format::EventArray
    } else if [&b"{\"info\":"[..], b"{\"messages\":"]
        .iter()
        .any(|start| compact.starts_with(start))
    {
        Format::Document
    } else if compact.starts_with(b"{") && matches!(compact.last(), Some(b'{' | b'[' | b',')) {
        // `{` alone, or an object whose first line goes on: `jq .` output.
        Format::PrettyObjects
    } else {
        Format::JsonLines
    }
}

/// Decode one JSON record, curing invalid UTF-8 and lone surrogates.
pub fn decode_record(bytes: &[u8], line: u64, terminated: bool) -> Record {
    let (text, lossy) = decode_utf8(bytes);
    let mut repaired = lossy.then_some("invalid UTF-8 replaced");
    let mut item = record::decode(&text);
    if let Err(e) = &item
        && record::is_surrogate_error(e)
        && let Some(fixed) = record::repair_surrogates(&text)
    {
        item = record::decode(&fixed);
        if item.is_ok() {
            repaired = Some("lone UTF-16 surrogate replaced");
        }
    }
    if let Err(e) = &mut item
        && !terminated
    {
        let detail = e.message.strip_prefix("truncated: ").unwrap_or(&e.message);
        *e = RecordError::truncated(format!("truncated last line ({detail})"));
    }
    if let Err(e) = &mut item {
        let mut end = text.len().min(record::RAW_KEPT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        e.raw = Some(text[..end].to_string());
    }
    Record {
        line,
        repaired,
        item,
    }
}

/// Feed every record of a recording to the store, counting as it goes.
pub fn ingest<R: BufRead>(
    reader: &mut ReplayReader<R>,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
) -> io::Result<IngestStats> {
    let mut stats = IngestStats::default();
    while let Some(record) = reader.next_record()? {
        apply_record(record, store, obs, &mut stats);
    }
    stats.form = reader.format().map(Format::label);
    stats.lines = reader.lines_read();
    Ok(stats)
}

/// Apply one record and count the result; the unit every source shares.
pub fn apply_record(
    record: Record,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
    stats: &mut IngestStats,
) -> Option<Outcome> {
    apply_record_tapped(record, store, obs, stats, &mut |_| {})
}

/// `apply_record`, showing `tap` each event before the store takes it
/// (the archive keeps them: every form read becomes these events).
pub fn apply_record_tapped(
    record: Record,
    store: &mut Store,
    obs: &mut dyn ReplyObserver,
    stats: &mut IngestStats,
    tap: &mut dyn FnMut(&crate::model::Envelope),
) -> Option<Outcome> {
    if let Some(why) = record.repaired
        && record.item.is_ok()
    {
        stats.problem(record.line, ProblemKind::Repaired, why);
    }
    let events = match record.item {
        Ok(Decoded::Event(env)) => {
            tap(&env);
            let outcome = store.apply(env, obs);
            stats.count(record.line, &outcome);
            return Some(outcome);
        }
        Ok(Decoded::Skip(why)) => {
            stats.skip(why);
            return None;
        }
        Ok(Decoded::Run(run)) => run_events(*run, store, stats),
        Ok(Decoded::Durable(event)) => super::durable::durable_events(*event, store),
        Ok(Decoded::Message(info)) => message_events(*info, store),
        Err(e) => {
            stats.malformed(record.line, &e);
            return None;
        }
    };
    let mut last = None;
    for env in events {
        tap(&env);
        let outcome = store.apply(env, obs);
        stats.count(record.line, &outcome);
        last = Some(outcome);
    }
    last
}

/// A session a saved form names only by id (a run stream, a message
/// list): announced with what is known, so its messages have a home.
fn announce_session(
    store: &Store,
    id: &str,
    title: &str,
    at: i64,
    out: &mut Vec<crate::model::Envelope>,
) {
    use crate::model::{Envelope, Event, SessionInfo};
    if store.session(id).is_some() {
        return;
    }
    let info =
        serde_json::json!({"id": id, "title": title, "time": {"created": at, "updated": at}});
    if let Ok(raw) = serde_json::value::to_raw_value(&info)
        && let Ok(info) = SessionInfo::from_raw(&raw)
    {
        out.push(Envelope::new(Event::SessionCreated(Box::new(info))));
    }
}

/// A message of a message list: its session first, if not yet known.
fn message_events(info: crate::model::MessageInfo, store: &Store) -> Vec<crate::model::Envelope> {
    use crate::model::{Envelope, Event};
    let mut out = Vec::new();
    let at = info.created.unwrap_or(0);
    announce_session(store, &info.session_id, "saved messages", at, &mut out);
    out.push(Envelope {
        received_ms: info.created,
        ..Envelope::new(Event::MessageUpdated(Box::new(info)))
    });
    out
}

/// The events a line of `opencode run --format json` stands for. It names
/// only the session and the part: the session and the assistant message
/// are announced the first time they are seen, so the part has a home. A
/// line that names no session (older versions name it on the part only,
/// some not at all) goes where its message is, else to the stream's session.
pub(super) fn run_events(
    run: super::record::RunLine,
    store: &Store,
    stats: &mut IngestStats,
) -> Vec<crate::model::Envelope> {
    use crate::model::{Envelope, Event, MessageInfo};
    let mut out = Vec::new();
    let at = run.timestamp.unwrap_or(0);
    let envelope = |event| Envelope {
        received_ms: run.timestamp,
        ..Envelope::new(event)
    };
    let mut part = run.part;
    let session_id = Some(run.session_id)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            part.as_ref()
                .map(|p| p.session_id.clone())
                .filter(|s| !s.is_empty())
        })
        .or_else(|| {
            let message = &part.as_ref()?.message_id;
            store
                .sessions()
                .iter()
                .find(|s| s.message(message).is_some())
                .map(|s| s.info.id.clone())
        })
        .or_else(|| stats.stream_session.clone())
        .or_else(|| {
            // Nothing names a session: one made of the message id, never "".
            part.as_ref().map(|p| format!("ses_run_{}", p.message_id))
        });
    let Some(session_id) = session_id else {
        // An error line naming no session: the stream's error.
        if let Some(error) = run.error {
            out.push(envelope(Event::SessionError {
                session_id: None,
                error,
            }));
        }
        return out;
    };
    stats.stream_session = Some(session_id.clone());
    let mut announced = Vec::new();
    announce_session(store, &session_id, "opencode run", at, &mut announced);
    out.extend(announced.into_iter().map(|e| Envelope {
        received_ms: run.timestamp,
        ..e
    }));
    if let Some(part) = &mut part {
        if part.session_id.is_empty() {
            part.session_id = session_id.clone();
        }
        let known = store
            .session(&session_id)
            .is_some_and(|s| s.message(&part.message_id).is_some());
        if !known {
            let info = serde_json::json!({"id": part.message_id, "sessionID": session_id, "role": "assistant", "time": {"created": at}});
            if let Ok(raw) = serde_json::value::to_raw_value(&info)
                && let Ok(info) = MessageInfo::from_raw(&raw)
            {
                out.push(envelope(Event::MessageUpdated(Box::new(info))));
            }
        }
    }
    if let Some(part) = part {
        out.push(envelope(Event::PartUpdated(Box::new(part))));
    }
    if let Some(error) = run.error {
        out.push(envelope(Event::SessionError {
            session_id: Some(session_id),
            error,
        }));
    }
    out
}
