//! What the router sees of an overlay or a pane: a component that takes a
//! key while it is on top and says what came of it. A component changes
//! its own state only; what reaches beyond it (close it, open a session,
//! jump to a message, preview a theme, ask the archive, stop a run) it
//! asks for, and the router grants it (`App::grant`). So what a layer does
//! with a key is read in that layer's folder, and no layer imports another.

use crossterm::event::KeyEvent;
use tokio::time::Instant;

use crate::app::Overlay;
use crate::app::keymap::{Action, Context, Key, Keymap};
use crate::archive::Hit;
use crate::model::{Session, Store};
use crate::render::blocks::Detail;

/// An overlay or a pane, as the router hands it keys.
pub trait Component {
    /// A key typed while this component is the topmost layer (an overlay
    /// or a text input takes every key).
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let _ = (key, cx);
        Handled::Passed
    }

    /// An action of this pane's context, read from a key through the
    /// keymap while the pane has focus.
    fn act(&mut self, action: Action, cx: &Cx<'_>) -> Handled {
        let _ = (action, cx);
        Handled::Passed
    }
}

/// What a component may read while it takes a key: the keymap (keys are
/// data), the context of the focused pane, the store and the selection,
/// and how the turns are shown.
pub struct Cx<'a> {
    pub keymap: &'a Keymap,
    /// The focused pane's context: an overlay's own key, as bound there,
    /// closes it again.
    pub context: Context,
    pub store: &'a Store,
    /// The selected row's id: a session, or a fleet heading's fold key.
    pub selected: Option<&'a str>,
    /// Rows inside the turn view (a page).
    pub turn_rows: u16,
    /// How much of each card shows by default.
    pub detail: Detail,
    pub collapse_reasoning: bool,
    /// The overlay open (a view the focused pane keeps taking keys under).
    pub overlay: Option<Overlay>,
    /// When the key was typed (at the latest): a prompt takes only keys
    /// typed after it was seen.
    pub typed_at: Instant,
}

/// A `Cx` from an `App`'s fields, so that a layer's own state can be
/// borrowed mutably beside it.
macro_rules! app_cx {
    ($app:expr) => {
        $crate::app::component::app_cx!($app, ::tokio::time::Instant::now())
    };
    ($app:expr, $typed_at:expr) => {
        $crate::app::component::Cx {
            keymap: &$app.keymap,
            context: $app.focus.context(),
            store: &$app.store,
            selected: $app.selected.as_deref(),
            turn_rows: $crate::app::boxes::turn_inner($app.areas.turns).height,
            detail: $app.detail,
            collapse_reasoning: $app.config.collapse_reasoning,
            overlay: $app.overlay,
            typed_at: $typed_at,
        }
    };
}
pub(crate) use app_cx;

impl<'a> Cx<'a> {
    /// The selected session, when a session (not a heading) is selected.
    pub fn session(&self) -> Option<&'a Session> {
        self.selected.and_then(|id| self.store.session(id))
    }

    /// The action `key` has in `context` alone (a layer that takes every
    /// key reads them in its own context).
    pub fn only(&self, context: Context, key: &KeyEvent) -> Option<Action> {
        Key::from_event(key).and_then(|k| self.keymap.only(context, k))
    }

    /// The action `key` has where the focus is (or everywhere).
    pub fn action(&self, key: &KeyEvent) -> Option<Action> {
        Key::from_event(key).and_then(|k| self.keymap.action(self.context, k))
    }

    /// Whether `key` is one of `action`'s keys, wherever it is bound.
    pub fn is(&self, action: Action, key: &KeyEvent) -> bool {
        Key::from_event(key).is_some_and(|k| self.keymap.keys(action).contains(&k))
    }
}

/// Where a list's selection goes on a list action (`None`: the action
/// moves nothing): up, down, a page (`page` rows), the first, the last.
pub fn list_move(action: Action, selected: usize, len: usize, page: usize) -> Option<usize> {
    let last = len.saturating_sub(1);
    let page = page.max(1);
    Some(match action {
        Action::ListUp => selected.saturating_sub(1),
        Action::ListDown => (selected + 1).min(last),
        Action::ListPageUp => selected.saturating_sub(page),
        Action::ListPageDown => (selected + page).min(last),
        Action::ListTop => 0,
        Action::ListBottom => last,
        _ => return None,
    })
}

/// What a component did with a key.
#[must_use]
#[derive(Debug)]
pub enum Handled {
    /// Taken (whether or not it changed anything): it goes no further.
    Used,
    /// Not for this layer: the focused pane below may take it (never the
    /// prompt bar, which only sees keys typed for it).
    Passed,
    /// Taken, and something beyond the component is asked for.
    Asks(Ask),
}

/// What a component asks of the app.
#[derive(Debug)]
pub enum Ask {
    /// Close the overlay on top.
    Close,
    /// Close it and open this session.
    OpenSession(String),
    /// Read the failures by model and tool again (the range changed), or
    /// one row's failed calls (`(model, tool)`).
    InsightsRead(Option<(String, String)>),
    /// Close it and show this message of this session in the turns.
    JumpTo { session: String, message: String },
    /// Show this theme while the picker is open.
    PreviewTheme(String),
    /// Keep the theme the picker shows (and remember it).
    KeepTheme,
    /// Close the picker and put back the theme it opened on.
    RestoreTheme,
    /// Read the usage figures for this range.
    UsageRange(usize),
    /// The archive search's words changed: ask again.
    ArchiveQuery,
    /// Close the archive search and open this hit.
    OpenHit(Box<Hit>),
    /// Stop this session's run (confirmed).
    Abort(String),
    /// Say this in passing (what a key did).
    Say(&'static str),
    /// Close the seek and go where it says.
    Seek(String),
    /// The open session's search changed: search again.
    Requery,
    /// The session filter changed: count its hits again (and select the
    /// first match).
    Refilter { select_first: bool },
    /// The filter is done: open the selection at its first hit.
    OpenFirstHit,
    /// Close the offer and copy this.
    Copy(crate::headless::content::Content),
    /// Send this answer to a prompt (once).
    Reply(crate::source::live::reply::Reply),
    /// Leave the prompt bar for the panes; the prompt stays.
    LeavePrompt,
    /// Show this session (a prompt's) in the panes.
    ShowSession(String),
    /// Open (or close) the whole prompt over the turns.
    PromptView(bool),
    /// Say this in passing.
    Notice(String),
    /// Play the recording (from its start when it was at its end).
    Play { from_start: bool },
    /// Move the recording to `target` records applied (and the play
    /// clock to `at`, when given).
    SeekRecords { target: usize, at: Option<i64> },
    /// Move the recording to a play time.
    SeekTime(i64),
    /// Open the seek's input on the status line.
    TypeSeek,
    /// Select this row (a session, a heading's fold key, or nothing).
    Select(Option<String>),
    /// Open this child session (a task card's), coming back with back.
    OpenChild(String),
    /// An app verb on what the pane has selected (search, copy, open in
    /// the pager or the editor).
    Verb(Action),
}
