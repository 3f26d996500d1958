//! Keys and mouse: what each pane's keys do (`layers` decides which layer
//! gets a key). Handlers change view state only.

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use crate::app::keymap::{Action, Context};
use crate::app::view::Jump;
use crate::app::{App, Focus, Overlay};

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
                self.help.scroll = 0;
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
                self.list.filtering = true;
                self.focus = Focus::Sessions;
            }
            Action::ToggleList => {
                let whole = !self.list_whole(self.areas.screen.width);
                self.list_shown = Some(whole);
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
                    self.side_panel_shown = Some(self.areas.side.is_none());
                } else if self.overlay == Some(Overlay::SidePanel) {
                    self.overlay = None;
                } else {
                    self.overlay = Some(Overlay::SidePanel);
                }
            }
            Action::Back => self.back(),
            Action::Themes => self.open_theme_picker(),
            Action::Usage => self.open_usage(),
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
                self.diff.scroll = 0;
            }
            Action::CopySession => self.copy_session(),
            Action::Abort => self.ask_abort(),
            _ => {}
        }
    }

    /// An action of the session list.
    fn act_on_list(&mut self, action: Action) {
        match action {
            Action::ArchiveSearch => self.open_archive_search(),
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::First => self.move_selection(i64::MIN / 2),
            Action::Last => self.move_selection(i64::MAX / 2),
            Action::Open => self.open_selected(),
            Action::ToggleTree => self.toggle_fold(),
            Action::DismissServer => self.dismiss_server(),
            Action::ReplayHistory => self.replay_history(),
            _ => {}
        }
    }

    /// An action of the turn view.
    fn act_on_turns(&mut self, action: Action) {
        let page = crate::app::boxes::turn_inner(self.areas.turns)
            .height
            .max(1) as i64;
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
            Action::NextCard => self.select_card(true),
            Action::PrevCard => self.select_card(false),
            Action::ToggleCard => self.toggle_selected_card(),
            Action::OpenCard => self.open_selected_card(),
            Action::FullOutput => {
                if let Some(t) = self.turn_state_mut()
                    && let Some((_, part)) = t.selected.clone()
                {
                    t.toggle_full(&part);
                }
            }
            Action::Search => self.start_search(),
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::ToggleReasoning => {
                let (collapse, detail) = (self.config.collapse_reasoning, self.detail);
                let Some(id) = self.selected.clone() else {
                    return;
                };
                let mut state = self.turns.remove(&id).unwrap_or_default();
                if let Some(session) = self.store.session(&id) {
                    state.toggle_all(session, collapse, detail);
                }
                self.turns.insert(id, state);
            }
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
        } else if !self.list.filter.is_empty() {
            self.list.filter.clear();
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
                    self.move_selection(by.signum());
                } else if inside(self.areas.turns) {
                    self.scroll(by);
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
                    let row = (m.row.saturating_sub(inner.y)) as usize + self.list.offset;
                    if let Some(r) = self.list.rows.get(row) {
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
