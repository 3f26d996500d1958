//! When a streaming part's row is written, live. A part that grows by
//! deltas would otherwise be written again (and its index document taken
//! out and tokenized again) at every batch: for a long answer, dozens of
//! rewrites of a growing text. Its deltas still go to the event log with
//! every batch (a crash loses nothing a replay cannot rebuild); its row
//! waits until it stops changing: its own update (opencode sends the full
//! text when the part ends), its message's update, its session going idle
//! or failing, `ROW_EVERY` after it started waiting (so search finds a
//! streaming answer's words within that), or quitting.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The longest a streaming part's newer state waits for its row.
pub const ROW_EVERY: Duration = Duration::from_secs(5);

/// (session, message, part).
pub type PartKey = (String, String, String);

/// Parts grown by deltas whose rows wait, each since when.
#[derive(Default)]
pub struct Waiting {
    since: BTreeMap<PartKey, Instant>,
}

/// What a batch says besides its deltas: which rows it writes anyway, and
/// which messages and sessions settled.
pub struct Settled<'a> {
    pub parts: &'a BTreeSet<PartKey>,
    pub messages: &'a BTreeSet<(String, String)>,
    pub sessions: &'a BTreeSet<String>,
}

impl Waiting {
    /// At a batch taken at `now`: `streamed` (the parts that only grew
    /// since the last batch) start waiting; the parts whose wait is over
    /// are returned, to be written with this batch.
    pub fn due(
        &mut self,
        streamed: BTreeSet<PartKey>,
        settled: &Settled<'_>,
        now: Instant,
    ) -> Vec<PartKey> {
        for key in streamed {
            self.since.entry(key).or_insert(now);
        }
        let mut out = Vec::new();
        self.since.retain(|key, since| {
            let (sid, mid, _) = key;
            let over = now >= *since + ROW_EVERY
                || settled.parts.contains(key)
                || settled.sessions.contains(sid)
                || settled.messages.contains(&(sid.clone(), mid.clone()));
            if over {
                out.push(key.clone());
            }
            !over
        });
        out
    }

    /// Every waiting part, now (quitting).
    pub fn all(&mut self) -> Vec<PartKey> {
        std::mem::take(&mut self.since).into_keys().collect()
    }

    /// Whether a part of this message waits for its row.
    pub fn holds_message(&self, session_id: &str, message_id: &str) -> bool {
        self.since
            .keys()
            .any(|(sid, mid, _)| sid == session_id && mid == message_id)
    }

    /// When the first waiting part's row is due, if any waits.
    pub fn next_due(&self) -> Option<Instant> {
        self.since.values().min().map(|t| *t + ROW_EVERY)
    }
}
