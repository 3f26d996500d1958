//! Text to records, and records into the store. Every source's input goes
//! through here: a line of JSON (`record`, with the Durable Stream form in
//! `record/durable/`), an SSE frame (`sse`), the lines themselves, cured
//! of bad UTF-8 and bounded (`lines`), JSON values cut from a document or
//! an array (`json_values`), an `opencode export` document or a saved
//! message list (`export_format`); then `apply` turns each record into bus
//! events for the reducer and `stats` counts what was read, skipped or bad.

pub mod apply;
pub mod export_format;
pub mod form;
pub mod json_values;
pub mod lines;
pub mod record;
pub mod sse;
pub mod stats;
