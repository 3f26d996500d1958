//! What the panes and overlays ask of each other, through the app that
//! owns them all: a pane never names another one.

use crate::model::entity::search::Query;

/// A request to move the turn view (from its keys, the jump list, a search
/// hit, an opened card).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Jump {
    Top,
    Bottom,
    NextTurn,
    PrevTurn,
    /// Bring this part (message id, part id) into view.
    Reveal(String, String),
    /// Put this message at the top.
    ToMessage(String),
    /// Bring the line holding occurrence `ordinal` of `query` in this part
    /// (message id, part id) into view, a third of the way down.
    Match {
        message_id: String,
        part_id: String,
        query: Query,
        ordinal: usize,
    },
}
