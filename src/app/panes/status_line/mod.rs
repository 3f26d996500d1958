//! The status line: the source and its state, notices, key hints, and
//! while a recording plays, the player and its timeline.

pub mod draw;
pub mod player;
pub mod seek;
pub mod timeline_bar;
