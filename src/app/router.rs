//! The router: every terminal event (a key, the mouse, focus, a resize)
//! and where it goes. A key goes to the topmost visible layer, and only
//! to it: a confirmation first, then an overlay, then a text being typed,
//! then the prompt bar, then the focused pane. A layer that does not use a
//! key may hand it down to the pane below (a text input lets ↓ move the
//! list), never to the prompt bar: a key typed for something else must not
//! answer a prompt. A pane's key becomes an action through the keymap, and
//! the action goes to the pane it belongs to (`Action::context`).
//! Handlers change view state only.

use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use tokio::time::Instant;

use crate::app::component::{Ask, Component, Handled, app_cx};
use crate::app::keymap::{Action, Context, Key};
use crate::app::overlays::bad_record::BadRecord;
use crate::app::view::Jump;
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
            Layer::Overlay(Overlay::Audit) => "the answers on record",
            Layer::Overlay(Overlay::Insights) => "the insights",
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
        if self
            .overlays
            .search
            .session
            .as_ref()
            .is_some_and(|s| s.typing)
        {
            return Layer::Search;
        }
        if self.panes.list.filtering {
            return Layer::Filter;
        }
        if self.panes.seek_input.is_some() {
            return Layer::Seek;
        }
        if self.focus == Focus::Prompt && self.panes.prompts.editor_is_stale() {
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
        self.rows_for_input();
        // What a verb said stays until the next key; so does a notice that
        // asked for one.
        self.verbs.feedback = None;
        self.unpin_notice();
        let layer = self.top_layer();
        let handled = self.layer_key(layer, key, typed_at);
        let handed_down = self.handled(layer, handled);
        // An answer given with the whole prompt in view that asks for more
        // (a text to type, "always" to confirm): the view makes way.
        if self.panes.prompts.view_makes_way() {
            self.overlay = None;
        }
        if handed_down {
            self.pane_key(key);
        }
        // A prompt that waited behind what just closed takes focus now.
        self.settle_prompt_focus();
    }

    /// The layer on top takes the key.
    fn layer_key(&mut self, layer: Layer, key: KeyEvent, typed_at: Instant) -> Handled {
        let cx = app_cx!(self, typed_at);
        match layer {
            Layer::ConfirmAbort => self
                .verbs
                .confirm_abort
                .as_mut()
                .map_or(Handled::Used, |c| c.key(key, &cx)),
            Layer::CopyPick => self
                .verbs
                .pick
                .as_mut()
                .map_or(Handled::Passed, |p| p.key(key, &cx)),
            Layer::Overlay(Overlay::Help) => self.overlays.help.key(key, &cx),
            Layer::Overlay(Overlay::Diffs) => self.overlays.diff.key(key, &cx),
            Layer::Overlay(Overlay::Prompts) => self.overlays.jump_list.key(key, &cx),
            Layer::Overlay(Overlay::Themes) => self
                .overlays
                .theme_picker
                .as_mut()
                .map_or(Handled::Asks(Ask::Close), |p| p.key(key, &cx)),
            Layer::Overlay(Overlay::BadRecord) => BadRecord.key(key, &cx),
            Layer::Overlay(Overlay::Usage) => self.overlays.usage.key(key, &cx),
            Layer::Overlay(Overlay::ArchiveSearch) => self.archive.view.key(key, &cx),
            Layer::Overlay(Overlay::Audit) => self.overlays.audit.key(key, &cx),
            Layer::Overlay(Overlay::Insights) => self.overlays.insights.key(key, &cx),
            // Views, not inputs: the panes below take the keys.
            Layer::Overlay(Overlay::SidePanel | Overlay::PromptView) => Handled::Passed,
            Layer::Search => self
                .overlays
                .search
                .session
                .as_mut()
                .map_or(Handled::Passed, |s| s.key(key, &cx)),
            Layer::Filter => self.panes.list.key(key, &cx),
            Layer::Seek => self
                .panes
                .seek_input
                .as_mut()
                .map_or(Handled::Passed, |s| s.key(key, &cx)),
            Layer::StaleEditor | Layer::PromptBar => self.panes.prompts.key(key, &cx),
            Layer::Pane => Handled::Passed,
        }
    }

    /// Do what the layer asked; whether the key goes on down to the pane.
    pub(crate) fn handled(&mut self, layer: Layer, handled: Handled) -> bool {
        // A confirmation goes with any key; the copy offer with any key
        // it does not use.
        match (layer, &handled) {
            (Layer::ConfirmAbort, _) | (Layer::CopyPick, Handled::Passed) => self.close(layer),
            _ => {}
        }
        match handled {
            Handled::Used => false,
            Handled::Passed => true,
            Handled::Asks(ask) => {
                self.grant(layer, ask);
                false
            }
        }
    }

    /// Close the layer.
    fn close(&mut self, layer: Layer) {
        match layer {
            Layer::ConfirmAbort => self.verbs.confirm_abort = None,
            Layer::CopyPick => self.verbs.pick = None,
            Layer::Overlay(_) => self.overlay = None,
            Layer::Search => self.overlays.search.session = None,
            Layer::Filter => self.panes.list.filtering = false,
            Layer::Seek => self.panes.seek_input = None,
            Layer::StaleEditor | Layer::PromptBar | Layer::Pane => {}
        }
    }

    /// What a layer asks beyond itself.
    fn grant(&mut self, layer: Layer, ask: Ask) {
        match ask {
            Ask::Close => self.close(layer),
            Ask::OpenSession(id) => {
                self.close(layer);
                self.request_open_session(&id);
            }
            Ask::JumpTo { session, message } => {
                self.close(layer);
                if self.selected.as_deref() == Some(session.as_str())
                    && let Some(t) = self.turn_state_mut()
                {
                    t.jump(Jump::ToMessage(message));
                    self.focus = Focus::Turns;
                }
            }
            Ask::PreviewTheme(name) => self.preview_theme(&name),
            Ask::KeepTheme => self.keep_theme(),
            Ask::RestoreTheme => self.restore_theme(),
            Ask::UsageRange(range) => self.usage_range(range),
            Ask::InsightsRead(drill) => self.insights_read(drill),
            Ask::ArchiveQuery => self.send_archive_query(),
            Ask::OpenHit(hit) => {
                self.close(layer);
                self.open_archived(*hit);
            }
            Ask::Abort(id) => self.abort_session(id),
            Ask::Say(what) => self.verbs.say(what),
            Ask::Seek(text) => {
                self.close(layer);
                self.seek_typed(&text);
            }
            Ask::Requery => self.requery(),
            Ask::Refilter { select_first } => self.refilter(select_first),
            Ask::OpenFirstHit => {
                if self.selected.is_some() {
                    self.open_at_first_hit();
                }
            }
            Ask::Copy(content) => {
                self.close(layer);
                self.copy(content);
            }
            Ask::OpenChild(child) => {
                if let Some(parent) = self.selected.replace(child) {
                    self.history.push(parent);
                }
            }
            Ask::Verb(action) => self.verb(action),
            Ask::Reply(reply) => self.send_reply(reply),
            Ask::LeavePrompt => self.release_prompt_focus(),
            Ask::ShowSession(id) => {
                self.selected = Some(id);
                self.history.clear();
            }
            Ask::PromptView(open) => {
                self.overlay = open.then_some(Overlay::PromptView);
            }
            Ask::Notice(text) => self.notice = Some(text),
            Ask::Play { from_start } => self.play(from_start),
            Ask::SeekRecords { target, at } => self.seek_records(target, at),
            Ask::SeekTime(ms) => self.seek_time(ms),
            Ask::TypeSeek => self.panes.seek_input = Some(Default::default()),
            Ask::Select(id) => {
                self.selected = id;
                self.history.clear();
            }
        }
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

/// Lines the mouse wheel scrolls.
const WHEEL_LINES: i64 = 3;

impl App {
    /// A terminal event. Returns whether to redraw.
    pub fn on_terminal_event(&mut self, event: Event) -> bool {
        self.on_terminal_event_typed_at(event, tokio::time::Instant::now())
    }

    /// A terminal event that came in no earlier than `typed_at`.
    pub fn on_terminal_event_typed_at(
        &mut self,
        event: Event,
        typed_at: tokio::time::Instant,
    ) -> bool {
        match event {
            Event::Key(key) if self.is_suspend_key(&key) => {
                self.act(Action::Suspend);
                true
            }
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.on_key_typed_at(key, typed_at);
                true
            }
            Event::Mouse(m) => self.on_mouse(m),
            Event::Resize(..) => true,
            Event::FocusGained => {
                self.attention.focused = Some(true);
                false
            }
            Event::FocusLost => {
                self.attention.focused = Some(false);
                false
            }
            _ => false,
        }
    }

    pub fn act(&mut self, action: Action) {
        self.note_navigation(action);
        match action.context() {
            Context::Global => self.act_everywhere(action),
            Context::Sessions => self.act_on_list(action),
            Context::Turns => self.act_on_turns(action),
            Context::Player => self.player_act(action),
            // The keys of layers that take every key (lists, the prompt
            // bar, confirmations, the diff view) never come here.
            Context::List | Context::Prompt | Context::Confirm | Context::Diff => {}
        }
    }

    /// An action of any pane.
    fn act_everywhere(&mut self, action: Action) {
        match action {
            Action::Quit => self.quit = true,
            Action::Suspend => {
                let stop = crate::app::terminal::job_control::Job::Stop;
                self.verbs.request = Some(crate::app::msg::Request::Suspend(stop));
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help);
                self.overlays.help.scroll = 0;
            }
            Action::BadRecord => self.show_bad_record(),
            Action::FocusNext => {
                let prompt = self.current_prompt().is_some();
                self.focus = match self.focus {
                    Focus::Sessions => Focus::Turns,
                    Focus::Turns if prompt => Focus::Prompt,
                    Focus::Turns | Focus::Prompt => Focus::Sessions,
                }
            }
            Action::Filter => {
                self.panes.list.filtering = true;
                self.focus = Focus::Sessions;
            }
            Action::ToggleList => {
                let whole = !self.list_whole(self.areas.screen.width);
                self.panes.list_shown = Some(whole);
                let key = self.keymap.hint(Action::ToggleList).unwrap_or_default();
                self.verbs.say(if whole {
                    format!("session list shown ({key} hides it)")
                } else {
                    format!("session list hidden ({key} shows it)")
                });
            }
            Action::ToggleSidePanel => {
                if self.side_panel_docked(self.areas.screen.width) {
                    // Whatever it did by itself, the key turns it over.
                    self.panes.side_panel_shown = Some(self.areas.side.is_none());
                } else if self.overlay == Some(Overlay::SidePanel) {
                    self.overlay = None;
                } else {
                    self.overlay = Some(Overlay::SidePanel);
                }
            }
            Action::Back => self.back(),
            Action::Themes => self.open_theme_picker(),
            Action::Usage => self.open_usage(),
            Action::Audit => self.open_audit(),
            Action::Insights => self.open_insights(),
            Action::Times => {
                self.show_times = !self.show_times;
                self.verbs.say(if self.show_times {
                    "wall-clock times on"
                } else {
                    "wall-clock times off"
                });
            }
            Action::PromptList => self.open_jump_list(),
            Action::CycleDetail => {
                self.detail = self.detail.next();
                self.verbs
                    .say(format!("detail: {}", self.detail.describe()));
            }
            Action::Diffs => {
                self.overlay = Some(Overlay::Diffs);
                self.overlays.diff.scroll = 0;
            }
            Action::CopySession => self.copy_session(),
            Action::Abort => self.ask_abort(),
            _ => {}
        }
    }

    /// An action of the session list: the list takes it.
    fn act_on_list(&mut self, action: Action) {
        self.lay_out_list_rows();
        let cx = app_cx!(self);
        let handled = self.panes.list.act(action, &cx);
        let _ = self.handled(Layer::Pane, handled);
    }

    /// An action of the turn view: the selected session's view takes it.
    fn act_on_turns(&mut self, action: Action) {
        // A heading has no turns; the app's verbs say so themselves.
        let Some(id) = self.selected_session_id() else {
            self.verb(action);
            return;
        };
        let cx = app_cx!(self);
        let handled = self.panes.turns.entry(id).or_default().act(action, &cx);
        let _ = self.handled(Layer::Pane, handled);
    }

    /// What the app does on a pane's selection.
    fn verb(&mut self, action: Action) {
        match action {
            Action::ArchiveSearch => self.open_archive_search(),
            Action::Open => self.open_selected(),
            Action::DismissServer => self.dismiss_server(),
            Action::ReplayHistory => self.replay_history(),
            Action::PinSession => self.pin_session(),
            Action::Search => self.start_search(),
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::Copy => self.copy_selected(),
            Action::Pager => self.open_in(crate::app::verbs::handover::Program::Pager),
            Action::Editor => self.open_in(crate::app::verbs::handover::Program::Editor),
            _ => {}
        }
    }

    /// Enter on the list: a group heading folds or unfolds; a session
    /// opens (at the filter's first hit in it, when there is one).
    fn open_selected(&mut self) {
        if !self.toggle_group() && self.selected.is_some() {
            self.open_at_first_hit();
        }
    }

    fn back(&mut self) {
        if self.overlay.is_some() {
            self.overlay = None;
        } else if self.focus == Focus::Turns && self.clear_search() {
        } else if !self.panes.list.filter.is_empty() {
            self.panes.list.filter.clear();
            self.list_requery();
        } else if let Some(parent) = self.history.pop() {
            self.selected = Some(parent);
            self.focus = Focus::Turns;
        } else if let Some(parent) = self
            .selected_session()
            .and_then(|s| s.info.parent_id.clone())
            && self.store.session(&parent).is_some()
        {
            self.selected = Some(parent);
        } else {
            self.focus = Focus::Sessions;
        }
    }

    fn on_mouse(&mut self, m: MouseEvent) -> bool {
        if !self.config.mouse {
            return false;
        }
        self.rows_for_input();
        let at = Position::new(m.column, m.row);
        let inside = |r: Rect| r.contains(at);
        match m.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let by = if m.kind == MouseEventKind::ScrollDown {
                    WHEEL_LINES
                } else {
                    -WHEEL_LINES
                };
                self.navigated = true;
                if inside(self.areas.sessions) {
                    self.act_on_list(if by < 0 { Action::Up } else { Action::Down });
                } else if inside(self.areas.turns) {
                    if let Some(t) = self.turn_state_mut() {
                        t.scroll(by);
                    }
                } else {
                    return false;
                }
                true
            }
            MouseEventKind::Down(MouseButton::Left) | MouseEventKind::Drag(MouseButton::Left)
                if self.areas.timeline.is_some_and(inside) =>
            {
                let bar = self.areas.timeline.unwrap_or_default();
                let cell = m.column - bar.x;
                self.seek_fraction(cell as f64 / (bar.width.max(2) - 1) as f64);
                true
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.navigated = true;
                if inside(self.areas.sessions) && self.areas.list_bar {
                    self.focus = Focus::Sessions;
                    true
                } else if inside(self.areas.sessions) {
                    let inner = crate::app::boxes::list_inner(self.areas.sessions);
                    let row = (m.row.saturating_sub(inner.y)) as usize + self.panes.list.offset;
                    if let Some(r) = self.panes.list.rows.get(row) {
                        // A project heading that cannot be selected stands
                        // for its first session.
                        let first = || self.store.sessions()[r.index].info.id.clone();
                        self.selected = Some(self.row_id(r).unwrap_or_else(first));
                        self.history.clear();
                    }
                    self.focus = Focus::Sessions;
                    true
                } else if inside(self.areas.turns) {
                    self.focus = Focus::Turns;
                    let inner = crate::app::boxes::turn_inner(self.areas.turns);
                    let row = m.row.saturating_sub(inner.y) as usize;
                    self.click_turn_row(row);
                    true
                } else {
                    false
                }
            }
            _ => false,
        }
    }
}
