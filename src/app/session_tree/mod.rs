//! The session tree: which sessions the list shows, in what order, under
//! which heading (a server, a project, a file, the archive), and which copy
//! of a session stands for it when several sources hold it. The list pane
//! draws these rows; the search overlays, the jump keys and the follow
//! mode read them too, so they live beside the panes, not in one.

pub mod copies;
pub mod groups;
pub mod rows;

#[cfg(test)]
pub(crate) mod tests;
