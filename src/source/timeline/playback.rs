//! The play clock of a recording: where the play head is on the
//! recording's own time line, how fast it moves, and when a given moment
//! of the recording is due on the wall clock. Pure arithmetic: the viewer
//! asks it, then applies the records that are due.

use std::time::Duration;

use tokio::time::Instant;

/// The speeds `+` and `-` step through; beyond the last comes "instant".
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// 1.0 is the recorded pace.
    Times(f64),
    /// No waiting at all.
    Instant,
}

impl Speed {
    pub fn faster(self) -> Speed {
        match self {
            Speed::Times(x) => SPEEDS
                .iter()
                .find(|&&s| s > x + 1e-9)
                .map_or(Speed::Instant, |&s| Speed::Times(s)),
            Speed::Instant => Speed::Instant,
        }
    }

    pub fn slower(self) -> Speed {
        match self {
            Speed::Times(x) => Speed::Times(
                SPEEDS
                    .iter()
                    .rev()
                    .find(|&&s| s < x - 1e-9)
                    .copied()
                    .unwrap_or(SPEEDS[0]),
            ),
            Speed::Instant => Speed::Times(SPEEDS[SPEEDS.len() - 1]),
        }
    }

    /// "2×", "0.25×", "instant".
    pub fn label(self) -> String {
        match self {
            Speed::Times(x) => format!("{x}×"),
            Speed::Instant => "instant".into(),
        }
    }
}

/// Recorded times turned into play time: ms since the first timed record,
/// each idle gap shortened to `cap`. A time going backwards (concatenated
/// recordings) adds nothing.
#[derive(Debug, Clone)]
pub struct GapCappedTime {
    cap_ms: i64,
    last: Option<i64>,
    now: i64,
}

impl GapCappedTime {
    pub fn new(cap: std::time::Duration) -> Self {
        GapCappedTime {
            cap_ms: cap.as_millis().min(i64::MAX as u128) as i64,
            last: None,
            now: 0,
        }
    }

    /// The play time of a record recorded at `t` (ms), the next in order.
    pub fn at(&mut self, t: i64) -> i64 {
        if let Some(prev) = self.last {
            self.now += (t - prev).clamp(0, self.cap_ms);
        }
        self.last = Some(t);
        self.now
    }
}

/// A pace a person can read at (the demo's): each new part comes at least
/// `step` after the one before, each new turn at least twice that, and
/// everything after a step moves later with it, so text still streams at
/// its recorded pace between steps.
#[derive(Debug, Clone)]
pub struct ReadingPace {
    step_ms: i64,
    shift: i64,
    last_step: Option<i64>,
}

impl ReadingPace {
    pub fn new(step: std::time::Duration) -> Self {
        ReadingPace {
            step_ms: step.as_millis().min(i64::MAX as u128 / 4) as i64,
            shift: 0,
            last_step: None,
        }
    }

    /// The play time of a record at play time `t` (the next in order),
    /// given whether it starts a part or a turn.
    pub fn at(&mut self, t: i64, starts_part: bool, starts_turn: bool) -> i64 {
        let mut at = t + self.shift;
        if starts_part || starts_turn {
            let gap = if starts_turn {
                2 * self.step_ms
            } else {
                self.step_ms
            };
            if let Some(last) = self.last_step
                && at < last + gap
            {
                self.shift += last + gap - at;
                at = last + gap;
            }
            self.last_step = Some(at);
        }
        at
    }
}

#[derive(Debug, Clone)]
pub struct PlayClock {
    pub speed: Speed,
    /// The head's time on the recording's play time line, ms, as of `since`.
    head_ms: i64,
    /// When the head was last set while playing; `None` when paused.
    since: Option<Instant>,
}

impl PlayClock {
    pub fn new(speed: Speed) -> PlayClock {
        PlayClock {
            speed,
            head_ms: 0,
            since: None,
        }
    }

    pub fn playing(&self) -> bool {
        self.since.is_some()
    }

    /// The head's time now.
    pub fn head(&self, now: Instant) -> i64 {
        match (self.since, self.speed) {
            (Some(since), Speed::Times(x)) => {
                let moved = now.saturating_duration_since(since).as_secs_f64() * 1000.0 * x;
                self.head_ms + moved.round() as i64
            }
            // Instant play jumps records, not time: the head is set by the caller.
            _ => self.head_ms,
        }
    }

    pub fn play(&mut self, now: Instant) {
        if self.since.is_none() {
            self.since = Some(now);
        }
    }

    pub fn pause(&mut self, now: Instant) {
        self.head_ms = self.head(now);
        self.since = None;
    }

    /// Put the head at `ms` (a seek or a step), keeping play or pause.
    pub fn set_head(&mut self, now: Instant, ms: i64) {
        self.head_ms = ms.max(0);
        if self.since.is_some() {
            self.since = Some(now);
        }
    }

    pub fn set_speed(&mut self, now: Instant, speed: Speed) {
        self.head_ms = self.head(now);
        if self.since.is_some() {
            self.since = Some(now);
        }
        self.speed = speed;
    }

    /// When the head reaches `ms`, if it is moving at a finite speed.
    pub fn due(&self, ms: i64) -> Option<Instant> {
        let since = self.since?;
        match self.speed {
            Speed::Times(x) => {
                // Rounded up, so the head has surely reached `ms` then.
                let micros = ((ms - self.head_ms).max(0) as f64 * 1000.0 / x).ceil();
                Some(since + Duration::from_micros(micros as u64))
            }
            Speed::Instant => Some(since),
        }
    }
}

/// "1:05", "1:02:03" for a play time in ms.
pub fn clock_text(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Where a typed seek goes: `40%`, `1:30`, `90s`, `1:02:03`, a bare number
/// of seconds. Returns the play time in ms, given the recording's length.
pub fn parse_seek(text: &str, duration_ms: i64) -> Result<i64, String> {
    let t = text.trim();
    let bad = || format!("not a time or a percentage: {t:?} (try 40%, 1:30 or 90s)");
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&p) {
            return Err("a percentage is between 0 and 100".into());
        }
        return Ok((duration_ms as f64 * p / 100.0).round() as i64);
    }
    let t = t.strip_suffix('s').unwrap_or(t);
    let mut secs = 0f64;
    let parts: Vec<&str> = t.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad());
    }
    for p in &parts {
        let v: f64 = p.parse().map_err(|_| bad())?;
        if !v.is_finite() || v < 0.0 {
            return Err(bad());
        }
        secs = secs * 60.0 + v;
    }
    Ok((secs * 1000.0).round() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reading_pace_spaces_steps_and_moves_the_rest_with_them() {
        let mut pace = super::ReadingPace::new(std::time::Duration::from_millis(1000));
        // A turn, a part 100 ms later, a delta 50 ms after it, a part
        // 3 s later (already far enough), and a turn right after.
        assert_eq!(pace.at(0, false, true), 0);
        assert_eq!(pace.at(100, true, false), 1000);
        assert_eq!(pace.at(150, false, false), 1050);
        assert_eq!(pace.at(3100, true, false), 4000);
        assert_eq!(pace.at(3200, false, true), 6000);
    }

    use super::*;

    #[test]
    fn gaps_are_capped_and_time_never_runs_back() {
        let mut t = GapCappedTime::new(std::time::Duration::from_secs(2));
        let play: Vec<i64> = [1_000, 1_500, 60_000, 59_000, 59_500]
            .iter()
            .map(|&r| t.at(r))
            .collect();
        assert_eq!(play, [0, 500, 2_500, 2_500, 3_000]);
    }

    #[test]
    fn speeds_step_through_the_list_and_instant() {
        let mut s = Speed::Times(1.0);
        s = s.slower().slower();
        assert_eq!(s, Speed::Times(0.25));
        assert_eq!(s.slower(), Speed::Times(0.25));
        for _ in 0..8 {
            s = s.faster();
        }
        assert_eq!(s, Speed::Times(64.0));
        assert_eq!(s.faster(), Speed::Instant);
        assert_eq!(Speed::Instant.slower(), Speed::Times(64.0));
        // A speed from the command line joins the list where it fits.
        assert_eq!(Speed::Times(3.0).faster(), Speed::Times(4.0));
        assert_eq!(Speed::Times(3.0).slower(), Speed::Times(2.0));
        assert_eq!(Speed::Times(0.25).label(), "0.25×");
    }

    #[test]
    fn the_head_moves_with_the_speed_and_stops_on_pause() {
        let t0 = Instant::now();
        let mut c = PlayClock::new(Speed::Times(2.0));
        assert_eq!(c.head(t0 + Duration::from_secs(1)), 0);
        c.play(t0);
        assert_eq!(c.head(t0 + Duration::from_secs(1)), 2000);
        assert_eq!(c.due(3000), Some(t0 + Duration::from_millis(1500)));
        c.set_speed(t0 + Duration::from_secs(1), Speed::Times(4.0));
        assert_eq!(c.head(t0 + Duration::from_secs(2)), 6000);
        c.pause(t0 + Duration::from_secs(2));
        assert_eq!(c.head(t0 + Duration::from_secs(9)), 6000);
        assert_eq!(c.due(7000), None);
        c.set_head(t0, 100);
        assert_eq!(c.head(t0 + Duration::from_secs(9)), 100);
    }

    #[test]
    fn seeks_parse_as_percent_or_time() {
        assert_eq!(parse_seek("50%", 60_000), Ok(30_000));
        assert_eq!(parse_seek("1:30", 0), Ok(90_000));
        assert_eq!(parse_seek("90s", 0), Ok(90_000));
        assert_eq!(parse_seek(" 1:02:03 ", 0), Ok(3_723_000));
        assert_eq!(parse_seek("2.5", 0), Ok(2_500));
        assert!(parse_seek("150%", 0).is_err());
        assert!(parse_seek("soon", 0).is_err());
        assert!(parse_seek("1::2", 0).is_err());
        assert!(parse_seek("-3", 0).is_err());
        assert_eq!(clock_text(65_000), "1:05");
        assert_eq!(clock_text(3_723_000), "1:02:03");
    }
}
