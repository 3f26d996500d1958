//! Live servers: an opencode server's REST API (`client`) and its SSE
//! stream (`stream`, kept in step by `sync`, pages of history by `paging`
//! and `walk`, replies by `reply`); a fleet of servers (`fleet`) and the
//! watch that finds them coming and going (`fleet_watch`, `discover`), with
//! their addresses compared as one (`address`).

pub mod address;
pub mod archive_page;
pub mod client;
pub mod discover;
pub mod fleet;
pub mod fleet_watch;
pub mod paging;
pub mod reply;
pub mod snapshot;
pub mod stream;
pub mod sync;
pub mod url;
pub mod walk;

pub use client::{ApiError, Auth, Client};
pub use sync::{LiveCommand, LiveOptions, spawn};
