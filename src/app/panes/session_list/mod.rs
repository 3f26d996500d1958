//! The session list: sessions as a tree (a fleet grouped by server and
//! project), with live status, badges and counts.

pub mod draw;
pub mod fleet_heading;
pub mod fleet_tree;
pub mod keys;
pub mod tree;
