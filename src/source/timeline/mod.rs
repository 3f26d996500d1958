//! Seeking in a recording without reading it again from the start: one pass
//! indexes every record (its byte range, its play time, what it starts) and
//! keeps a checkpoint of the store every so often; a seek restores the
//! nearest checkpoint at or before the target and applies only the records
//! after it. The recording is read again by byte range, never whole.
//!
//! The timeline does not own the store: the viewer's store is the one that
//! moves, so a seek takes it by `&mut`.
//!
//! JSON-lines recordings only (ocview recordings, bus-event lines, the
//! `/global/event` form, `opencode run --format json`); SSE text and whole
//! documents stream through the plain replay path instead.
//!
//! The play clock that maps a recording's time to the wall clock, shared
//! with the player, is `playback`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

pub mod playback;
mod span;

use playback::{GapCappedTime, ReadingPace};

use span::{Span, TOO_LONG, read_line_capped};

use crate::model::{Envelope, Event, MessageInfo, NoObserver, Store};
use crate::source::decode::apply::{Record, apply_record, run_events};
use crate::source::decode::form::{Format, detect};
use crate::source::decode::record::Decoded;
use crate::source::decode::record::durable::durable_events;
use crate::source::decode::stats::IngestStats;

/// Checkpoints are kept this many times over a recording (at least every
/// `MIN_SPACING` records).
const CHECKPOINTS: usize = 16;
const MIN_SPACING: usize = 1_000;

/// What a record starts or reports, for stepping and for the marks on the
/// status-line timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Marks(u8);

impl Marks {
    /// A part the store had not seen.
    pub const PART: Marks = Marks(1);
    /// A user message the store had not seen: a new turn.
    pub const TURN: Marks = Marks(2);
    /// A permission or a question asked.
    pub const PROMPT: Marks = Marks(4);
    /// A session error, or a record that could not be read.
    pub const ERROR: Marks = Marks(8);

    pub fn contains(self, other: Marks) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    fn insert(&mut self, other: Marks) {
        self.0 |= other.0;
    }
}

/// Where the recording's bytes are: a file read by range, or bytes in memory
/// (the built-in demo).
pub enum Backing {
    File(File),
    Memory(bytes::Bytes),
}

impl Backing {
    fn read_at(&self, buf: &mut Vec<u8>, offset: u64, len: usize) -> io::Result<()> {
        buf.resize(len, 0);
        match self {
            Backing::File(f) => f.read_exact_at(buf, offset),
            Backing::Memory(b) => {
                let start = offset as usize;
                let src = b
                    .get(start..start + len)
                    .ok_or(io::ErrorKind::UnexpectedEof)?;
                buf.copy_from_slice(src);
                Ok(())
            }
        }
    }

    fn reader(&self) -> io::Result<Box<dyn BufRead + '_>> {
        Ok(match self {
            Backing::File(f) => Box::new(BufReader::with_capacity(256 * 1024, f.try_clone()?)),
            Backing::Memory(b) => Box::new(Cursor::new(&b[..])),
        })
    }
}

struct Entry {
    offset: u64,
    /// Bytes, or [`TOO_LONG`] for a line that is skipped.
    len: u32,
    line: u64,
    /// Play time: ms since the first timed record, idle gaps capped.
    at_ms: i64,
    marks: Marks,
}

impl Entry {
    fn too_long(offset: u64, line: u64) -> Entry {
        Entry {
            offset,
            len: TOO_LONG,
            line,
            at_ms: 0,
            marks: Marks::default(),
        }
    }
}

pub struct Timeline {
    backing: Backing,
    entries: Vec<Entry>,
    spacing: usize,
    /// (records applied, the store then, its counters).
    checkpoints: Vec<(usize, Store, IngestStats)>,
    /// Records applied to the store the timeline is driving.
    position: usize,
    /// Whether the last line ended with a newline (else it may be cut).
    last_terminated: bool,
    /// Reads ahead for `next_record`.
    span: Span,
}

/// A freshly indexed recording, and the store it leaves (at the end).
pub struct Opened {
    pub timeline: Timeline,
    pub store: Store,
    pub stats: IngestStats,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opened({} records)", self.timeline.len())
    }
}

#[derive(Debug, Clone, Copy)]
pub struct IndexOptions {
    /// The longest pause between two records kept on the play clock.
    pub max_gap: Duration,
    /// Checkpoint every this many records (default: a sixteenth of the file).
    pub spacing: Option<usize>,
    /// Space new parts at least this far apart on the play clock (the
    /// demo's reading pace); `None` keeps the recorded pace.
    pub reading_step: Option<Duration>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_gap: Duration::from_secs(5),
            spacing: None,
            reading_step: None,
        }
    }
}

impl Timeline {
    /// Index a recording file, ending positioned at its end.
    pub fn open(path: &Path, options: IndexOptions) -> io::Result<Opened> {
        Timeline::index(Backing::File(File::open(path)?), options)
    }

    /// Index a recording. Fails with `Unsupported` when it is not JSON lines.
    pub fn index(backing: Backing, options: IndexOptions) -> io::Result<Opened> {
        let mut entries = Vec::new();
        let mut last_terminated = true;
        {
            let mut reader = backing.reader()?;
            let mut offset = 0u64;
            let mut buf = Vec::new();
            let mut line = 0u64;
            loop {
                buf.clear();
                let (n, too_long) = read_line_capped(&mut reader, &mut buf)?;
                if n == 0 {
                    break;
                }
                line += 1;
                if too_long {
                    // Counted where it stood, never held in memory.
                    entries.push(Entry::too_long(offset, line));
                    offset += n as u64;
                    continue;
                }
                last_terminated = buf.ends_with(b"\n");
                let content = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let content = content.strip_suffix(b"\r").unwrap_or(content);
                let (content, bom) = match content.strip_prefix(b"\xEF\xBB\xBF") {
                    Some(rest) if line == 1 => (rest, 3),
                    _ => (content, 0),
                };
                let blank = content.trim_ascii().is_empty();
                if entries.is_empty()
                    && !blank
                    && detect(content.trim_ascii_start()) != Format::JsonLines
                {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "only JSON-lines recordings can be indexed",
                    ));
                }
                if !blank {
                    entries.push(Entry {
                        offset: offset + bom,
                        len: content.len() as u32,
                        line,
                        at_ms: 0,
                        marks: Marks::default(),
                    });
                }
                offset += n as u64;
            }
            // Drain whatever a reader holds so the file handle is free.
            let _ = reader.read_to_end(&mut Vec::new());
        }
        // What a dump or the status line says about the file as a whole.
        let mut base = IngestStats::default();
        base.form = Some(Format::JsonLines.label());
        base.lines = entries.last().map_or(0, |e| e.line);
        let spacing = options
            .spacing
            .unwrap_or((entries.len() / CHECKPOINTS).max(MIN_SPACING))
            .max(1);
        let mut timeline = Timeline {
            backing,
            entries,
            spacing,
            checkpoints: vec![(0, Store::new(), base.clone())],
            position: 0,
            last_terminated,
            span: Span::default(),
        };
        let mut store = Store::new();
        let mut stats = base;
        timeline.first_pass(&mut store, &mut stats, options)?;
        Ok(Opened {
            timeline,
            store,
            stats,
        })
    }

    /// Apply every record once: note play times and marks, keep checkpoints.
    fn first_pass(
        &mut self,
        store: &mut Store,
        stats: &mut IngestStats,
        options: IndexOptions,
    ) -> io::Result<()> {
        let mut play_time = GapCappedTime::new(options.max_gap);
        let mut reading = options.reading_step.map(ReadingPace::new);
        let mut clock = 0i64;
        for i in 0..self.entries.len() {
            let record = self.read(i)?;
            if let Some(t) = record.time() {
                clock = play_time.at(t);
            }
            let marks = marks_of(&record, store, stats);
            apply_record(record, store, &mut NoObserver, stats);
            let at = match reading.as_mut() {
                Some(pace) => pace.at(
                    clock,
                    marks.contains(Marks::PART),
                    marks.contains(Marks::TURN),
                ),
                None => clock,
            };
            let e = &mut self.entries[i];
            e.at_ms = at;
            e.marks = marks;
            self.position = i + 1;
            if self.position.is_multiple_of(self.spacing) && self.position < self.entries.len() {
                self.checkpoints
                    .push((self.position, store.clone(), stats.clone()));
            }
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records applied so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// How many checkpoints were kept (besides the empty one).
    pub fn checkpoints(&self) -> usize {
        self.checkpoints.len() - 1
    }

    /// The store as a checkpoint kept it after exactly `position` records.
    /// A viewer playing forward takes it over on reaching that position:
    /// the same state, but sharing its sessions with the checkpoints rather
    /// than holding a second copy of everything played so far.
    pub fn checkpoint_at(&self, position: usize) -> Option<&Store> {
        let i = self
            .checkpoints
            .binary_search_by_key(&position, |(at, _, _)| *at)
            .ok()?;
        Some(&self.checkpoints[i].1)
    }

    /// The play time of the whole recording, ms.
    pub fn duration_ms(&self) -> i64 {
        self.entries.last().map_or(0, |e| e.at_ms)
    }

    /// Play time of record `i` (0-based), ms.
    pub fn time_of(&self, i: usize) -> Option<i64> {
        self.entries.get(i).map(|e| e.at_ms)
    }

    pub fn marks_of(&self, i: usize) -> Marks {
        self.entries.get(i).map_or(Marks::default(), |e| e.marks)
    }

    /// How many records are due by play time `ms`.
    pub fn count_due_by(&self, ms: i64) -> usize {
        self.entries.partition_point(|e| e.at_ms <= ms)
    }

    /// Play times of the records carrying `mark`, for the timeline marks.
    pub fn times_marked(&self, mark: Marks) -> impl Iterator<Item = i64> + '_ {
        self.entries
            .iter()
            .filter(move |e| e.marks.contains(mark))
            .map(|e| e.at_ms)
    }

    /// The next record to apply, moving the position past it. The caller
    /// applies it (the viewer sends it through the same path as live data).
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        if self.position >= self.entries.len() {
            return Ok(None);
        }
        let record = self.read(self.position)?;
        self.position += 1;
        Ok(Some(record))
    }

    /// Record `i`, decoded. Only the very last may be cut short.
    fn read(&mut self, i: usize) -> io::Result<Record> {
        let terminated = self.last_terminated || i + 1 < self.entries.len();
        self.span
            .record(&self.backing, &self.entries, i, terminated)
    }

    /// Put `store` where it is after the first `target` records. `store`
    /// must be the state at the current position.
    pub fn seek(
        &mut self,
        target: usize,
        store: &mut Store,
        stats: &mut IngestStats,
    ) -> io::Result<()> {
        let target = target.min(self.entries.len());
        if target < self.position || target - self.position > self.spacing {
            let (at, saved, saved_stats) = self
                .checkpoints
                .iter()
                .rev()
                .find(|(at, _, _)| *at <= target)
                .expect("the empty checkpoint is always there");
            if *at > self.position || target < self.position {
                *store = saved.clone();
                *stats = saved_stats.clone();
                self.position = *at;
            }
        }
        while self.position < target {
            let record = self.read(self.position)?;
            apply_record(record, store, &mut NoObserver, stats);
            self.position += 1;
        }
        Ok(())
    }

    /// The position after the next record carrying `mark` is wholly
    /// applied: just before the one after it starts (or the end).
    pub fn next_boundary(&self, mark: Marks) -> usize {
        let after = |from: usize| {
            (from..self.entries.len())
                .find(|&i| self.entries[i].marks.contains(mark))
                .unwrap_or(self.entries.len())
        };
        // From a boundary, take in the whole unit that starts here; from
        // inside a unit, finish it; before the first, take the first too.
        let len = self.entries.len();
        let here = self.position;
        if here < len && self.entries[here].marks.contains(mark) {
            after(here + 1)
        } else if (0..here).any(|i| self.entries[i].marks.contains(mark)) {
            after(here)
        } else {
            match after(here) {
                first if first < len => after(first + 1),
                _ => len,
            }
        }
    }

    /// The position just before the latest unit carrying `mark` started.
    pub fn prev_boundary(&self, mark: Marks) -> usize {
        (0..self.position)
            .rev()
            .find(|&i| self.entries[i].marks.contains(mark))
            .unwrap_or(0)
    }
}

/// What `record` starts, judged against the store before it is applied.
fn marks_of(record: &Record, store: &Store, stats: &IngestStats) -> Marks {
    match &record.item {
        Err(_) => Marks::ERROR,
        Ok(Decoded::Event(env)) => event_marks(&env.event, store),
        Ok(Decoded::Run(run)) => {
            // A copy of the stream's state: judging must not change it.
            let mut copy = IngestStats::default();
            copy.stream_session = stats.stream_session.clone();
            let mut marks = mapped_marks(run_events((**run).clone(), store, &mut copy), store);
            if run.error.is_some() {
                marks.insert(Marks::ERROR);
            }
            marks
        }
        // Judged on the events they map to: one line may start a turn, a
        // part and a prompt at once.
        Ok(Decoded::Durable(event)) => {
            mapped_marks(durable_events((**event).clone(), store), store)
        }
        Ok(Decoded::Message(info)) => {
            let event = crate::model::Event::MessageUpdated(info.clone());
            event_marks(&event, store)
        }
        Ok(Decoded::Skip(_)) => Marks::default(),
    }
}

fn is_new_part(store: &Store, sid: &str, mid: &str, pid: &str) -> bool {
    store
        .session(sid)
        .and_then(|s| s.message(mid))
        .is_none_or(|m| m.part(pid).is_none())
}

fn mapped_marks(events: Vec<Envelope>, store: &Store) -> Marks {
    events.iter().fold(Marks::default(), |mut marks, env| {
        marks.insert(event_marks(&env.event, store));
        marks
    })
}

/// A message the store has not seen that the turn view shows as a new turn:
/// a user message, or an assistant message answering no user message the
/// store knows (`opencode run` output has none).
fn starts_turn(store: &Store, info: &MessageInfo) -> bool {
    let session = store.session(&info.session_id);
    if session.is_some_and(|s| s.message(&info.id).is_some()) {
        return false;
    }
    info.is_user()
        || info
            .parent_id
            .as_deref()
            .is_none_or(|p| session.and_then(|s| s.message(p)).is_none())
}

fn event_marks(event: &Event, store: &Store) -> Marks {
    match event {
        Event::PartUpdated(p) if is_new_part(store, &p.session_id, &p.message_id, &p.id) => {
            Marks::PART
        }
        Event::PartDelta {
            session_id,
            message_id,
            part_id,
            ..
        } if is_new_part(store, session_id, message_id, part_id) => Marks::PART,
        Event::MessageUpdated(info) if starts_turn(store, info) => Marks::TURN,
        Event::PermissionAsked(_) | Event::QuestionAsked(_) => Marks::PROMPT,
        Event::SessionError { .. } => Marks::ERROR,
        _ => Marks::default(),
    }
}
