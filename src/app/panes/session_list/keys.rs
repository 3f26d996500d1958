//! The session list's keys: typing the filter, moving the selection,
//! folding a tree or a heading.

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::App;

impl App {
    /// Typing the session filter. Returns whether the key was used.
    pub(crate) fn filter_key(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                self.list.filter.push(c);
                self.list_requery();
                self.select_first_match();
            }
            KeyCode::Backspace => {
                self.list.filter.pop();
                self.list_requery();
            }
            KeyCode::Enter => {
                self.list.filtering = false;
                if !self.list.filter.is_empty() && self.selected.is_some() {
                    self.open_at_first_hit();
                }
            }
            KeyCode::Esc => {
                self.list.filtering = false;
                self.list.filter.clear();
                self.list_requery();
            }
            _ => return false,
        }
        true
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
