//! Two rules for an update of a part already held: it never moves the part
//! backwards (a tool's state, a final part), and a snapshot taken
//! mid-stream never throws away text streamed past it.

use crate::model::entity::part::{Part, PartBody};

/// Whether replacing `old` by `new` would move the part backwards.
pub(super) fn regresses(old: &Part, new: &Part) -> bool {
    match (&old.body, &new.body) {
        (PartBody::Tool(a), PartBody::Tool(b)) => b.state.status.rank() < a.state.status.rank(),
        _ => old.is_final() && !new.is_final(),
    }
}

/// An unfinished update (a snapshot taken mid-stream) must not throw away
/// text we already streamed past it.
pub(super) fn keep_streamed_text(old: &Part, new: &mut Part) {
    if new.is_final() {
        return;
    }
    let (Some(old_text), Some(new_text)) = (old.text(), new.text()) else {
        return;
    };
    if old_text.len() > new_text.len() && old_text.starts_with(new_text) {
        let kept = old_text.to_string();
        match &mut new.body {
            PartBody::Text(t) => t.text = kept,
            PartBody::Reasoning(r) => r.text = kept,
            _ => {}
        }
    }
}
