//! What comes from outside, as it comes: bus events and where they stand in
//! the stream, opencode's ids, the tolerant readers for its JSON, and the one
//! sanitizer for the untrusted text all of it carries.

pub mod event;
pub mod own;
mod read_event;
pub mod sanitize;
