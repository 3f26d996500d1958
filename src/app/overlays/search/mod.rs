//! Search in the open session (`/` as you type, `n`/`N`, `esc` clears) and
//! across sessions (the list's filter also counts hits in every session's
//! content). The searching itself runs on the worker's thread; this side
//! keeps what was asked for and what was found, and moves the view.

pub mod list;
pub mod worker;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::overlays::search::worker::{Found, Job, SearchWorker};
use crate::app::view::{Jump, thousands};
use crate::app::{App, Focus};
use crate::model::entity::search::{Hit, MAX_QUERY_CHARS, Query};

/// A session that changes while searched (streaming, pages arriving) is
/// searched again at most this often.
const SESSION_REFRESH: Duration = Duration::from_millis(300);
/// The same for the hit counts of every session.
const LIST_REFRESH: Duration = Duration::from_secs(1);

pub struct Search {
    pub worker: SearchWorker,
    pub session: Option<SessionSearch>,
    pub list: ListSearch,
}

impl Search {
    pub fn new(worker: SearchWorker) -> Search {
        Search {
            worker,
            session: None,
            list: ListSearch::default(),
        }
    }
}

/// The search in one session.
#[derive(Debug, Default)]
pub struct SessionSearch {
    pub session_id: String,
    /// What is typed.
    pub input: String,
    /// Keys go to the input.
    pub typing: bool,
    pub query: Option<Query>,
    generation: u64,
    /// Revision of the session last searched.
    searched: u64,
    searched_at: Option<Instant>,
    pub hits: Vec<Hit>,
    /// Every hit is counted (not only the first one found).
    pub counted: bool,
    pub current: Option<usize>,
    /// Go to the first hit as soon as it is found (a new query).
    jump_pending: bool,
    /// The worker answered the last search asked of it (until then, no
    /// "no match": it may still be searching pages that just came).
    answered: bool,
}

/// Hit counts per session for the list's filter.
#[derive(Debug, Default)]
pub struct ListSearch {
    query: Option<Query>,
    generation: u64,
    searched: u64,
    searched_at: Option<Instant>,
    pub counts: HashMap<String, usize>,
    /// Sessions searched and to search, as the worker last said.
    progress: (usize, usize),
    /// Enter came before any hit was found: open the first one found.
    open_when_found: bool,
}

impl SessionSearch {
    /// `3/17`, `1/…` while counting, `no match`.
    pub fn position_text(&self) -> String {
        match (self.current, self.hits.len(), self.counted) {
            (_, 0, true) => "no match".into(),
            (_, 0, false) => "searching…".into(),
            (Some(i), n, true) => format!("{}/{n}", i + 1),
            (Some(i), _, false) => format!("{}/…", i + 1),
            (None, n, _) => format!("{n} matches"),
        }
    }
}

impl App {
    /// `/` in the turn view: type a new search.
    pub(crate) fn start_search(&mut self) {
        let Some(id) = self.selected_session_id() else {
            return;
        };
        self.overlays.search.session = Some(SessionSearch {
            session_id: id,
            typing: true,
            counted: true,
            ..Default::default()
        });
        self.focus = Focus::Turns;
        self.want_whole_history();
        // Parse what is to be searched while the query is typed.
        if let Some(session) = self
            .store
            .session_arc(self.selected.as_deref().unwrap_or(""))
        {
            let generation = self.overlays.search.worker.generation();
            self.overlays.search.worker.submit(Job::Warm {
                generation,
                session,
            });
        }
    }

    /// The query changed: search again from the view's first message, and
    /// go to the first hit found.
    pub(crate) fn requery(&mut self) {
        let from = self.turn_state().map_or(0, |t| t.position.0);
        let Some(search) = self.overlays.search.session.as_mut() else {
            return;
        };
        search.query = Query::new(&search.input);
        search.hits.clear();
        search.current = None;
        search.counted = search.query.is_none();
        search.answered = search.query.is_none();
        search.jump_pending = true;
        self.submit_session_search(from);
    }

    fn submit_session_search(&mut self, from: usize) {
        let Some(search) = self.overlays.search.session.as_mut() else {
            return;
        };
        let (Some(query), Some(session)) = (
            search.query.clone(),
            self.store.session_arc(&search.session_id),
        ) else {
            return;
        };
        search.generation = self.overlays.search.worker.generation();
        search.searched = session.revision;
        search.searched_at = Some(Instant::now());
        search.answered = false;
        self.overlays.search.worker.submit(Job::Session {
            generation: search.generation,
            session,
            query,
            from,
        });
    }

    /// `n` / `N`: the next or previous hit, wrapping.
    pub(crate) fn search_step(&mut self, forward: bool) {
        let Some(search) = self.overlays.search.session.as_mut() else {
            self.notice = Some("no search: / to search this session".into());
            return;
        };
        if search.hits.is_empty() {
            return;
        }
        let n = search.hits.len();
        let next = match search.current {
            Some(i) if forward => (i + 1) % n,
            Some(i) => (i + n - 1) % n,
            None => 0,
        };
        search.current = Some(next);
        self.reveal_hit();
    }

    /// Bring the current hit into view, unfolding the card that holds it.
    fn reveal_hit(&mut self) {
        let Some(search) = &self.overlays.search.session else {
            return;
        };
        let (Some(i), Some(query)) = (search.current, search.query.clone()) else {
            return;
        };
        let Some(hit) = search.hits.get(i).cloned() else {
            return;
        };
        if self.selected.as_deref() != Some(search.session_id.as_str()) {
            return;
        }
        let (collapse, detail) = (self.config.collapse_reasoning, self.detail);
        let part = self
            .selected_session()
            .and_then(|s| s.message(&hit.message_id))
            .and_then(|m| m.part(&hit.part_id))
            .cloned();
        let Some(state) = self.turn_state_mut() else {
            return;
        };
        if let Some(part) = &part
            && crate::render::blocks::is_card(part)
        {
            if !state.is_expanded(part, collapse, detail) {
                state.toggle(&part.id);
            }
            if !state.is_full(&part.id, detail) {
                state.toggle_full(&part.id);
            }
            state.selected = Some((hit.message_id.clone(), hit.part_id.clone()));
        }
        state.jump(Jump::Match {
            message_id: hit.message_id,
            part_id: hit.part_id,
            query,
            ordinal: hit.ordinal,
        });
    }

    /// Leave the search (`esc`). Returns whether there was one.
    pub(crate) fn clear_search(&mut self) -> bool {
        self.overlays.search.session.take().is_some()
    }

    /// Results from the worker. Returns whether anything visible changed.
    pub fn on_search_results(&mut self) -> bool {
        let mut changed = false;
        for found in self.overlays.search.worker.take() {
            changed |= self.apply_found(found);
        }
        changed
    }

    fn apply_found(&mut self, found: Found) -> bool {
        match found {
            Found::First { generation, hit } => {
                let Some(search) = self
                    .overlays
                    .search
                    .session
                    .as_mut()
                    .filter(|s| s.generation == generation && s.jump_pending)
                else {
                    return false;
                };
                match hit {
                    Some(hit) => {
                        search.hits = vec![hit];
                        search.current = Some(0);
                        self.reveal_hit();
                    }
                    None => {
                        search.hits.clear();
                        search.counted = true;
                        search.answered = true;
                    }
                }
                true
            }
            Found::Session { generation, hits } => {
                let Some(search) = self
                    .overlays
                    .search
                    .session
                    .as_mut()
                    .filter(|s| s.generation == generation)
                else {
                    return false;
                };
                // Stay on the same hit when the list around it grows.
                let current = search.current.and_then(|i| search.hits.get(i)).cloned();
                search.current = current
                    .as_ref()
                    .and_then(|c| hits.iter().position(|h| h == c))
                    .or((!hits.is_empty() && search.jump_pending).then_some(0));
                let reveal = search.jump_pending && search.current.is_some() && current.is_none();
                search.hits = hits;
                search.counted = true;
                search.answered = true;
                search.jump_pending &= search.hits.is_empty();
                if reveal {
                    self.reveal_hit();
                }
                true
            }
            Found::Sessions {
                generation,
                counts,
                searched,
                total,
            } => {
                if self.overlays.search.list.generation != generation {
                    return false;
                }
                self.apply_list_counts(counts, searched, total);
                true
            }
        }
    }

    /// Before a frame: search again what changed since it was searched
    /// (not more often than the refresh periods).
    pub(crate) fn refresh_searches(&mut self) {
        let now = Instant::now();
        let due = |at: Option<Instant>, every: Duration| at.is_none_or(|t| now - t >= every);
        if let Some(search) = &self.overlays.search.session
            && search.query.is_some()
            && due(search.searched_at, SESSION_REFRESH)
            && self
                .store
                .session(&search.session_id)
                .is_some_and(|s| s.revision != search.searched)
        {
            let from = self.turn_state().map_or(0, |t| t.position.0);
            self.submit_session_search(from);
        }
        let list = &self.overlays.search.list;
        if self.panes.list.filter.is_empty() {
            if list.query.is_some() {
                self.overlays.search.list = ListSearch::default();
            }
        } else if list.query.is_some()
            && list.searched != self.store.revision()
            && due(list.searched_at, LIST_REFRESH)
        {
            self.submit_list_search();
        }
    }

    /// The search line for the status bar, when a search is on.
    pub fn search_status(&self) -> Option<(String, bool)> {
        let search = self.overlays.search.session.as_ref()?;
        if self.selected.as_deref() != Some(search.session_id.as_str()) {
            return None;
        }
        // Older pages still to come, or pages come since the last search
        // (searched again shortly): not "no match" yet.
        let older_coming = self
            .history(&search.session_id)
            .is_some_and(|h| h.loading_whole());
        let loading = older_coming
            || !search.answered
            || self
                .store
                .session(&search.session_id)
                .is_some_and(|s| s.revision != search.searched);
        let count = if search.input.is_empty() {
            String::new()
        } else if search.hits.is_empty() && loading {
            // Not "no match" while older pages are still to be searched.
            self.history_progress(&search.session_id)
        } else if older_coming {
            // The hits in the pages loaded, at once, and how far the
            // history has come.
            format!(
                "{}  {}",
                search.position_text(),
                self.history_progress(&search.session_id)
            )
        } else {
            search.position_text()
        };
        let cursor = if search.typing { "▏" } else { "" };
        Some((format!("/{}{cursor}  {count}", search.input), search.typing))
    }

    /// How much of a session's history the search has: "searching… 3,100
    /// of 28,500 messages loaded" when the whole count is known (opencode's
    /// database on this machine), else the count loaded and "more before".
    fn history_progress(&self, session_id: &str) -> String {
        let loaded = self
            .store
            .session(session_id)
            .map_or(0, |s| s.messages.len());
        let more = self.history(session_id).is_some_and(|h| h.loading_whole());
        match self.message_totals.total(session_id) {
            Some(total) if total as usize >= loaded => format!(
                "searching… {} of {} messages loaded",
                thousands(loaded),
                thousands(total as usize)
            ),
            _ if more => format!(
                "searching… {} messages loaded, more before",
                thousands(loaded)
            ),
            _ => format!("searching… {} messages loaded", thousands(loaded)),
        }
    }
}

impl Component for SessionSearch {
    /// Letters type the query (each searches again), enter keeps the
    /// hits and leaves the input, esc ends the search; other keys go to
    /// the pane.
    fn key(&mut self, key: KeyEvent, _cx: &Cx<'_>) -> Handled {
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                if self.input.chars().count() >= MAX_QUERY_CHARS {
                    return Handled::Used;
                }
                self.input.push(c);
                Handled::Asks(Ask::Requery)
            }
            KeyCode::Backspace => {
                self.input.pop();
                Handled::Asks(Ask::Requery)
            }
            KeyCode::Enter if self.input.is_empty() => Handled::Asks(Ask::Close),
            KeyCode::Enter => {
                self.typing = false;
                Handled::Used
            }
            KeyCode::Esc => Handled::Asks(Ask::Close),
            _ => Handled::Passed,
        }
    }
}
