//! Sessions, messages, parts and prompts as the store keeps them, and what a
//! reader is shown of them: turns, diffs, todo cards, context use, search.

pub mod context;
pub mod message;
pub mod part;
pub mod part_source;
pub mod patch;
pub mod prompt;
pub mod search;
pub mod server;
pub mod session;
pub mod shown;
pub mod totals;
pub mod turn;
