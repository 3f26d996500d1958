//! What the panes and overlays ask of each other, through the app that
//! owns them all: a pane never names another one.

use crate::app::App;
use crate::model::entity::search::Query;

impl App {
    /// Open the session `id` in the turn view (the usage view's costly
    /// sessions): at once when the store has it, else once it arrives.
    pub(crate) fn request_open_session(&mut self, id: &str) {
        self.wanted_session = Some(id.to_string());
        if !self.open_wanted_session(false) {
            let shown = crate::model::wire::sanitize::line(id).into_owned();
            self.notice = Some(format!("session {shown} is not loaded here yet"));
        }
    }
}

/// A request to move the turn view (from its keys, the jump list, a search
/// hit, an opened card).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Jump {
    Top,
    Bottom,
    NextTurn,
    PrevTurn,
    /// Bring this part (message id, part id) into view.
    Reveal(String, String),
    /// Put this message at the top.
    ToMessage(String),
    /// Bring the line holding occurrence `ordinal` of `query` in this part
    /// (message id, part id) into view, a third of the way down.
    Match {
        message_id: String,
        part_id: String,
        query: Query,
        ordinal: usize,
    },
}

impl crate::app::App {
    /// Open a session at a part (an archive search's hit): select it, put
    /// the turns on it, the part in view.
    pub(crate) fn show_hit(&mut self, hit: &crate::archive::Hit) {
        if self.store.session(&hit.session_id).is_none() {
            self.notice = Some("that session is no longer in the archive".into());
            return;
        }
        if let Some(cur) = self.selected.replace(hit.session_id.clone()) {
            self.history.retain(|h| *h != cur);
            self.history.push(cur);
        }
        self.focus = crate::app::Focus::Turns;
        self.navigated = true;
        let jump = match (&hit.message_id, &hit.part_id) {
            (Some(m), Some(p)) => Some(Jump::Reveal(m.clone(), p.clone())),
            (Some(m), None) => Some(Jump::ToMessage(m.clone())),
            _ => None,
        };
        if let (Some(jump), Some(t)) = (jump, self.turn_state_mut()) {
            t.jump(jump);
        }
    }
}

/// A count as people read it: `5,700`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped_by_commas() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(5_700), "5,700");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
    }
}
