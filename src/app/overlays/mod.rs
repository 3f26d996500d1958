//! What opens over the panes and takes every key while open: help, the
//! prompt jump list, the theme picker, the confirmation, the diff view,
//! and search.

pub mod confirm;
pub mod diff_view;
pub mod help;
pub mod jump_list;
pub mod search;
pub mod theme_picker;
