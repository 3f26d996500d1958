//! The session list's keys: typing the filter, moving the selection,
//! folding a tree or a heading.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::ListState;
use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled};

impl Component for ListState {
    /// Typing the filter: letters narrow the list (the first match
    /// selected), enter opens the selection at its first hit, esc clears
    /// it; other keys go to the list.
    fn key(&mut self, key: KeyEvent, _cx: &Cx<'_>) -> Handled {
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c);
                Handled::Asks(Ask::Refilter { select_first: true })
            }
            KeyCode::Backspace => {
                self.filter.pop();
                Handled::Asks(Ask::Refilter {
                    select_first: false,
                })
            }
            KeyCode::Enter => {
                self.filtering = false;
                if self.filter.is_empty() {
                    return Handled::Used;
                }
                Handled::Asks(Ask::OpenFirstHit)
            }
            KeyCode::Esc => {
                self.filtering = false;
                self.filter.clear();
                Handled::Asks(Ask::Refilter {
                    select_first: false,
                })
            }
            _ => Handled::Passed,
        }
    }
}

impl App {
    /// The filter changed: count hits again, and select the first match
    /// when asked.
    pub(crate) fn refilter(&mut self, select_first: bool) {
        self.list_requery();
        if select_first {
            self.select_first_match();
        }
    }

    pub(crate) fn select_first_match(&mut self) {
        let rows = crate::app::session_tree::rows::rows(
            &self.store,
            &self.list.folded,
            &self.list.filter,
            &self.search.list.counts,
        );
        let needle = self.list.filter.to_lowercase();
        let sessions = self.store.sessions();
        if let Some(r) = rows.iter().find(|r| {
            r.header.is_none() && sessions[r.index].title().to_lowercase().contains(&needle)
        }) {
            self.selected = Some(sessions[r.index].info.id.clone());
        }
    }

    pub(crate) fn move_selection(&mut self, by: i64) {
        if self.list.rows.is_empty() {
            self.list.rows = crate::app::session_tree::rows::rows(
                &self.store,
                &self.list.folded,
                &self.list.filter,
                &self.search.list.counts,
            );
        }
        if self.list.rows.is_empty() {
            return;
        }
        let cur = self.selected_row().unwrap_or(0) as i64;
        let last = self.list.rows.len() as i64 - 1;
        let mut next = cur.saturating_add(by).clamp(0, last) as usize;
        // Project headings are not selectable (a fleet's are): keep going
        // the same way.
        let step: i64 = if by < 0 { -1 } else { 1 };
        let selectable = |r: &crate::app::session_tree::rows::SessionRow| {
            r.header.is_none() || r.group.is_some()
        };
        while !selectable(&self.list.rows[next]) {
            let n = next as i64 + step;
            if !(0..=last).contains(&n) {
                next = self.list.rows.iter().position(selectable).unwrap_or(next);
                break;
            }
            next = n as usize;
        }
        self.selected = self.row_id(&self.list.rows[next]);
        self.history.clear();
    }

    pub(crate) fn toggle_fold(&mut self) {
        if self.toggle_group() {
            return;
        }
        let Some(row) = self.selected_row().map(|i| self.list.rows[i].clone()) else {
            return;
        };
        if !row.has_children {
            return;
        }
        let id = self.store.sessions()[row.index].info.id.clone();
        if !self.list.folded.remove(&id) {
            self.list.folded.insert(id);
        }
    }
}
