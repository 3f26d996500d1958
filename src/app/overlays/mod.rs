//! What opens over the panes and takes every key while open: help, the
//! prompt jump list, the theme picker, the confirmation, the diff view,
//! search, the archive's search, the last record that could not be read,
//! and the usage view.

pub mod archive_search;
pub mod audit;
pub mod bad_record;
pub mod confirm;
pub mod diff_view;
pub mod help;
pub mod insights;
pub mod jump_list;
pub mod search;
pub mod theme_picker;
pub mod usage;

/// Each overlay's own state, open or not (which one is open is the app's
/// `overlay`).
pub struct Overlays {
    pub help: help::HelpState,
    /// The diff view's: the chosen file and its scroll.
    pub diff: diff_view::DiffViewState,
    /// The prompt jump list, while open.
    pub jump_list: jump_list::JumpList,
    pub theme_picker: Option<theme_picker::ThemePicker>,
    /// The usage view: opencode's database and the view while open.
    pub usage: usage::UsageState,
    /// Search in the open session and across sessions.
    pub search: search::Search,
    /// The answers on record, while open.
    pub audit: audit::AuditView,
    /// Failures by model and tool, while open (its range and order stay).
    pub insights: insights::InsightsView,
}

impl Default for Overlays {
    fn default() -> Overlays {
        Overlays {
            help: Default::default(),
            diff: Default::default(),
            jump_list: Default::default(),
            theme_picker: None,
            usage: usage::UsageState::from_process(),
            search: search::Search::new(search::worker::SearchWorker::spawn()),
            audit: Default::default(),
            insights: Default::default(),
        }
    }
}
