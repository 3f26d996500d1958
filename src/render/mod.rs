//! Content into lines at a width: markdown, highlighted code, wrapping,
//! diff lines, the tool-card registry, themes and their roles, and the
//! cache of what was laid out. It reads the model and knows nothing of the
//! application: no pane, no focus, no key.

pub mod blocks;
pub mod clock;
pub mod diff_lines;
pub mod format;
pub mod highlight;
pub mod markdown;
pub mod render_cache;
pub mod search_marks;
pub mod theme;
pub mod tools;
pub mod wrap;
