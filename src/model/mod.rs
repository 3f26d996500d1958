//! The domain: OpenCode sessions, messages, parts and prompts, and the reducer
//! that applies bus events to them. Nothing here knows about the terminal.

pub mod context;
pub mod event;
pub mod event_mark;
pub mod fleet;
pub mod ids;
mod json_peek;
mod lenient;
pub mod message;
pub mod observer;
pub mod part;
pub mod part_source;
pub mod patch;
pub mod prompt;
pub mod reconcile;
mod reducer;
pub mod sanitize;
pub mod search;
pub mod session;
pub mod shown;
pub mod store;
mod stream_only;
pub mod turn;

pub use event::{Envelope, Event};
pub use event_mark::EventMark;
pub use message::{FileDiff, Message, MessageInfo, Role};
pub use observer::{NoObserver, ReplyObserver};
pub use part::{Part, PartBody, ToolStatus};
pub use part_source::PartSource;
pub use prompt::{PermissionRequest, Prompt, PromptRequest, QuestionRequest, Resolution, Todo};
pub use session::{ErrorInfo, Session, SessionInfo, SessionStatus, Tokens};
pub use store::{Change, Effect, Outcome, Store};
