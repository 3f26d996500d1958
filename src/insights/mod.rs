//! What the archive says beyond each session (#41): which model breaks
//! which tool. Figures made from the archive's answers, for `ocview
//! insights` and the viewer alike; they know no screen.

pub mod failures;
