//! When a recording's lines happened. A recording's `t` is milliseconds
//! since it started: an ocview recording says when that was in its header
//! (`started_ms`); one without a header (an older ocview's, a test
//! harness's) is anchored by the first session event that states its own
//! time (`session.created` or `session.updated`, whose `time.updated` is
//! when the server sent it). Lines before that anchor wait for it, a few
//! hundred at most; a file whose `t` is already a date is left as it is.
//! Without this, what the archive dates by the line (prompts, retries,
//! prices) would be dated in January 1970.

use crate::model::Event;
use crate::source::decode::apply::Record;
use crate::source::decode::record::Decoded;

/// A `t` below this (March 1973, in ms) is an offset, not a date.
const OFFSET_BELOW: i64 = 100_000_000_000;

/// Lines held while looking for an anchor; past them, the rest is passed
/// on undated rather than held without bound.
const HOLD_AT_MOST: usize = 512;

pub struct RecordingClock {
    start: Option<i64>,
    /// Still looking for an anchor.
    seeking: bool,
    held: Vec<(u64, Record)>,
}

impl RecordingClock {
    /// `header_start`: the header's `started_ms`, where it has one.
    pub fn new(header_start: Option<i64>) -> RecordingClock {
        RecordingClock {
            start: header_start,
            seeking: header_start.is_none(),
            held: Vec::new(),
        }
    }

    /// Record number `n` in; every record now ready to go on added to
    /// `ready` (in order, each with its number), their times made dates
    /// where known. `ready` is the caller's, kept: no list is made per
    /// record.
    pub fn pass(&mut self, n: u64, mut record: Record, ready: &mut Vec<(u64, Record)>) {
        if self.seeking {
            match offset_and_date(&record) {
                Some((t, _)) if t >= OFFSET_BELOW => self.seeking = false,
                Some((t, Some(date))) => {
                    self.start = Some(date - t);
                    self.seeking = false;
                }
                _ => {}
            }
            if self.seeking && self.held.len() < HOLD_AT_MOST {
                self.held.push((n, record));
                return;
            }
            self.seeking = false;
        }
        self.date(&mut record);
        self.finish(ready);
        ready.push((n, record));
    }

    /// The records still held, added to `ready` (the file ended before an
    /// anchor).
    pub fn finish(&mut self, ready: &mut Vec<(u64, Record)>) {
        let mut held = std::mem::take(&mut self.held);
        for (_, r) in &mut held {
            self.date(r);
        }
        ready.append(&mut held);
    }

    fn date(&self, record: &mut Record) {
        if let (Some(start), Ok(Decoded::Event(env))) = (self.start, &mut record.item)
            && let Some(t) = env.received_ms
            && t < OFFSET_BELOW
        {
            env.received_ms = Some(start.saturating_add(t));
        }
    }
}

/// A record's `t`, and the date its event states of itself, if it does.
fn offset_and_date(record: &Record) -> Option<(i64, Option<i64>)> {
    let Ok(Decoded::Event(env)) = &record.item else {
        return None;
    };
    let t = env.received_ms?;
    let date = match &env.event {
        Event::SessionCreated(info) | Event::SessionUpdated(info) => {
            info.time.updated.or(info.time.created)
        }
        _ => None,
    }
    .filter(|d| *d >= OFFSET_BELOW);
    Some((t, date))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::recording::replay::ReplayReader;

    fn records(text: &str) -> Vec<Record> {
        let mut reader = ReplayReader::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        std::iter::from_fn(|| reader.next_record().unwrap()).collect()
    }

    fn times(clock: &mut RecordingClock, text: &str) -> Vec<(u64, Option<i64>)> {
        let mut out = Vec::new();
        for (i, r) in records(text).into_iter().enumerate() {
            clock.pass(i as u64 + 1, r, &mut out);
        }
        clock.finish(&mut out);
        out.iter().map(|(n, r)| (*n, r.time())).collect()
    }

    const SESSION: &str = r#"{"t": 46, "event": {"type": "session.created", "properties": {"sessionID": "ses_1", "info": {"id": "ses_1", "time": {"created": 1795000000000, "updated": 1795000000000}}}}}"#;
    const IDLE: &str =
        r#"{"t": 2000, "event": {"type": "session.idle", "properties": {"sessionID": "ses_1"}}}"#;
    const CONNECTED: &str = r#"{"t": 24, "event": {"type": "server.connected", "properties": {}}}"#;

    #[test]
    fn a_headerless_recording_is_dated_by_its_first_session_event() {
        let text = [CONNECTED, SESSION, IDLE].join("\n");
        let start = 1_795_000_000_000 - 46;
        assert_eq!(
            times(&mut RecordingClock::new(None), &text),
            vec![
                (1, Some(start + 24)),
                (2, Some(start + 46)),
                (3, Some(start + 2000))
            ]
        );
    }

    #[test]
    fn a_header_dates_every_line_and_dates_stay_dates() {
        let text = [CONNECTED, IDLE].join("\n");
        assert_eq!(
            times(&mut RecordingClock::new(Some(1_000_000_000_000)), &text),
            vec![(1, Some(1_000_000_000_024)), (2, Some(1_000_000_002_000))]
        );
        let dated = IDLE.replace("\"t\": 2000", "\"t\": 1795000000000");
        assert_eq!(
            times(&mut RecordingClock::new(None), &dated),
            vec![(1, Some(1_795_000_000_000))]
        );
    }

    #[test]
    fn without_an_anchor_lines_go_on_undated_and_in_order() {
        let lines: Vec<&str> = std::iter::repeat_n(IDLE, HOLD_AT_MOST + 3).collect();
        let got = times(&mut RecordingClock::new(None), &lines.join("\n"));
        assert_eq!(got.len(), HOLD_AT_MOST + 3);
        assert!(got.windows(2).all(|w| w[0].0 + 1 == w[1].0));
        assert!(got.iter().all(|(_, t)| *t == Some(2000)));
    }
}
