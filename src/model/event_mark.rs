//! Where an event stands in the stream: enough to tell the same event
//! delivered twice, or an older event arriving late, from a new one.
//!
//! The 12 hex digits of an `evt_` id order events of one server process, but
//! two different events can share them (a counter reset when the server
//! restarts, two processes, a hand-made file), so identity needs the whole
//! id; and positions from two connections need not be comparable at all, so
//! order is only trusted within one connection.

/// The mark of an event, kept by each entity for the last event applied to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventMark {
    /// The position from the `evt_` id; 0 when unknown (a REST snapshot).
    pub seq: u64,
    /// A hash of the whole id, so two events at one position stay apart.
    pub tag: u64,
    /// Which connection of the source delivered it: the store counts
    /// `server.connected` events.
    pub connection: u32,
}

impl EventMark {
    /// Whether `next`, arriving after the event marked `self` was applied,
    /// must be skipped: the same event again, or an older one on the same
    /// connection. An event without a position is never stale by its mark.
    pub fn makes_stale(self, next: EventMark) -> bool {
        if next.seq == 0 || self.seq == 0 {
            return false;
        }
        if next.seq == self.seq && next.tag == self.tag {
            return true;
        }
        next.connection == self.connection && next.seq < self.seq
    }

    /// Remember `next` as the last event applied (an unpositioned one
    /// leaves the mark as it was).
    pub fn advance(&mut self, next: EventMark) {
        if next.seq != 0 {
            *self = next;
        }
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

    fn mark(seq: u64, tag: u64, connection: u32) -> EventMark {
        EventMark {
            seq,
            tag,
            connection,
        }
    }

    #[test]
    fn same_event_again_is_stale_on_any_connection() {
        assert!(mark(5, 1, 1).makes_stale(mark(5, 1, 1)));
        assert!(mark(5, 1, 1).makes_stale(mark(5, 1, 2)));
    }

    #[test]
    fn another_event_at_the_same_position_is_not() {
        assert!(!mark(5, 1, 1).makes_stale(mark(5, 2, 1)));
    }

    #[test]
    fn older_is_stale_only_on_the_same_connection() {
        assert!(mark(5, 1, 1).makes_stale(mark(4, 9, 1)));
        assert!(!mark(5, 1, 1).makes_stale(mark(4, 9, 2)));
        assert!(!mark(5, 1, 1).makes_stale(mark(6, 9, 1)));
    }

    #[test]
    fn unpositioned_events_are_never_stale_by_mark() {
        assert!(!mark(5, 1, 1).makes_stale(mark(0, 0, 1)));
        assert!(!mark(0, 0, 1).makes_stale(mark(5, 1, 1)));
        let mut m = mark(5, 1, 1);
        m.advance(mark(0, 0, 1));
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
