//! The turn view's keys and clicks: scrolling, jumps, card selection,
//! folding, opening a task's session.

use crate::app::panes::turn_view::layout::Pos;
use crate::app::view::Jump;
use crate::app::{App, Focus};
use crate::model::PartBody;
use crate::model::entity::shown::{Shown, shown};
use crate::render::blocks;

/// How far card navigation looks for the next card.
const CARD_SEARCH_LIMIT: usize = 20_000;

impl App {
    pub(crate) fn scroll(&mut self, lines: i64) {
        if let Some(t) = self.turn_state_mut() {
            t.scroll(lines);
        }
    }

    pub(crate) fn jump(&mut self, jump: Jump) {
        if let Some(t) = self.turn_state_mut() {
            t.jump(jump);
        }
    }

    /// Move the card selection to the next (or previous) tool or reasoning
    /// part, starting from the selection or the top of the view.
    pub(crate) fn select_card(&mut self, forward: bool) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let default_state = Default::default();
        let state = self.turn_state().unwrap_or(&default_state);
        // The selection counts only while it is on screen: scrolled away,
        // the next card is the one after the top of what is visible.
        let selected = state
            .selected
            .as_ref()
            .filter(|(m, p)| state.rows.is_empty() || state.is_visible(session, m, p));
        let start = selected
            .and_then(|(m, p)| crate::app::panes::turn_view::layout::find_pos(session, m, Some(p)))
            .or_else(|| state.rows.first().map(|r| r.pos))
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
                let t = self.turn_state_mut().expect("a session is selected");
                t.jump(Jump::Reveal(ids.0.clone(), ids.1.clone()));
                t.selected = Some(ids);
                self.focus = Focus::Turns;
                return;
            }
            n += 1;
            if n > CARD_SEARCH_LIMIT {
                return;
            }
            cur = step(p);
        }
    }

    pub(crate) fn toggle_selected_card(&mut self) {
        let Some((mid, pid)) = self.turn_state().and_then(|t| t.selected.clone()) else {
            return;
        };
        self.fold_or_unfold(&mid, &pid);
    }

    /// Fold an open card (however it was opened), unfold a folded one.
    fn fold_or_unfold(&mut self, message_id: &str, part_id: &str) {
        let (collapse, detail) = (self.config.collapse_reasoning, self.detail);
        let Some(part) = self
            .selected_session()
            .and_then(|s| s.message(message_id))
            .and_then(|m| m.part(part_id))
            .cloned()
        else {
            return;
        };
        if let Some(t) = self.turn_state_mut() {
            t.fold_or_unfold(&part, collapse, detail);
        }
    }

    /// Enter on a task card opens its child session; on any other card it folds.
    pub(crate) fn open_selected_card(&mut self) {
        let Some((mid, pid)) = self.turn_state().and_then(|t| t.selected.clone()) else {
            return;
        };
        // A child's id in the payload is its server's: scoped as its parent's.
        let parent_session = self.selected.clone().unwrap_or_default();
        let child = self
            .selected_session()
            .and_then(|s| s.message(&mid))
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
            .map(|child| crate::model::store::fleet::like(&parent_session, &child));
        match child {
            Some(child) if self.store.session(&child).is_some() => {
                if let Some(cur) = self.selected.replace(child) {
                    self.history.push(cur);
                }
            }
            _ => self.toggle_selected_card(),
        }
    }

    /// A click on a card selects and folds or unfolds it.
    pub(crate) fn click_turn_row(&mut self, row: usize) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let Some(pos) = self.turn_state().and_then(|t| t.pos_at_row(row)) else {
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
        self.fold_or_unfold(&ids.0, &ids.1);
        if let Some(t) = self.turn_state_mut() {
            t.selected = Some(ids);
        }
    }
}
