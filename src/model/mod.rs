//! The domain: OpenCode sessions, messages, parts and prompts, and the reducer
//! that applies bus events to them. Nothing here knows about the terminal.
//!
//! - `wire`: what comes from outside, as it comes: events, ids, the tolerant
//!   readers, and the sanitizer for the untrusted text they carry;
//! - `entity`: sessions, messages, parts and prompts, and what a reader is
//!   shown of them;
//! - `store`: the store that holds them and everything that changes it;
//! - `heap`: freed memory handed back after a burst.

pub mod entity;
pub mod event_mark;
pub mod heap;
pub mod ids;
pub(crate) mod json_peek;
pub(crate) mod lenient;
pub mod store;
pub mod wire;

pub use entity::message::{FileDiff, Message, MessageInfo, Role};
pub use entity::part::{Part, PartBody, ToolStatus};
pub use entity::part_source::PartSource;
pub use entity::prompt::{
    PermissionRequest, Prompt, PromptRequest, QuestionRequest, Resolution, Todo,
};
pub use entity::session::{ErrorInfo, Session, SessionInfo, SessionStatus, Tokens};
pub use event_mark::EventMark;
pub use store::observer::{NoObserver, ReplyObserver};
pub use store::{Change, Effect, Outcome, Store};
pub use wire::event::{Envelope, Event};
