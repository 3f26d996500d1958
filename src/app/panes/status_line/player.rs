//! The replay player: a recording file indexed into a `Timeline`, played
//! on a `PlayClock`. Records that fall due go through `on_source`, the same
//! path live data takes; steps back and long jumps restore a checkpoint of
//! the store instead of replaying from the start.

use tokio::time::Instant;

use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled, app_cx};
use crate::app::keymap::Action;
use crate::app::router::Layer;
use crate::source::msg::{SourceMsg, SourceState};
use crate::source::timeline::playback::{self, PlayClock, Speed};
use crate::source::timeline::{Marks, Opened, Timeline};

/// Records applied per wake-up at "instant" speed (input gets a look in
/// between).
const INSTANT_CHUNK: usize = 20_000;
/// A forward move this short goes record by record through `on_source`
/// (so notices show); a longer one restores a checkpoint.
const WALK_LIMIT: usize = 2_000;
/// What `f` and `b` move, ms of play time.
const SEEK_STEP_MS: i64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartAt {
    /// Watch it unfold, playing.
    #[default]
    Start,
    /// Browse the finished session, paused at the end.
    End,
}

/// How a recording file starts playing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayOptions {
    pub start: StartAt,
    pub speed: Speed,
    /// At the end, say what to try next (the demo).
    pub end_hint: bool,
}

impl Default for PlayOptions {
    fn default() -> Self {
        PlayOptions {
            start: StartAt::Start,
            speed: Speed::Times(1.0),
            end_hint: false,
        }
    }
}

pub struct Player {
    pub timeline: Timeline,
    pub clock: PlayClock,
    /// Prompts and errors: (record index, play time, is an error), for the
    /// marks on the status-line timeline.
    pub marks: Vec<(usize, i64, bool)>,
    /// The head's time as of the last `prepare`, for drawing.
    pub head_ms: i64,
}

impl Player {
    pub fn new(timeline: Timeline, speed: Speed) -> Player {
        let marks = (0..timeline.len())
            .filter_map(|i| {
                let m = timeline.marks_of(i);
                let error = m.contains(Marks::ERROR);
                (error || m.contains(Marks::PROMPT))
                    .then(|| (i, timeline.time_of(i).unwrap_or(0), error))
            })
            .collect();
        Player {
            timeline,
            clock: PlayClock::new(speed),
            marks,
            head_ms: 0,
        }
    }

    /// The play time of the last record applied.
    fn time_at_position(&self) -> i64 {
        match self.timeline.position() {
            0 => 0,
            n => self.timeline.time_of(n - 1).unwrap_or(0),
        }
    }

    pub fn at_end(&self) -> bool {
        self.timeline.position() >= self.timeline.len()
    }
}

impl Component for Player {
    /// Play, pause, speed; a step or a seek asks the app to move the
    /// store there.
    fn act(&mut self, action: Action, _cx: &Cx<'_>) -> Handled {
        let now = Instant::now();
        let duration = self.timeline.duration_ms();
        let seek = |target: usize, at: Option<i64>| Handled::Asks(Ask::SeekRecords { target, at });
        match action {
            Action::PlayPause if self.clock.playing() => self.clock.pause(now),
            Action::PlayPause => {
                return Handled::Asks(Ask::Play {
                    from_start: self.at_end(),
                });
            }
            Action::Faster => self.clock.set_speed(now, self.clock.speed.faster()),
            Action::Slower => self.clock.set_speed(now, self.clock.speed.slower()),
            Action::StepForward | Action::StepBack => {
                self.clock.pause(now);
                let pos = self.timeline.position();
                let target = if action == Action::StepForward {
                    pos + 1
                } else {
                    pos.saturating_sub(1)
                };
                return seek(target, None);
            }
            Action::PartForward | Action::TurnForward | Action::PartBack | Action::TurnBack => {
                self.clock.pause(now);
                let mark = match action {
                    Action::PartForward | Action::PartBack => Marks::PART,
                    _ => Marks::TURN,
                };
                let target = match action {
                    Action::PartForward | Action::TurnForward => self.timeline.next_boundary(mark),
                    _ => self.timeline.prev_boundary(mark),
                };
                return seek(target, None);
            }
            Action::SeekForward | Action::SeekBack => {
                let by = if action == Action::SeekForward {
                    SEEK_STEP_MS
                } else {
                    -SEEK_STEP_MS
                };
                let head = (self.clock.head(now) + by).clamp(0, duration);
                return Handled::Asks(Ask::SeekTime(head));
            }
            Action::SeekStart => return seek(0, Some(0)),
            Action::SeekEnd => return seek(self.timeline.len(), Some(duration)),
            Action::SeekTo => return Handled::Asks(Ask::TypeSeek),
            _ => return Handled::Passed,
        }
        Handled::Used
    }
}

impl App {
    /// The indexed recording arrived: start where the options say.
    pub(crate) fn install_player(&mut self, opened: Opened, now: Instant) {
        let Opened {
            timeline,
            store,
            stats,
        } = opened;
        let mut player = Player::new(timeline, self.play.speed);
        self.store = store;
        self.stats = stats;
        self.source.state = SourceState::Playing;
        match self.play.start {
            StartAt::End => {
                player.clock.set_head(now, player.timeline.duration_ms());
            }
            StartAt::Start => {
                if let Err(e) = player.timeline.seek(0, &mut self.store, &mut self.stats) {
                    self.notice = Some(format!("cannot rewind the recording: {e}"));
                }
                player.clock.play(now);
            }
        }
        self.player = Some(player);
        // What was said while the file was read (a key pressed meanwhile,
        // a rewind that failed) stays to be read: a jump's clearing is for
        // what a jump makes stale.
        let said = self.notice.take();
        self.after_jump();
        self.notice = said;
    }

    /// Note where the play head is, for the frame about to be drawn.
    pub(crate) fn prepare_player(&mut self, now: Instant) {
        if let Some(p) = self.player.as_mut() {
            p.head_ms = p.clock.head(now).min(p.timeline.duration_ms());
        }
    }

    /// When the player next has a record due; `None` when paused or done.
    pub fn player_due(&self) -> Option<Instant> {
        let p = self.player.as_ref()?;
        if !p.clock.playing() {
            return None;
        }
        match p.timeline.time_of(p.timeline.position()) {
            Some(at) => p.clock.due(at),
            // At the end: one more wake-up pauses it.
            None => p.clock.due(0),
        }
    }

    /// Apply what is due by `now`. Returns whether anything changed.
    pub fn on_play_tick(&mut self, now: Instant) -> bool {
        let Some(p) = self.player.as_ref() else {
            return false;
        };
        if !p.clock.playing() {
            return false;
        }
        let position = p.timeline.position();
        let target = match p.clock.speed {
            Speed::Times(_) => p.timeline.count_due_by(p.clock.head(now)),
            Speed::Instant => position + INSTANT_CHUNK,
        };
        let target = target.min(position + INSTANT_CHUNK);
        let mut changed = self.walk_to(target);
        let Some(p) = self.player.as_mut() else {
            return changed;
        };
        if p.clock.speed == Speed::Instant {
            let at = p.time_at_position();
            p.clock.set_head(now, at);
        }
        if p.at_end() {
            let end = p.timeline.duration_ms();
            p.clock.pause(now);
            p.clock.set_head(now, end);
            self.source.state = SourceState::Ended;
            if self.play.end_hint {
                self.pin_notice(self.end_hint());
            }
            changed = true;
        }
        changed
    }

    /// What the demo says when it has played: the keys to try next, from
    /// the keymap.
    pub fn end_hint(&self) -> String {
        let key = |action| self.keymap.hint(action).unwrap_or_else(|| "?".into());
        format!(
            "demo over · {}/{} {}: another session · {} {}: again · {}: all keys",
            key(Action::Down),
            key(Action::Up),
            key(Action::Open),
            key(Action::SeekStart),
            key(Action::PlayPause),
            key(Action::Help),
        )
    }

    /// Apply records one by one up to `target` through the common path.
    fn walk_to(&mut self, target: usize) -> bool {
        let mut changed = false;
        loop {
            let Some(p) = self.player.as_mut() else {
                return changed;
            };
            if p.timeline.position() >= target {
                return changed;
            }
            match p.timeline.next_record() {
                Ok(Some(record)) => {
                    changed |= self.on_source(SourceMsg::Record(Box::new(record)));
                    self.share_checkpoint();
                }
                Ok(None) => return changed,
                Err(e) => {
                    self.fail_player(e);
                    return true;
                }
            }
        }
    }

    /// At a checkpoint's position the store equals the checkpoint's (both
    /// applied the same records the same way): take the checkpoint's,
    /// whose sessions the other checkpoints share, and drop the copies
    /// built since the last one. Playing from the start then holds about
    /// one copy of the sessions, not two. A store that took in anything
    /// else (a session opened from the archive) has moved on: it is kept.
    fn share_checkpoint(&mut self) {
        let Some(p) = self.player.as_ref() else {
            return;
        };
        if let Some(saved) = p.timeline.checkpoint_at(p.timeline.position())
            && saved.revision() == self.store.revision()
            && saved.sessions().len() == self.store.sessions().len()
        {
            self.store = saved.clone();
        }
    }

    fn fail_player(&mut self, e: std::io::Error) {
        self.notice = Some(format!("cannot read the recording: {e}"));
        if let Some(p) = self.player.as_mut() {
            p.clock.pause(Instant::now());
        }
    }

    /// Put the store after the first `target` records, the play head at
    /// `head_ms` (default: the time of the last record applied).
    pub fn seek_records(&mut self, target: usize, head_ms: Option<i64>) {
        let now = Instant::now();
        let Some(p) = self.player.as_mut() else {
            return;
        };
        let position = p.timeline.position();
        let target = target.min(p.timeline.len());
        if target >= position && target - position <= WALK_LIMIT {
            self.walk_to(target);
        } else {
            let result = p.timeline.seek(target, &mut self.store, &mut self.stats);
            if let Err(e) = result {
                self.fail_player(e);
            }
            self.after_jump();
        }
        let Some(p) = self.player.as_mut() else {
            return;
        };
        let head = head_ms.unwrap_or_else(|| p.time_at_position());
        p.clock.set_head(now, head);
        self.source.state = if p.at_end() {
            SourceState::Ended
        } else {
            SourceState::Playing
        };
    }

    /// After the store was replaced wholesale: views that pointed at what
    /// no longer exists start over.
    fn after_jump(&mut self) {
        self.event_clock_ms = self
            .store
            .sessions()
            .iter()
            .filter_map(|s| s.info.time.updated)
            .max()
            .unwrap_or(0);
        if self
            .selected_session_id()
            .is_some_and(|id| self.store.session(&id).is_none())
        {
            self.selected = None;
            self.history.clear();
        }
        self.select_first_if_none(false);
        self.notice = None;
        self.refresh_prompts();
    }

    /// A player key. Without a seekable recording it says why nothing moves.
    pub(crate) fn player_act(&mut self, action: Action) {
        let Some(p) = self.player.as_mut() else {
            if self.source.recorded {
                self.notice = Some(match self.source.state {
                    SourceState::Indexing => "still indexing the recording".into(),
                    _ => "this recording streams (stdin, SSE or a document): it cannot seek".into(),
                });
            }
            return;
        };
        let cx = app_cx!(self);
        let handled = p.act(action, &cx);
        let _ = self.handled(Layer::Pane, handled);
    }

    /// Play (from the start when `from_start`: the end was reached).
    pub(crate) fn play(&mut self, from_start: bool) {
        if from_start {
            // Play again from the start, as a video player does.
            self.seek_records(0, Some(0));
        }
        if let Some(p) = self.player.as_mut() {
            p.clock.play(Instant::now());
        }
        self.source.state = SourceState::Playing;
    }

    /// Seek to a play time: every record due by then applied.
    pub fn seek_time(&mut self, ms: i64) {
        let Some(p) = self.player.as_ref() else {
            return;
        };
        let target = p.timeline.count_due_by(ms);
        self.seek_records(target, Some(ms));
    }

    /// Seek to a share of the recording (0.0–1.0): of its play time, or of
    /// its records when it has no times. A click on the timeline.
    pub fn seek_fraction(&mut self, share: f64) {
        let Some(p) = self.player.as_ref() else {
            return;
        };
        let share = share.clamp(0.0, 1.0);
        let duration = p.timeline.duration_ms();
        if duration > 0 {
            self.seek_time((duration as f64 * share).round() as i64);
        } else {
            let target = (p.timeline.len() as f64 * share).round() as usize;
            self.seek_records(target, None);
        }
    }

    /// Seek to what the user typed: `40%`, `1:30`, `90s`. A recording
    /// without times seeks by its share of records instead.
    pub fn seek_typed(&mut self, text: &str) {
        let Some(p) = self.player.as_ref() else {
            return;
        };
        let duration = p.timeline.duration_ms();
        if duration == 0 {
            match text
                .trim()
                .strip_suffix('%')
                .map(|t| t.trim().parse::<f64>())
            {
                Some(Ok(pct)) if (0.0..=100.0).contains(&pct) => self.seek_fraction(pct / 100.0),
                _ => self.notice = Some("this recording has no times: seek by percentage".into()),
            }
            return;
        }
        match playback::parse_seek(text, duration) {
            Ok(ms) => self.seek_time(ms.min(duration)),
            Err(e) => self.notice = Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::config::Config;
    use crate::source::timeline::IndexOptions;

    /// A key pressed while the recording was still indexed is answered
    /// with a notice; the player coming up must not take it away.
    #[test]
    fn a_notice_said_while_indexing_outlives_the_player_coming_up() {
        let mut app = App::new(Config::default(), "test", true).unwrap();
        app.source.recorded = true;
        app.source.state = SourceState::Indexing;
        app.player_act(Action::PlayPause);
        let said = app.notice.clone().expect("a notice while indexing");
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/durable-stream.jsonl");
        let opened = Timeline::open(&fixture, IndexOptions::default()).unwrap();
        app.install_player(opened, Instant::now());
        assert!(app.player.is_some());
        assert_eq!(app.notice, Some(said));
    }
}
