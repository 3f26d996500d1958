//! ocview: a terminal viewer for OpenCode agent sessions.
//!
//! The layers, each knowing only those before it: `model` (sessions,
//! messages, parts, the reducer), `source` (live servers, recordings, files),
//! `render` (content to lines at a width: markdown, highlighting, diffs,
//! tool cards, themes, the render cache), then `headless` (dump, plain,
//! export), `archive` (every session seen, kept and searchable: SQLite or
//! PostgreSQL), `insights` (figures over the archive: failures by model
//! and tool) and `app` (the panes, the overlays and the loop).

pub mod app;
pub mod archive;
pub mod cli;
pub mod headless;
pub mod insights;
pub mod model;
pub mod redact;
pub mod render;
pub mod source;
