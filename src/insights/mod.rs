//! What the archive says beyond each session (#41): which model breaks
//! which tool, and how long agents waited on people. Figures made from the archive's answers, for `ocview
//! insights` and the viewer alike; they know no screen.

pub mod failures;
pub mod waits;
