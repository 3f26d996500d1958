//! The one place that decides when to draw. Anything may ask for a frame;
//! input asks for one now, streamed events for one within the frame
//! interval. Requests between two frames merge into one, and with no
//! request there is no frame at all.

use std::time::Duration;

use tokio::time::Instant;

/// At most one frame per this interval while events stream.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(100);

/// Ages on screen move at most this often: an idle viewer stays quiet.
pub const AGES_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct FrameGate {
    interval: Duration,
    last_draw: Option<Instant>,
    due: Option<Instant>,
    /// The last frame asked for because an age on screen changed.
    last_ages: Option<Instant>,
}

impl Default for FrameGate {
    fn default() -> Self {
        FrameGate::new(FRAME_INTERVAL)
    }
}

impl FrameGate {
    pub fn new(interval: Duration) -> Self {
        FrameGate {
            interval,
            last_draw: None,
            due: None,
            last_ages: None,
        }
    }

    /// Input or a resize: the user is waiting, draw at once.
    pub fn request_now(&mut self, now: Instant) {
        self.due = Some(now);
    }

    /// Streamed data changed something: draw when the interval allows.
    pub fn request(&mut self, now: Instant) {
        let earliest = self.last_draw.map_or(now, |t| (t + self.interval).max(now));
        self.due = Some(self.due.map_or(earliest, |d| d.min(earliest)));
    }

    /// When the loop must wake to draw, if a frame is wanted.
    pub fn deadline(&self) -> Option<Instant> {
        self.due
    }

    pub fn should_draw(&self, now: Instant) -> bool {
        self.due.is_some_and(|d| d <= now)
    }

    /// When to draw for an age that changes at `changes_at`: then, but
    /// never sooner than a minute after the last frame drawn for ages.
    pub fn ages_due(&self, changes_at: Instant) -> Instant {
        self.last_ages
            .map_or(changes_at, |t| changes_at.max(t + AGES_INTERVAL))
    }

    /// An age changed: draw, and note it for [`FrameGate::ages_due`].
    pub fn request_for_ages(&mut self, now: Instant) {
        self.last_ages = Some(now);
        self.request(now);
    }

    pub fn drawn(&mut self, now: Instant) {
        self.last_draw = Some(now);
        self.due = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn nothing_requested_nothing_drawn() {
        let gate = FrameGate::default();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(!gate.should_draw(Instant::now()));
        assert_eq!(gate.deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn streamed_changes_are_throttled_to_the_interval() {
        let mut gate = FrameGate::default();
        let start = Instant::now();
        gate.request(start);
        assert!(gate.should_draw(start), "the first change draws at once");
        gate.drawn(start);
        let mut frames = 1;
        // A change every 10 ms for 2 s.
        for _ in 0..200 {
            tokio::time::advance(Duration::from_millis(10)).await;
            let now = Instant::now();
            gate.request(now);
            if gate.should_draw(now) {
                gate.drawn(now);
                frames += 1;
            }
        }
        assert!((20..=21).contains(&frames), "{frames} frames in 2 s");
    }

    #[tokio::test(start_paused = true)]
    async fn input_draws_at_once_even_right_after_a_frame() {
        let mut gate = FrameGate::default();
        let t0 = Instant::now();
        gate.request(t0);
        gate.drawn(t0);
        tokio::time::advance(Duration::from_millis(5)).await;
        let t1 = Instant::now();
        gate.request(t1);
        assert!(!gate.should_draw(t1));
        assert_eq!(gate.deadline(), Some(t0 + FRAME_INTERVAL));
        gate.request_now(t1);
        assert!(gate.should_draw(t1));
    }

    #[tokio::test(start_paused = true)]
    async fn ages_draw_at_most_once_a_minute() {
        let mut gate = FrameGate::default();
        let t0 = Instant::now();
        let soon = t0 + Duration::from_secs(2);
        assert_eq!(
            gate.ages_due(soon),
            soon,
            "the first age change draws when due"
        );
        gate.request_for_ages(soon);
        let next = soon + Duration::from_secs(5);
        assert_eq!(gate.ages_due(next), soon + AGES_INTERVAL);
        let later = soon + Duration::from_secs(90);
        assert_eq!(gate.ages_due(later), later);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_merge_into_one_frame() {
        let mut gate = FrameGate::default();
        let t0 = Instant::now();
        gate.drawn(t0);
        for _ in 0..50 {
            gate.request(Instant::now());
        }
        assert_eq!(gate.deadline(), Some(t0 + FRAME_INTERVAL));
        tokio::time::advance(FRAME_INTERVAL).await;
        let now = Instant::now();
        assert!(gate.should_draw(now));
        gate.drawn(now);
        assert!(!gate.should_draw(now));
    }
}
