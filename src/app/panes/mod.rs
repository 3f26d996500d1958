//! The panes of the screen, each a folder with its state, its keys and its
//! drawing: the session list, the turn view, the side panel, the prompt
//! bar, and the status line with the player's timeline.

pub mod prompt_bar;
pub mod session_list;
pub mod side_panel;
pub mod status_line;
pub mod turn_view;

use std::collections::HashMap;
use std::time::Duration;

/// Each pane's own state.
pub struct Panes {
    /// The session list's: filter, folds, rows, scroll.
    pub list: session_list::ListState,
    /// The turn view's, per session.
    pub turns: HashMap<String, turn_view::layout::TurnState>,
    /// The prompt bar's: the prompt shown, drafts, the text box, arming.
    pub prompts: prompt_bar::answers::PromptUi,
    /// A seek being typed (`:`), shown in the status line.
    pub seek_input: Option<status_line::seek::SeekInput>,
    /// The side panel asked for (`Some(true)`) or hidden (`Some(false)`)
    /// with its key; `None`: it shows when it has something
    /// (`crate::app::draw::side_panel_beside`).
    pub side_panel_shown: Option<bool>,
    /// The user's choice to show (or hide) the session list; `None`: shown
    /// at `session_list_fold_width` columns and more, a one-line bar below.
    pub list_shown: Option<bool>,
}

impl Panes {
    /// A prompt takes answers `prompt_arming` after it was seen.
    pub fn new(prompt_arming: Duration) -> Panes {
        Panes {
            list: Default::default(),
            turns: HashMap::new(),
            prompts: prompt_bar::answers::PromptUi {
                arming: prompt_arming,
                ..Default::default()
            },
            seek_input: None,
            side_panel_shown: None,
            list_shown: None,
        }
    }
}
