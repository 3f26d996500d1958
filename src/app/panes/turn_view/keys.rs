//! The turn view's keys and clicks: scrolling, jumps, card selection,
//! folding, opening a task's session.

use super::layout::{Pos, TurnState};
use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled, app_cx};
use crate::app::keymap::Action;
use crate::app::view::Jump;
use crate::model::PartBody;
use crate::model::entity::shown::{Shown, shown};
use crate::render::blocks;

/// How far card navigation looks for the next card.
const CARD_SEARCH_LIMIT: usize = 20_000;

impl Component for TurnState {
    /// An action of the turn view, on the selected session.
    fn act(&mut self, action: Action, cx: &Cx<'_>) -> Handled {
        let page = i64::from(cx.turn_rows.max(1));
        match action {
            Action::ScrollUp => self.scroll(-1),
            Action::ScrollDown => self.scroll(1),
            Action::HalfPageUp => self.scroll(-(page / 2).max(1)),
            Action::HalfPageDown => self.scroll((page / 2).max(1)),
            Action::PageUp => self.scroll(-(page - 1).max(1)),
            Action::PageDown => self.scroll((page - 1).max(1)),
            Action::Top => self.jump(Jump::Top),
            Action::Bottom => self.jump(Jump::Bottom),
            Action::NextTurn => self.jump(Jump::NextTurn),
            Action::PrevTurn => self.jump(Jump::PrevTurn),
            Action::NextCard => self.select_card(cx, true),
            Action::PrevCard => self.select_card(cx, false),
            Action::ToggleCard => self.toggle_selected_card(cx),
            Action::OpenCard => return self.open_selected_card(cx),
            Action::FullOutput => {
                if let Some((_, part)) = self.selected.clone() {
                    self.toggle_full(&part);
                }
            }
            Action::ToggleReasoning => {
                if let Some(session) = cx.session() {
                    self.toggle_all(session, cx.collapse_reasoning, cx.detail);
                }
            }
            // What the app does with the selection: search, copy, open.
            Action::Search
            | Action::SearchNext
            | Action::SearchPrev
            | Action::Copy
            | Action::Pager
            | Action::Editor => return Handled::Asks(Ask::Verb(action)),
            _ => return Handled::Passed,
        }
        Handled::Used
    }
}

impl TurnState {
    /// Move the card selection to the next (or previous) tool or reasoning
    /// part, starting from the selection or the top of the view.
    fn select_card(&mut self, cx: &Cx<'_>, forward: bool) {
        let Some(session) = cx.session() else {
            return;
        };
        // The selection counts only while it is on screen: scrolled away,
        // the next card is the one after the top of what is visible.
        let selected = self
            .selected
            .as_ref()
            .filter(|(m, p)| self.rows.is_empty() || self.is_visible(session, m, p));
        let start = selected
            .and_then(|(m, p)| crate::app::panes::turn_view::layout::find_pos(session, m, Some(p)))
            .or_else(|| self.rows.first().map(|r| r.pos))
            .or_else(|| {
                (!session.messages.is_empty()).then_some(Pos {
                    message: 0,
                    slot: 0,
                })
            });
        let Some(start) = start else { return };
        let step = |p: Pos| {
            if forward {
                crate::app::panes::turn_view::layout::next_pos(session, p)
            } else {
                crate::app::panes::turn_view::layout::prev_pos(session, p)
            }
        };
        let is_card_at = |p: Pos| {
            p.part().is_some_and(|pi| {
                let message = &session.messages[p.message];
                message.parts.get(pi).is_some_and(blocks::is_card)
                    && !matches!(shown(message, pi), Shown::Hidden)
            })
        };
        // With nothing selected yet, a card at the start itself counts.
        let mut cur = if selected.is_none() && is_card_at(start) {
            Some(start)
        } else {
            step(start)
        };
        let mut n = 0;
        while let Some(p) = cur {
            if is_card_at(p) {
                let m = &session.messages[p.message];
                let ids = (m.info.id.clone(), m.parts[p.part().unwrap_or(0)].id.clone());
                self.jump(Jump::Reveal(ids.0.clone(), ids.1.clone()));
                self.selected = Some(ids);
                return;
            }
            n += 1;
            if n > CARD_SEARCH_LIMIT {
                return;
            }
            cur = step(p);
        }
    }

    fn toggle_selected_card(&mut self, cx: &Cx<'_>) {
        if let Some((mid, pid)) = self.selected.clone() {
            self.fold_or_unfold_card(cx, &mid, &pid);
        }
    }

    /// Fold an open card (however it was opened), unfold a folded one.
    pub(crate) fn fold_or_unfold_card(&mut self, cx: &Cx<'_>, message_id: &str, part_id: &str) {
        let Some(part) = cx
            .session()
            .and_then(|s| s.message(message_id))
            .and_then(|m| m.part(part_id))
        else {
            return;
        };
        self.fold_or_unfold(part, cx.collapse_reasoning, cx.detail);
    }

    /// Enter on a task card opens its child session (when it is here); on
    /// any other card it folds.
    fn open_selected_card(&mut self, cx: &Cx<'_>) -> Handled {
        let Some((mid, pid)) = self.selected.clone() else {
            return Handled::Used;
        };
        let Some(session) = cx.session() else {
            return Handled::Used;
        };
        let child = session
            .message(&mid)
            .and_then(|m| m.part(&pid))
            .and_then(|p| match &p.body {
                PartBody::Tool(t) if t.tool == "task" => p.tool_state_field("metadata"),
                _ => None,
            })
            .and_then(|meta| {
                meta.get("sessionId")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            // A child's id in the payload is its server's: scoped as its
            // parent's.
            .map(|child| crate::model::store::fleet::like(&session.info.id, &child));
        match child {
            Some(child) if cx.store.session(&child).is_some() => {
                Handled::Asks(Ask::OpenChild(child))
            }
            _ => {
                self.fold_or_unfold_card(cx, &mid, &pid);
                Handled::Used
            }
        }
    }
}

impl App {
    /// A click on a card selects and folds or unfolds it.
    pub(crate) fn click_turn_row(&mut self, row: usize) {
        let Some(id) = self.selected.clone() else {
            return;
        };
        let cx = app_cx!(self);
        let Some(session) = cx.session() else {
            return;
        };
        let state = self.panes.turns.entry(id).or_default();
        let Some(pos) = state.pos_at_row(row) else {
            return;
        };
        let Some(part) = pos
            .part()
            .and_then(|pi| session.messages[pos.message].parts.get(pi))
        else {
            return;
        };
        if !blocks::is_card(part) {
            return;
        }
        let ids = (
            session.messages[pos.message].info.id.clone(),
            part.id.clone(),
        );
        state.fold_or_unfold_card(&cx, &ids.0, &ids.1);
        state.selected = Some(ids);
    }
}
