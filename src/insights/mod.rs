//! What the archive says beyond each session (#41): which model breaks
//! which tool, how long agents waited on people, and where the money went.
//! Figures made from the archive's answers, for `ocview insights` and the
//! viewer alike; they know no screen.

pub mod cost;
pub mod failures;
pub mod waits;
