//! Places in a session's turn view: a message and a slot in it (its
//! header, or one of its parts), and walking from one to the next.

use crate::app::view::thousands;
use crate::model::{Message, Session};

/// Where the view is, in words that do not pass the loaded messages off
/// as the whole session: `msg 91/5,700` when every message is loaded;
/// while older pages are not, `msg 5,691 of 5,700 (100 loaded)` when the
/// session's total is known (the loaded messages are its newest), else
/// `msg 91 of 100 loaded, more before`.
pub fn position_text(first: usize, loaded: usize, whole: bool, total: Option<u64>) -> String {
    let at = (first + 1).min(loaded);
    if whole {
        return format!("msg {}/{}", thousands(at), thousands(loaded));
    }
    match total {
        // A count read just before new messages streamed in can be behind.
        Some(total) => {
            let total = (total as usize).max(loaded);
            let at = total - loaded + at;
            format!(
                "msg {} of {} ({} loaded)",
                thousands(at),
                thousands(total),
                thousands(loaded)
            )
        }
        None => format!(
            "msg {} of {} loaded, more before",
            thousands(at),
            thousands(loaded)
        ),
    }
}

/// A block: a message header (`slot` 0) or its part `slot - 1`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub message: usize,
    pub slot: usize,
}

impl Pos {
    pub fn part(self) -> Option<usize> {
        self.slot.checked_sub(1)
    }
}

pub(super) fn part_id_at(session: &Session, pos: Pos) -> Option<&str> {
    pos.part()
        .and_then(|pi| session.messages[pos.message].parts.get(pi))
        .map(|p| p.id.as_str())
}

pub(super) fn slots(message: &Message) -> usize {
    message.parts.len() + 1
}

pub fn next_pos(session: &Session, pos: Pos) -> Option<Pos> {
    if pos.slot + 1 < slots(&session.messages[pos.message]) {
        Some(Pos {
            slot: pos.slot + 1,
            ..pos
        })
    } else if pos.message + 1 < session.messages.len() {
        Some(Pos {
            message: pos.message + 1,
            slot: 0,
        })
    } else {
        None
    }
}

pub fn prev_pos(session: &Session, pos: Pos) -> Option<Pos> {
    if pos.slot > 0 {
        Some(Pos {
            slot: pos.slot - 1,
            ..pos
        })
    } else if pos.message > 0 {
        let m = pos.message - 1;
        Some(Pos {
            message: m,
            slot: slots(&session.messages[m]) - 1,
        })
    } else {
        None
    }
}

pub(super) fn last_pos(session: &Session) -> Option<Pos> {
    let m = session.messages.len().checked_sub(1)?;
    Some(Pos {
        message: m,
        slot: slots(&session.messages[m]) - 1,
    })
}

/// A block by ids; the nearest existing block when it is gone.
pub fn find_pos(session: &Session, message_id: &str, part_id: Option<&str>) -> Option<Pos> {
    if session.messages.is_empty() {
        return None;
    }
    let mi = match session.message_index(message_id) {
        Ok(mi) => mi,
        Err(mi) => {
            return Some(Pos {
                message: mi.min(session.messages.len() - 1),
                slot: 0,
            });
        }
    };
    let slot = match part_id {
        None => 0,
        Some(pid) => match session.messages[mi].part_index(pid) {
            Ok(pi) => pi + 1,
            Err(pi) => pi.min(session.messages[mi].parts.len()),
        },
    };
    Some(Pos { message: mi, slot })
}

#[cfg(test)]
mod tests {
    use super::position_text;

    #[test]
    fn the_position_says_when_older_messages_are_not_loaded() {
        assert_eq!(position_text(90, 5_700, true, None), "msg 91/5,700");
        assert_eq!(
            position_text(90, 100, false, None),
            "msg 91 of 100 loaded, more before"
        );
    }

    #[test]
    fn the_position_counts_in_the_whole_session_when_its_total_is_known() {
        assert_eq!(
            position_text(90, 100, false, Some(5_700)),
            "msg 5,691 of 5,700 (100 loaded)"
        );
        // A total read before the newest messages streamed in.
        assert_eq!(
            position_text(0, 100, false, Some(90)),
            "msg 1 of 100 (100 loaded)"
        );
    }
}
