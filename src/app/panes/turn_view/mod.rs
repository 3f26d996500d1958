//! The turn view: the selected session's turns, laid out a screen at a
//! time from the render cache.

pub mod draw;
pub mod fold;
pub mod keys;
pub mod layout;
pub mod positions;
mod variant;
