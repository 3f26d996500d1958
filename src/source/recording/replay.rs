//! The replay source: a recorded stream, read record by record in constant
//! memory and fed through the same reducer as live data.
//!
//! The format is detected from the content: SSE text (`data:` lines) or JSON
//! lines of any shape `record::decode` accepts.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use crate::model::{ReplyObserver, Store};
use crate::source::decode::apply::{Record, apply_record, decode_record};
use crate::source::decode::form::{Format, detect};
use crate::source::decode::json_values::{Piece, ValueCutter};
use crate::source::decode::lines::LineReader;
use crate::source::decode::record::RecordError;
use crate::source::decode::sse::SseDecoder;
use crate::source::decode::stats::IngestStats;

/// The most one value of a JSON-values form may hold: an export document
/// is one value, and a big session's is tens of megabytes.
const MAX_VALUE_BYTES: usize = 4 * crate::source::decode::lines::MAX_LINE_BYTES;

pub struct ReplayReader<R> {
    lines: LineReader<R>,
    format: Option<Format>,
    buf: Vec<u8>,
    sse: SseDecoder,
    frames: Vec<crate::source::decode::sse::SseFrame>,
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
                            crate::source::decode::lines::MAX_LINE_BYTES
                        ))),
                    });
                }
                match form {
                    Format::JsonLines => (!line.trim_ascii().is_empty())
                        .then(|| decode_record(line, info.number, info.terminated)),
                    Format::Sse => {
                        push_sse(sse, frames, queue, line, &info);
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
                None => self.finish_input(),
                Some(Some(record)) => return Ok(Some(record)),
                Some(None) => {}
            }
        }
    }
    /// The input ended: what the value cutter or the SSE decoder still
    /// holds becomes records.
    fn finish_input(&mut self) {
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
            // The last frame lacks its blank line (a capture stopped
            // mid-stream): its data is whole, so it is applied, and the cure
            // is counted.
            let mut record = frame.record();
            if record.item.is_ok() && record.repaired.is_none() {
                record.repaired = Some("last SSE frame had no blank line");
            }
            self.queue.push_back(record);
        }
    }
}

/// One line of SSE text to the decoder, with its real ending (CR, LF and
/// CRLF all end a line in SSE, and a CR the line reader dropped may be the
/// blank line of a frame); the frames it completes are queued.
fn push_sse(
    sse: &mut SseDecoder,
    frames: &mut Vec<crate::source::decode::sse::SseFrame>,
    queue: &mut VecDeque<Record>,
    line: &[u8],
    info: &crate::source::decode::lines::LineInfo,
) {
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
        Err(e) if e.fault == crate::source::decode::record::Fault::Shape => {
            crate::source::decode::export_format::saved_records(&text, line)
        }
        _ => None,
    };
    match saved {
        Some((kind, records)) => {
            match kind {
                crate::source::decode::export_format::Saved::Message if in_array => {
                    refine(format, Format::MessageList)
                }
                crate::source::decode::export_format::Saved::Message => {}
                crate::source::decode::export_format::Saved::Export => {
                    refine(format, Format::Document)
                }
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
