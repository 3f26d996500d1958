//! Where an event stands in the stream: enough to tell the same event
//! delivered twice from a new one, and which of two events came later.
//!
//! Order is the stream's: the order events reached the store. Never the
//! server's clock, and the 12 hex digits of an `evt_` id are that clock
//! (milliseconds × 0x1000 plus a counter): when it steps backwards, the
//! next ids are smaller, and the events they name are still newer. So an id
//! is used for identity only (the whole id: two events can share a
//! position), and "later" means "arrived later".

/// The mark of an event, kept by each entity for the last event applied to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventMark {
    /// The position from the `evt_` id; 0 when unknown (a REST snapshot).
    pub seq: u64,
    /// A hash of the whole id, so two events at one position stay apart.
    pub tag: u64,
    /// Where it arrived: the store's count of events applied before it,
    /// plus one (the store counts every event it is given, in order).
    pub arrival: u64,
}

impl EventMark {
    /// Whether `next`, arriving after the event marked `self` was applied,
    /// must be skipped: it is that same event again (the whole id). An
    /// event without a position is never stale by its mark, and an older
    /// position is no reason: the server's clock may have stepped back.
    pub fn makes_stale(self, next: EventMark) -> bool {
        next.seq != 0 && next.seq == self.seq && next.tag == self.tag
    }

    /// Remember `next` as the last event applied (an unpositioned one
    /// leaves the mark as it was).
    pub fn advance(&mut self, next: EventMark) {
        if next.seq != 0 {
            *self = next;
        }
    }

    /// Whether the event marked `self` reached the store after `other`.
    pub fn arrived_after(self, other: EventMark) -> bool {
        self.arrival > other.arrival
    }
}

/// A 64-bit FNV-1a hash of an event id: cheap, stable across runs (the
/// timeline's checkpoints and a replay must agree), and enough to tell two
/// ids at one position apart.
pub fn event_tag(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(seq: u64, tag: u64, arrival: u64) -> EventMark {
        EventMark { seq, tag, arrival }
    }

    #[test]
    fn the_same_event_again_is_stale_whenever_it_comes() {
        assert!(mark(5, 1, 1).makes_stale(mark(5, 1, 2)));
        assert!(mark(5, 1, 1).makes_stale(mark(5, 1, 9)));
    }

    #[test]
    fn another_event_at_the_same_position_is_not() {
        assert!(!mark(5, 1, 1).makes_stale(mark(5, 2, 2)));
    }

    #[test]
    fn an_older_position_is_not_stale_the_clock_may_have_stepped_back() {
        assert!(!mark(5, 1, 1).makes_stale(mark(4, 9, 2)));
        assert!(!mark(5, 1, 1).makes_stale(mark(6, 9, 2)));
        assert!(mark(4, 9, 2).arrived_after(mark(5, 1, 1)));
    }

    #[test]
    fn unpositioned_events_are_never_stale_by_mark() {
        assert!(!mark(5, 1, 1).makes_stale(mark(0, 0, 2)));
        assert!(!mark(0, 0, 1).makes_stale(mark(5, 1, 2)));
        assert!(!mark(0, 0, 1).makes_stale(mark(0, 0, 2)));
        let mut m = mark(5, 1, 1);
        m.advance(mark(0, 0, 2));
        assert_eq!(m, mark(5, 1, 1));
    }

    #[test]
    fn tags_differ_for_ids_sharing_a_position() {
        assert_ne!(
            event_tag("evt_2028fa41b001JzdsvD2I6KlJ6f"),
            event_tag("evt_2028fa41b001aaaaaaaaaaaaaa")
        );
    }
}
