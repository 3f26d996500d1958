//! The session list's keys: typing the filter, moving the selection,
//! folding a tree or a heading.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::ListState;
use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::Action;
use crate::app::session_tree::groups::is_group_key;
use crate::app::session_tree::rows::SessionRow;
use crate::model::Store;

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
            &self.panes.list.folded,
            &self.panes.list.filter,
            &self.overlays.search.list.counts,
        );
        let needle = self.panes.list.filter.to_lowercase();
        let sessions = self.store.sessions();
        if let Some(r) = rows.iter().find(|r| {
            r.header.is_none() && sessions[r.index].title().to_lowercase().contains(&needle)
        }) {
            self.selected = Some(sessions[r.index].info.id.clone());
        }
    }

    /// The rows, when no frame has laid them out yet (keys before the
    /// first frame).
    pub(crate) fn lay_out_list_rows(&mut self) {
        if self.panes.list.rows.is_empty() {
            self.panes.list.rows = crate::app::session_tree::rows::rows(
                &self.store,
                &self.panes.list.folded,
                &self.panes.list.filter,
                &self.overlays.search.list.counts,
            );
        }
    }
}

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

    /// An action of the list: move, fold; what opens or reaches a server
    /// is the app's.
    fn act(&mut self, action: Action, cx: &Cx<'_>) -> Handled {
        match action {
            Action::Up => self.act_move(-1, cx),
            Action::Down => self.act_move(1, cx),
            Action::First => self.act_move(i64::MIN / 2, cx),
            Action::Last => self.act_move(i64::MAX / 2, cx),
            Action::ToggleTree => {
                self.toggle_fold(cx);
                Handled::Used
            }
            Action::Open
            | Action::ArchiveSearch
            | Action::DismissServer
            | Action::ReplayHistory
            | Action::PinSession => Handled::Asks(Ask::Verb(action)),
            _ => Handled::Passed,
        }
    }
}

impl ListState {
    /// The row of the selection, if it is listed.
    pub fn selected_row(&self, store: &Store, selected: Option<&str>) -> Option<usize> {
        let id = selected?;
        if is_group_key(id) {
            return self
                .rows
                .iter()
                .position(|r| r.group.as_ref().is_some_and(|g| g.key == id));
        }
        self.rows
            .iter()
            .position(|r| r.header.is_none() && store.sessions()[r.index].info.id == id)
    }

    /// What selecting a row sets the selection to: a session's id, a
    /// group's key; `None` for a heading that cannot be selected.
    pub fn row_id(store: &Store, row: &SessionRow) -> Option<String> {
        match (&row.group, &row.header) {
            (Some(g), _) => Some(g.key.clone()),
            (None, Some(_)) => None,
            (None, None) => Some(store.sessions()[row.index].info.id.clone()),
        }
    }

    /// The selection `by` rows on, over headings that cannot be selected.
    fn act_move(&mut self, by: i64, cx: &Cx<'_>) -> Handled {
        if self.rows.is_empty() {
            return Handled::Used;
        }
        let cur = self.selected_row(cx.store, cx.selected).unwrap_or(0) as i64;
        let last = self.rows.len() as i64 - 1;
        let mut next = cur.saturating_add(by).clamp(0, last) as usize;
        // Project headings are not selectable (a fleet's are): keep going
        // the same way.
        let step: i64 = if by < 0 { -1 } else { 1 };
        let selectable = |r: &SessionRow| r.header.is_none() || r.group.is_some();
        while !selectable(&self.rows[next]) {
            let n = next as i64 + step;
            if !(0..=last).contains(&n) {
                next = self.rows.iter().position(selectable).unwrap_or(next);
                break;
            }
            next = n as usize;
        }
        Handled::Asks(Ask::Select(Self::row_id(cx.store, &self.rows[next])))
    }

    /// Fold or unfold the selected heading's group, or the selected
    /// session's children.
    fn toggle_fold(&mut self, cx: &Cx<'_>) {
        if self.toggle_group(cx.selected) {
            return;
        }
        let Some(row) = self
            .selected_row(cx.store, cx.selected)
            .map(|i| &self.rows[i])
        else {
            return;
        };
        if row.has_children {
            let id = cx.store.sessions()[row.index].info.id.clone();
            self.toggle(id);
        }
    }

    /// Fold or unfold the selected heading's group. Returns whether a
    /// listed heading was selected.
    pub fn toggle_group(&mut self, selected: Option<&str>) -> bool {
        let Some(key) = selected.filter(|k| is_group_key(k)) else {
            return false;
        };
        let listed = self
            .rows
            .iter()
            .any(|r| r.group.as_ref().is_some_and(|g| g.key == key));
        if listed {
            self.toggle(key.to_string());
        }
        listed
    }

    fn toggle(&mut self, key: String) {
        if !self.folded.remove(&key) {
            self.folded.insert(key);
        }
    }
}
