//! A live session's history, loaded on demand: the newest page when the
//! session is opened, then older pages ahead of the reader, until the page
//! that holds the session's first message.
//!
//! The app only says "older, please" (`LiveCommand::Older`), or "every
//! older page" (`LiveCommand::AllOlder`: `g`, a search), which the source
//! answers a page at a time as fast as the server serves them; the live
//! source keeps the server's cursor and says when the beginning is reached
//! (`complete`). One request is out at a time per session. An older page
//! covers the stored messages up to its own newest message.

use std::time::{Duration, Instant};

use crate::app::App;
use crate::app::panes::turn_view::layout::AHEAD_SCREENS;
use crate::model::{MessageInfo, NoObserver, Part};
use crate::source::live::LiveCommand;

/// A failed page is asked for again no sooner than this.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// How far back one session's history is loaded.
#[derive(Debug, Default, Clone)]
pub struct History {
    /// An older page (or every older page) is asked for and not all in yet.
    pub asking: bool,
    /// What is asked for is every older page: many pages answer it.
    walking: bool,
    /// The session's first message is loaded.
    pub complete: bool,
    /// After a failed page: not before this.
    retry_at: Option<Instant>,
    /// Load every page, not only those ahead of the reader (a search).
    whole: bool,
}

impl History {
    /// Every page is wanted and the first message is not in yet.
    pub fn loading_whole(&self) -> bool {
        self.whole && !self.complete
    }
}

impl App {
    /// How far back a session's history is loaded (live only).
    pub fn history(&self, session: &str) -> Option<&History> {
        self.histories.get(session)
    }

    /// Every message of a session is in the store: always for a file or a
    /// recording; for a live session once its first message is loaded.
    pub fn history_whole(&self, session: &str) -> bool {
        self.live.is_none() || self.histories.get(session).is_some_and(|h| h.complete)
    }

    /// Apply a page of the server's stored messages.
    pub(super) fn apply_page(
        &mut self,
        session_id: &str,
        messages: Vec<(MessageInfo, Vec<Part>)>,
        older: bool,
        complete: bool,
    ) {
        let history = self.histories.entry(session_id.to_string()).or_default();
        history.complete |= complete;
        let again;
        if older {
            // A walk ends at the first message, or at a page that failed.
            if !history.walking || history.complete || messages.is_empty() {
                history.asking = false;
                history.walking = false;
            }
            history.retry_at =
                (messages.is_empty() && !complete).then(|| Instant::now() + RETRY_AFTER);
            again = !messages.is_empty() && !history.complete && !history.asking;
        } else {
            // The newest page of a session searched whole: go on back.
            again = history.whole && !history.complete;
        }
        let before = if older {
            self.page_end(session_id, &messages)
        } else {
            None
        };
        self.store
            .finalize_session(session_id, messages, before.as_deref(), &mut NoObserver);
        // The last page of a walk back through a long session: what its
        // pages were read into is freed, and handed back once, not held.
        if older && complete {
            crate::model::heap::give_back_freed();
        }
        // Pinned to the top (`g`), or searched: every older page, at once,
        // not a frame later.
        if again && self.wants_all(session_id) {
            self.ask_older(session_id, true);
        }
        self.on_history_page(session_id);
        self.refresh_jump_list(session_id);
    }

    /// An older page covers the stored messages up to its own newest one:
    /// the first stored message after that one bounds its range (none: to
    /// the end).
    fn page_end(&self, session_id: &str, page: &[(MessageInfo, Vec<Part>)]) -> Option<String> {
        let newest = page.iter().map(|(info, _)| info.id.as_str()).max()?;
        let session = self.store.session(session_id)?;
        let i = session
            .messages
            .partition_point(|m| m.info.id.as_str() <= newest);
        session.messages.get(i).map(|m| m.info.id.clone())
    }

    /// A new connection: failed pages may be asked for again at once.
    /// Returns whether a load was waiting to retry (a frame sends it).
    pub(super) fn retry_pages_now(&mut self) -> bool {
        let mut waiting = false;
        for history in self.histories.values_mut() {
            waiting |= history.retry_at.take().is_some();
        }
        waiting
    }

    /// Queue the loads the view needs from a live source: the open
    /// session's messages (once), and the page before the oldest message
    /// loaded while fewer than `AHEAD_SCREENS` screens are above the view.
    pub(super) fn request_loads(&mut self) {
        let (Some(live), Some(id)) = (&self.live, self.selected.clone()) else {
            return;
        };
        let opened = self.requested.insert(id.clone());
        if opened {
            let _ = live.send(LiveCommand::Open(id.clone()));
            // A copy's task cards count their children's tool calls: the
            // children are read from where they are kept too (a live
            // server's come as they stream).
            if !crate::app::session_tree::copies::is_live(&id) {
                let children: Vec<String> = self
                    .store
                    .children(&id)
                    .map(|s| s.info.id.clone())
                    .collect();
                for child in children {
                    if self.requested.insert(child.clone()) {
                        let _ = live.send(LiveCommand::Open(child));
                    }
                }
            }
        }
        if opened {
            self.archive_whole(&id);
        }
        let Some(state) = self.panes.turns.get(&id) else {
            return;
        };
        let height = crate::app::boxes::turn_inner(self.areas.turns)
            .height
            .max(1) as usize;
        if state.rows.is_empty() || state.lines_above >= AHEAD_SCREENS * height {
            return;
        }
        let all = self.wants_all(&id);
        self.ask_older(&id, all);
    }

    /// Every older page is wanted: the view is pinned to the top (`g`), or
    /// the session is searched.
    fn wants_all(&self, id: &str) -> bool {
        let whole = self.histories.get(id).is_some_and(|h| h.whole);
        let pinned = self.selected.as_deref() == Some(id)
            && self.panes.turns.get(id).is_some_and(|t| t.pinned_top);
        whole || pinned
    }

    /// A search of the open session: load its whole history.
    pub(super) fn want_whole_history(&mut self) {
        // A fleet's heading is no session to load.
        if let Some(id) = self
            .selected
            .clone()
            .filter(|id| !crate::app::session_tree::groups::is_group_key(id))
        {
            self.load_whole(&id);
        }
    }

    /// A search across sessions: load every session's whole history, in
    /// the background (each session one page at a time).
    pub(super) fn want_every_session(&mut self) {
        if self.live.is_none() {
            return;
        }
        let ids: Vec<String> = self
            .store
            .sessions()
            .iter()
            .map(|s| s.info.id.clone())
            .collect();
        for id in ids {
            self.load_whole(&id);
        }
    }

    /// Load a session's whole history, one page after the other.
    pub(crate) fn load_whole(&mut self, id: &str) {
        let Some(live) = &self.live else { return };
        if self.requested.insert(id.to_string()) {
            // The newest page first; older ones follow once it is in.
            let _ = live.send(LiveCommand::Open(id.to_string()));
            self.histories.entry(id.to_string()).or_default().whole = true;
            return;
        }
        self.histories.entry(id.to_string()).or_default().whole = true;
        self.ask_older(id, true);
    }

    /// The page before the oldest loaded, or (`all`) every older page.
    fn ask_older(&mut self, id: &str, all: bool) {
        let Some(live) = &self.live else { return };
        let history = self.histories.entry(id.to_string()).or_default();
        if history.complete
            || history.asking
            || history.retry_at.is_some_and(|t| Instant::now() < t)
        {
            return;
        }
        history.asking = true;
        history.walking = all;
        let _ = live.send(if all {
            LiveCommand::AllOlder(id.to_string())
        } else {
            LiveCommand::Older(id.to_string())
        });
    }
}
