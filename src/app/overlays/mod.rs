//! What opens over the panes and takes every key while open: help, the
//! prompt jump list, the theme picker, the confirmation, the diff view,
//! search, the archive's search, the last record that could not be read,
//! and the usage view.

pub mod archive_search;
pub mod bad_record;
pub mod confirm;
pub mod diff_view;
pub mod help;
pub mod jump_list;
pub mod search;
pub mod theme_picker;
pub mod usage;
