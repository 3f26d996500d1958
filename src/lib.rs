//! ocview: a terminal viewer for OpenCode agent sessions.

pub mod app;
pub mod content;
pub mod dump;
pub mod export;
pub mod model;
pub mod plain;
pub mod sanitize;
pub mod source;
pub mod ui;
