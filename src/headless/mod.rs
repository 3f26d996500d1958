//! The modes without a screen: `--dump`'s transcript, plain mode, the
//! Markdown and JSON export, and the plain text a card or session is
//! copied or paged as.

pub mod content;
pub mod dump;
pub mod dump_pages;
pub mod export;
pub mod plain;
pub mod server_export;
pub mod spool;
pub mod stats;
