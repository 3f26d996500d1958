//! Identifiers and their ordering.
//!
//! opencode ids are `<prefix>_<12 hex digits><random>`; the hex digits encode
//! creation time and a counter. `msg_`, `prt_`, `evt_`, `per_` and `que_` ids
//! ascend with creation; `ses_` ids are built from an inverted timestamp and so
//! *descend*. Plain string order is therefore the display order everywhere:
//! oldest first for messages and parts, newest first for sessions.

/// The sortable position of an event, from its `evt_` id (0 when it has none).
///
/// Used to recognise an event applied twice or arriving after a newer update of
/// the same entity; 0 means "no ordering known" and is never treated as stale.
pub fn event_seq(id: &str) -> u64 {
    let Some(rest) = id.strip_prefix("evt_") else {
        return 0;
    };
    let hex = rest.get(..12).unwrap_or("");
    if hex.len() != 12 {
        return 0;
    }
    u64::from_str_radix(hex, 16).unwrap_or(0)
}

/// Binary search in a slice sorted by id string.
pub fn find_by_id<T>(items: &[T], id: &str, key: impl Fn(&T) -> &str) -> Result<usize, usize> {
    items.binary_search_by(|item| key(item).cmp(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_seq_orders_like_ids() {
        let a = event_seq("evt_2028fa41b001JzdsvD2I6KlJ6f");
        let b = event_seq("evt_2028fa42b001cfPm2Obxuat4Jc");
        assert!(a > 0 && a < b);
        assert_eq!(event_seq("evt_short"), 0);
        assert_eq!(event_seq("nope"), 0);
        assert_eq!(event_seq("evt_zzzzzzzzzzzz"), 0);
    }
}
