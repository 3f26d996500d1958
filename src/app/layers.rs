//! Who gets a key: the topmost visible layer, and only it. A confirmation
//! first, then an overlay, then a text being typed, then the prompt bar,
//! then the focused pane. A layer that does not use a key may hand it down
//! to the pane below (a text input lets ↓ move the list), never to the
//! prompt bar: a key typed for something else must not answer a prompt.

use crossterm::event::KeyEvent;
use tokio::time::Instant;

use crate::app::keymap::{Action, Key};
use crate::app::{App, Focus, Overlay};

/// What takes the keys now, topmost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// "Stop this session's run?": takes every key.
    ConfirmAbort,
    /// The offer to copy one code block (digits pick).
    CopyPick,
    /// Help, the diff view, the prompt jump list, the theme picker.
    Overlay(Overlay),
    /// The session filter being typed.
    Filter,
    /// A search of the open session being typed.
    Search,
    /// A seek being typed (`:` in the player).
    Seek,
    /// The prompt bar's text box, for a prompt that is gone: its keys go
    /// nowhere until enter or esc closes it.
    StaleEditor,
    /// The prompt bar with focus (its text box and whole view included).
    PromptBar,
    /// The focused pane.
    Pane,
}

impl Layer {
    /// What the person is busy with, for "a prompt waits: finish …".
    pub fn busy_with(self) -> Option<&'static str> {
        Some(match self {
            Layer::ConfirmAbort => "the confirmation",
            Layer::CopyPick => "the copy offer",
            Layer::Overlay(Overlay::Help) => "help",
            Layer::Overlay(Overlay::Diffs) => "the diff view",
            Layer::Overlay(Overlay::Prompts) => "the jump list",
            Layer::Overlay(Overlay::Themes) => "the theme picker",
            Layer::Overlay(Overlay::BadRecord) => "the bad record",
            Layer::Overlay(Overlay::Usage) => "the usage view",
            Layer::Overlay(Overlay::ArchiveSearch) => "the archive search",
            Layer::Overlay(Overlay::SidePanel | Overlay::PromptView) => return None,
            Layer::Filter => "the filter",
            Layer::Search => "the search",
            Layer::Seek => "the seek",
            Layer::StaleEditor => "the text box",
            Layer::PromptBar | Layer::Pane => return None,
        })
    }
}

impl App {
    /// The layer on top now.
    pub fn top_layer(&self) -> Layer {
        if self.verbs.confirm_abort.is_some() {
            return Layer::ConfirmAbort;
        }
        if self.verbs.pick.is_some() {
            return Layer::CopyPick;
        }
        match self.overlay {
            // The side panel over the turns is a view, not an input; the
            // whole prompt belongs to the prompt bar.
            Some(Overlay::SidePanel | Overlay::PromptView) | None => {}
            Some(o) => return Layer::Overlay(o),
        }
        if self.search.session.as_ref().is_some_and(|s| s.typing) {
            return Layer::Search;
        }
        if self.list.filtering {
            return Layer::Filter;
        }
        if self.seek_input.is_some() {
            return Layer::Seek;
        }
        if self.focus == Focus::Prompt && self.prompts.editor_is_stale() {
            return Layer::StaleEditor;
        }
        if self.focus == Focus::Prompt {
            return Layer::PromptBar;
        }
        Layer::Pane
    }

    /// The person is typing into something or has a list over the screen:
    /// a prompt that arrives now must not take the keyboard.
    pub fn keyboard_busy(&self) -> bool {
        self.top_layer().busy_with().is_some()
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        self.on_key_typed_at(key, Instant::now());
    }

    /// A key typed no earlier than `typed_at` (a key that waited while a
    /// frame was drawn may be as old as that frame).
    pub fn on_key_typed_at(&mut self, key: KeyEvent, typed_at: Instant) {
        // What a verb said stays until the next key; so does a notice that
        // asked for one.
        self.verbs.feedback = None;
        self.unpin_notice();
        let handed_down = match self.top_layer() {
            Layer::ConfirmAbort => {
                self.confirm_abort_key(key);
                false
            }
            Layer::CopyPick => !self.pick_key(key),
            Layer::Overlay(Overlay::Help) => {
                self.help_key(key);
                false
            }
            Layer::Overlay(Overlay::Diffs) => {
                self.diff_key(key);
                false
            }
            Layer::Overlay(Overlay::Prompts) => {
                self.jump_list_key(key);
                false
            }
            Layer::Overlay(Overlay::Themes) => {
                self.theme_picker_key(key);
                false
            }
            Layer::Overlay(Overlay::BadRecord) => {
                self.bad_record_key(key);
                false
            }
            Layer::Overlay(Overlay::Usage) => {
                self.usage_key(key);
                false
            }
            Layer::Overlay(Overlay::ArchiveSearch) => {
                self.archive_search_key(key);
                false
            }
            Layer::Overlay(Overlay::SidePanel | Overlay::PromptView) => true,
            Layer::Search => !self.search_key(key),
            Layer::Filter => !self.filter_key(key),
            Layer::Seek => !self.seek_key(key),
            Layer::StaleEditor => {
                self.stale_editor_key(key);
                false
            }
            Layer::PromptBar => !self.prompt_key(key, typed_at),
            Layer::Pane => true,
        };
        if handed_down {
            self.pane_key(key);
        }
        // A prompt that waited behind what just closed takes focus now.
        self.settle_prompt_focus();
    }

    /// The focused pane's keys, through the keymap.
    fn pane_key(&mut self, key: KeyEvent) {
        let Some(k) = Key::from_event(&key) else {
            return;
        };
        match self.keymap.action(self.context(), k) {
            Some(action) => self.act(action),
            None => {
                // Said once, in passing: the notice leaves by itself.
                let help = self.keymap.hint(Action::Help).unwrap_or_default();
                self.notice = Some(format!("{k} does nothing here ({help} for help)"));
            }
        }
    }
}
