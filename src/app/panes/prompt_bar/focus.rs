//! When a prompt may take keys. A prompt counts as seen only once a frame
//! that shows its choices, with nothing over them, has been flushed to the
//! terminal; it takes answers `arming` after that, and a key typed before
//! that frame went out never counts. A prompt never takes the
//! keyboard from a text being typed or a list over the screen: it waits,
//! says so, and takes focus when that closes.

use tokio::time::Instant;

use crate::app::panes::prompt_bar::answers::PromptUi;
use crate::app::{App, Focus, Overlay};

impl PromptUi {
    /// Whether the prompt shown takes a key typed at `now`: a flushed
    /// frame showed it uncovered, and the arming delay had passed since.
    pub fn armed_at(&self, now: Instant) -> bool {
        match (&self.armed, &self.visible, &self.current) {
            // A key typed before the prompt was seen never counts, even
            // with no delay.
            (Some((id, since)), Some(visible), Some(current)) => {
                id == current
                    && id == visible
                    && now >= *since
                    && now.duration_since(*since) >= self.arming
            }
            _ => false,
        }
    }

    /// The text box was opened for a prompt that is no longer the one shown
    /// (answered elsewhere, or gone): its keys must not reach the new one.
    pub fn editor_is_stale(&self) -> bool {
        self.editor.is_some()
            && self
                .editor_for
                .as_ref()
                .is_some_and(|o| self.current.as_deref() != Some(o.request_id.as_str()))
    }
}

impl App {
    /// Called as a frame is laid out (after `draw::layout`): which prompt
    /// this frame shows with its choices and nothing over them.
    pub(crate) fn note_prompt_visible(&mut self, now: Instant) {
        let uncovered = self.focus == Focus::Prompt
            && self.areas.prompt.is_some_and(|r| r.height > 0)
            && matches!(self.top_layer(), crate::app::router::Layer::PromptBar)
            && matches!(
                self.overlay,
                None | Some(Overlay::SidePanel | Overlay::PromptView)
            );
        self.panes.prompts.visible = if uncovered {
            self.panes.prompts.current.clone()
        } else {
            None
        };
        // Shown for the first time: it arms once this frame is out, at
        // once when there is no delay.
        let first_time = self.panes.prompts.visible.is_some()
            && self.panes.prompts.armed.as_ref().map(|(id, _)| id)
                != self.panes.prompts.visible.as_ref();
        self.panes.prompts.arming_shown = if first_time {
            !self.panes.prompts.arming.is_zero()
        } else {
            !self.prompt_armed(now)
        };
    }

    /// The frame laid out last is on the terminal now: a prompt it showed
    /// for the first time is seen from `now`. Keys that were waiting then
    /// are handled as typed at the frame's start, before it was seen.
    pub fn frame_flushed(&mut self, now: Instant) {
        match (&self.panes.prompts.visible, &self.panes.prompts.armed) {
            (Some(id), Some((armed, _))) if id == armed => {}
            (Some(id), _) => {
                self.panes.prompts.armed = Some((id.clone(), now));
                self.panes.prompts.dropped_while_arming = false;
            }
            // Covered, unfocused or gone: seen again only when drawn again.
            (None, _) => self.panes.prompts.armed = None,
        }
    }

    /// Whether the focused prompt takes a key typed at `now`: a flushed
    /// frame showed it uncovered, and the arming delay had passed since.
    pub fn prompt_armed(&self, now: Instant) -> bool {
        self.panes.prompts.armed_at(now)
    }

    /// A prompt is on screen but not armed yet: the loop ticks to redraw
    /// it when it arms.
    pub fn prompt_arming(&self, now: Instant) -> bool {
        self.panes.prompts.armed.is_some() && !self.prompt_armed(now)
    }

    /// Give the prompt bar the keyboard when a prompt waits and nothing
    /// else is being typed or shown over the screen; give it back when the
    /// queue is empty. Called after every key and every source change.
    pub(crate) fn settle_prompt_focus(&mut self) {
        match &self.panes.prompts.current {
            Some(id)
                if self.replies.is_some()
                    && self.focus != Focus::Prompt
                    && self.panes.prompts.prior_focus.is_none() =>
            {
                if self.keyboard_busy() {
                    // It waits: the bar (or a line over the overlay) says
                    // so, and the bell rings once even in a focused terminal.
                    let id = id.clone();
                    self.attention.ring_once(&id);
                } else {
                    self.panes.prompts.prior_focus = Some(self.focus);
                    self.focus = Focus::Prompt;
                }
            }
            None if self.focus == Focus::Prompt && !self.panes.prompts.editor_is_stale() => {
                self.focus = self
                    .panes
                    .prompts
                    .prior_focus
                    .take()
                    .unwrap_or(Focus::Sessions);
                if self.overlay == Some(Overlay::PromptView) {
                    self.overlay = None;
                }
            }
            _ => {}
        }
    }

    /// A prompt waits behind what the person is busy with: what that is,
    /// for the line that says how to get to the prompt.
    pub fn prompt_waiting_behind(&self) -> Option<&'static str> {
        if self.panes.prompts.current.is_none()
            || self.replies.is_none()
            || self.focus == Focus::Prompt
            || self.panes.prompts.prior_focus.is_some()
        {
            return None;
        }
        self.top_layer().busy_with()
    }
}
