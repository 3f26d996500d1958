//! The session list: sessions as a tree (a fleet grouped by server and
//! project), with live status, badges and counts.

mod archive_pin;
pub mod draw;
pub mod fleet_heading;
pub mod history_replay;
pub mod keys;
pub mod width;

use std::collections::HashSet;

/// What the session list keeps between frames.
#[derive(Debug, Default)]
pub struct ListState {
    /// The title filter, and whether it is being typed.
    pub filter: String,
    pub filtering: bool,
    /// Sessions whose children are folded away, and fleet headings folded.
    pub folded: HashSet<String>,
    /// The rows as laid out by `prepare`.
    pub rows: Vec<crate::app::session_tree::rows::SessionRow>,
    /// The store's revision the rows were laid out at: rows point into
    /// the store's sessions by index, which an event since may shift.
    pub rows_revision: Option<u64>,
    /// The sessions the list shows, folded or not (a session shown live
    /// counts once, not with its database and archive copies).
    pub listed: usize,
    /// First visible row (the list scrolls to keep the selection in view).
    pub offset: usize,
    /// A single server's heading, when other sources' sessions (the
    /// archive's) are listed beside its own (ids not scoped).
    pub live_heading: Option<String>,
}
