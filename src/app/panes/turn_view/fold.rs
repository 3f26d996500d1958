//! Folding a card with `space`: what is open closes, whatever opened it
//! (its default, an earlier `space`, `f`, or a search hit that unfolded it
//! and showed it whole), and what is closed opens.

use crate::app::panes::turn_view::layout::TurnState;
use crate::model::Part;
use crate::render::blocks::{self, Detail};

impl TurnState {
    /// Fold the card when it is open, unfold it when it is folded. A card
    /// shown whole folds too: being whole no longer keeps it open.
    pub fn fold_or_unfold(&mut self, part: &Part, collapse_reasoning: bool, detail: Detail) {
        let open = self.is_expanded(part, collapse_reasoning, detail);
        self.full.remove(&part.id);
        // `toggled` holds the parts whose fold differs from their default.
        if blocks::expanded_by_default(part, collapse_reasoning, detail) == open {
            self.toggled.insert(part.id.clone());
        } else {
            self.toggled.remove(&part.id);
        }
    }
}
