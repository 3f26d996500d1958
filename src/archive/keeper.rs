//! Writing that outlives a PostgreSQL server going away: while the server
//! cannot be reached, batches go to the local spool (`super::spool`) in
//! the order they come, the server is tried again with growing pauses, and
//! when it answers the spool is written first, then what comes next. An
//! SQLite archive is written directly (a failure there is not a pause).

use std::time::{Duration, Instant};

use crate::archive::engine::{ArchiveError, Engine, Trouble};
use crate::archive::place::Setting;
use crate::archive::rows::{Batch, Written};
use crate::archive::spool::{Spool, SpoolError};

/// The first pause before the server is tried again, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MAX: Duration = Duration::from_secs(15);

pub struct Keeper {
    setting: Setting,
    place: String,
    engine: Option<Box<dyn Engine>>,
    /// PostgreSQL only.
    spool: Option<Spool>,
    /// Events in the spool this run (or left by another).
    spooled: u64,
    retry_at: Option<Instant>,
    pause: Duration,
    /// Said once per outage.
    said_spooling: bool,
    said_full: bool,
    /// Events not kept because the spool was full.
    pub lost: u64,
}

/// Whether a write that failed so may succeed later.
fn passing(e: &ArchiveError) -> bool {
    matches!(e.trouble, Trouble::Unreachable | Trouble::Locked)
}

impl Keeper {
    /// Open the archive of `setting`. A PostgreSQL server that cannot be
    /// reached now is not an error: its batches are spooled until it is.
    /// `None`: the archive is off. A spool left from before is flushed
    /// when the server answers.
    pub fn open(setting: &Setting, say: &dyn Fn(String)) -> Result<Option<Keeper>, ArchiveError> {
        let spool = setting.spool();
        let mut keeper = Keeper {
            setting: setting.clone(),
            place: setting.place(),
            engine: None,
            spooled: spool.as_ref().map_or(0, |s| {
                s.batches()
                    .map_or(0, |b| b.iter().map(|b| b.events.len() as u64).sum())
            }),
            spool,
            retry_at: None,
            pause: RETRY_FIRST,
            said_spooling: false,
            said_full: false,
            lost: 0,
        };
        match setting.open() {
            Ok(None) => return Ok(None),
            Ok(Some(engine)) => {
                keeper.place = engine.place().to_string();
                keeper.engine = Some(engine);
                if keeper.engine_writable() {
                    keeper.flush(say);
                }
            }
            Err(e) if passing(&e) && keeper.spool.is_some() => keeper.away(&e, say),
            Err(e) => return Err(e),
        }
        Ok(Some(keeper))
    }

    pub fn place(&self) -> &str {
        &self.place
    }

    /// The archive, when connected.
    pub fn engine(&mut self) -> Option<&mut (dyn Engine + 'static)> {
        self.engine.as_deref_mut()
    }

    /// The work on a part's row the archive lets another thread do ahead
    /// of its write (`Engine::rows_ahead`), when connected.
    pub fn rows_ahead(&self) -> Option<fn(&mut crate::archive::rows::PartRow)> {
        self.engine.as_ref().and_then(|e| e.rows_ahead())
    }

    /// Why it may not be written, when connected to one that may not.
    pub fn read_only(&self) -> Option<&str> {
        self.engine.as_ref().and_then(|e| e.read_only())
    }

    fn engine_writable(&self) -> bool {
        self.engine
            .as_ref()
            .is_some_and(|e| e.read_only().is_none())
    }

    /// Whether batches wait in the spool.
    pub fn spooling(&self) -> bool {
        self.spool.as_ref().is_some_and(|s| !s.is_empty())
    }

    /// When the server should be tried again, while it is away.
    pub fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// Write `batch`, or spool it while the server is away (behind what
    /// waits there, so order is kept): what it added when it was written
    /// at once, `None` when it waits in the spool. An error: the archive
    /// cannot be written at all (ocview goes on without it).
    pub fn write(
        &mut self,
        batch: &Batch,
        say: &dyn Fn(String),
    ) -> Result<Option<Written>, ArchiveError> {
        if batch.is_empty() {
            return Ok(Some(Written::default()));
        }
        if self.engine.is_some() && !self.spooling() {
            let engine = self.engine.as_mut().expect("connected");
            match engine.write(batch) {
                Ok(written) => return Ok(Some(written)),
                Err(e) if passing(&e) && self.spool.is_some() => self.away(&e, say),
                Err(e) => return Err(e),
            }
        }
        self.spool_batch(batch, say);
        if self.engine.is_some() {
            // Connected, with a spool still waiting (another writer's, or
            // one whose flush failed): write it all now, in order.
            self.flush(say);
        }
        Ok(None)
    }

    fn spool_batch(&mut self, batch: &Batch, say: &dyn Fn(String)) {
        let Some(spool) = &self.spool else { return };
        match spool.append(batch) {
            Ok(n) => {
                self.spooled += n;
                if !self.said_spooling {
                    self.said_spooling = true;
                    say(format!(
                        "archive: PostgreSQL unreachable, spooling locally ({} events)",
                        self.spooled
                    ));
                }
            }
            Err(e) => {
                self.lost += batch.events.len() as u64;
                if !self.said_full || !matches!(e, SpoolError::Full { .. }) {
                    self.said_full = true;
                    say(format!(
                        "archive {}: {e} ({})",
                        self.place,
                        spool.path().display()
                    ));
                }
            }
        }
    }

    /// The server went away: drop the connection, try again later.
    fn away(&mut self, e: &ArchiveError, _say: &dyn Fn(String)) {
        tracing::warn!("{e}: spooling");
        self.engine = None;
        self.retry_at = Some(Instant::now() + self.pause);
        self.pause = (self.pause * 2).min(RETRY_MAX);
    }

    /// Try the server again if it is time; write the spool if it answers.
    pub fn retry(&mut self, say: &dyn Fn(String)) {
        if self.retry_at.is_none_or(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        match self.setting.open() {
            Ok(Some(engine)) => {
                self.engine = Some(engine);
                if let Some(why) = self.read_only() {
                    say(format!("archive {}: {why}", self.place));
                    return;
                }
                self.flush(say);
            }
            Ok(None) => {}
            Err(e) => self.away(&e, say),
        }
    }

    /// Write what the spool holds, in order; say so when it held anything.
    fn flush(&mut self, say: &dyn Fn(String)) {
        let (Some(spool), Some(engine)) = (&self.spool, self.engine.as_deref_mut()) else {
            return;
        };
        if spool.is_empty() {
            return;
        }
        match spool.flush(engine) {
            Ok(done) => {
                self.pause = RETRY_FIRST;
                self.said_spooling = false;
                self.said_full = false;
                self.spooled = 0;
                say(format!(
                    "archive {}: PostgreSQL is back: {} spooled events written ({} new)",
                    self.place, done.events, done.written.events
                ));
            }
            Err(e) if passing(&e) => self.away(&e, say),
            Err(e) => say(format!("{e}: the local spool is kept")),
        }
    }

    /// Before quitting: try the server once more for what is spooled, for
    /// at most `wait`. What stays is flushed by the next ocview to start.
    pub fn finish(&mut self, wait: Duration, say: &dyn Fn(String)) {
        let until = Instant::now() + wait;
        while self.spooling() && Instant::now() < until {
            if self.engine.is_some() {
                self.flush(say);
            } else {
                self.retry_at = Some(Instant::now());
                self.retry(say);
            }
            if self.spooling() {
                let left = until.saturating_duration_since(Instant::now());
                std::thread::sleep(Duration::from_millis(200).min(left));
            }
        }
        if self.spooling()
            && let Some(spool) = &self.spool
        {
            say(format!(
                "archive {}: {} events wait in {}; the next ocview to start writes them",
                self.place,
                self.spooled,
                spool.path().display()
            ));
        }
    }
}
