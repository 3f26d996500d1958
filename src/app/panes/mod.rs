//! The panes of the screen, each a folder with its state, its keys and its
//! drawing: the session list, the turn view, the side panel, the prompt
//! bar, and the status line with the player's timeline.

pub mod prompt_bar;
pub mod session_list;
pub mod side_panel;
pub mod status_line;
pub mod turn_view;
