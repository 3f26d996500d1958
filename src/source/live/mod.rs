//! The live source: an opencode server's REST API and its SSE stream.

pub mod client;
pub mod paging;
pub mod reply;
pub mod snapshot;
pub mod stream;
pub mod sync;
pub mod url;
pub mod walk;

pub use client::{ApiError, Auth, Client};
pub use sync::{LiveCommand, LiveOptions, spawn};
