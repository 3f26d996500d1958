//! The list's search: the filter also counts hits in every session's
//! content (on the worker's thread), says how far it got, and Enter opens
//! the session that holds a hit, at the hit.

use std::time::Instant;

use crate::app::overlays::search::SessionSearch;
use crate::app::overlays::search::worker::Job;
use crate::app::view::{Jump, thousands};
use crate::app::{App, Focus};
use crate::model::entity::search::Query;

/// Enter on the list while its search has found nothing yet.
const OPENS_WHEN_FOUND: &str = "searching… the first session found opens";

impl App {
    /// Hit counts from the worker (of every session when `searched ==
    /// total`).
    pub(super) fn apply_list_counts(
        &mut self,
        counts: Vec<(String, usize)>,
        searched: usize,
        total: usize,
    ) {
        self.overlays.search.list.counts = counts.into_iter().collect();
        self.overlays.search.list.progress = (searched, total);
        if self.overlays.search.list.open_when_found {
            self.overlays.search.list.open_when_found = false;
            self.open_at_first_hit();
            if self.focus == Focus::Turns && self.notice.as_deref() == Some(OPENS_WHEN_FOUND) {
                self.notice = None;
            }
            return;
        }
        // The selection follows the hits when it is no longer listed.
        if self.focus == Focus::Sessions
            && !self.panes.list.filter.is_empty()
            && !self.is_listed(self.selected.as_deref())
        {
            self.select_first_hit();
        }
    }

    /// The list's filter changed: count hits in every session's content.
    pub(crate) fn list_requery(&mut self) {
        self.overlays.search.list.open_when_found = false;
        self.overlays.search.list.query = Query::new(&self.panes.list.filter);
        self.overlays.search.list.counts.clear();
        self.submit_list_search();
        if self.overlays.search.list.query.is_some() {
            self.want_every_session();
        }
    }

    pub(super) fn submit_list_search(&mut self) {
        let Some(query) = self.overlays.search.list.query.clone() else {
            return;
        };
        let list = &mut self.overlays.search.list;
        list.generation = self.overlays.search.worker.generation();
        list.searched = self.store.revision();
        list.searched_at = Some(Instant::now());
        // A search that starts again keeps what it found until it is done.
        list.progress = (0, self.store.sessions().len());
        self.overlays.search.worker.submit(Job::Sessions {
            generation: list.generation,
            sessions: self.store.sessions().to_vec(),
            query,
        });
    }

    /// While the list's filter is searching the sessions' content: how far
    /// it got ("searching… 3 of 12 sessions"), or whose history is still
    /// loading. `None` once every session was searched whole.
    pub fn list_search_progress(&self) -> Option<String> {
        self.list_search_progress_in(false)
    }

    /// The same, short, for the filter's line: "searching… 3/12".
    pub fn list_search_progress_short(&self) -> Option<String> {
        self.list_search_progress_in(true)
    }

    fn list_search_progress_in(&self, short: bool) -> Option<String> {
        let list = &self.overlays.search.list;
        if self.panes.list.filter.is_empty() || list.query.is_none() {
            return None;
        }
        let (searched, total) = list.progress;
        if searched < total {
            let (searched, total) = (thousands(searched), thousands(total));
            return Some(if short {
                format!("searching… {searched}/{total}")
            } else {
                format!("searching… {searched} of {total} sessions")
            });
        }
        if short {
            return self
                .histories
                .values()
                .any(|h| h.loading_whole())
                .then(|| "searching…".into());
        }
        let loading = self
            .histories
            .values()
            .filter(|h| h.loading_whole())
            .count();
        match loading {
            0 => None,
            1 => Some("searching… loading 1 session's history".into()),
            n => Some(format!("searching… loading {n} sessions' history")),
        }
    }

    /// Whether a session is a hit of the list's filter: in its title or in
    /// its content.
    fn is_list_hit(&self, id: Option<&str>) -> bool {
        let Some(session) = id.and_then(|id| self.store.session(id)) else {
            return false;
        };
        self.overlays
            .search
            .list
            .counts
            .contains_key(session.info.id.as_str())
            || session
                .title()
                .to_lowercase()
                .contains(&self.panes.list.filter.to_lowercase())
    }

    /// The ids of the sessions the filtered list shows, in order.
    fn listed(&self) -> Vec<String> {
        let rows = crate::app::session_tree::rows::rows(
            &self.store,
            &self.panes.list.folded,
            &self.panes.list.filter,
            &self.overlays.search.list.counts,
        );
        let sessions = self.store.sessions();
        rows.iter()
            .filter(|r| r.header.is_none())
            .map(|r| sessions[r.index].info.id.clone())
            .collect()
    }

    fn is_listed(&self, id: Option<&str>) -> bool {
        id.is_some_and(|id| self.listed().iter().any(|l| l == id))
    }

    /// Select the first session the list shows that is a hit (not an
    /// ancestor shown only for a hit below it). Returns whether one was.
    fn select_first_hit(&mut self) -> bool {
        let hit = self
            .listed()
            .into_iter()
            .find(|id| self.is_list_hit(Some(id)));
        let found = hit.is_some();
        if let Some(id) = hit {
            self.selected = Some(id);
        }
        found
    }

    /// Enter on a session found by the list's filter: open it at its first
    /// hit, with the filter as the session's search. The selection is kept
    /// only when it is a hit; else the first hit listed is opened.
    pub(crate) fn open_at_first_hit(&mut self) {
        if !self.panes.list.filter.is_empty()
            && !self.is_listed(self.selected.as_deref())
            && !self.select_first_hit()
        {
            // Still searching: the first hit found opens.
            let searching = self.list_search_progress().is_some();
            self.overlays.search.list.open_when_found = searching;
            self.notice = Some(if searching {
                OPENS_WHEN_FOUND.into()
            } else {
                "no session matches".into()
            });
            return;
        }
        // A fleet's heading has nothing to open.
        let Some(id) = self.selected_session_id() else {
            return;
        };
        self.focus = Focus::Turns;
        if self.panes.list.filter.is_empty() {
            return;
        }
        self.overlays.search.session = Some(SessionSearch {
            session_id: id,
            input: self.panes.list.filter.clone(),
            ..Default::default()
        });
        self.want_whole_history();
        // From the start: the first hit of the session.
        if let Some(t) = self.turn_state_mut() {
            t.jump(Jump::Top);
        }
        if let Some(search) = self.overlays.search.session.as_mut() {
            search.query = Query::new(&search.input);
            search.jump_pending = true;
        }
        self.submit_session_search(0);
    }
}
