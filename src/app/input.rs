//! Keys and mouse: what each pane's keys do (`layers` decides which layer
//! gets a key). Handlers change view state only.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use crate::app::keymap::{Action, Context, Key};
use crate::app::panes::turn_view::layout::{Jump, Pos};
use crate::app::{App, Focus, Overlay};
use crate::model::entity::part::PartBody;
use crate::model::entity::shown::{Shown, shown};
use crate::render::blocks;

/// Lines the mouse wheel scrolls.
const WHEEL_LINES: i64 = 3;
/// How far card navigation looks for the next card.
const CARD_SEARCH_LIMIT: usize = 20_000;

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

    /// The diff overlay's keys: choose a file, scroll its diff, close.
    pub(super) fn diff_key(&mut self, key: KeyEvent) {
        let files = self.selected_session().map_or(0, |s| {
            crate::app::panes::side_panel::modified_files(s).len()
        });
        let Some(action) = Key::from_event(&key).and_then(|k| self.keymap.only(Context::Diff, k))
        else {
            return;
        };
        match action {
            Action::DiffClose => self.overlay = None,
            Action::DiffNextFile => {
                self.diff_file = (self.diff_file + 1).min(files.saturating_sub(1));
                self.diff_scroll = 0;
            }
            Action::DiffPrevFile => {
                self.diff_file = self.diff_file.saturating_sub(1);
                self.diff_scroll = 0;
            }
            Action::DiffScrollDown => self.diff_scroll = self.diff_scroll.saturating_add(10),
            Action::DiffScrollUp => self.diff_scroll = self.diff_scroll.saturating_sub(10),
            Action::DiffPageDown => self.diff_scroll = self.diff_scroll.saturating_add(20),
            Action::DiffPageUp => self.diff_scroll = self.diff_scroll.saturating_sub(20),
            Action::DiffTop => self.diff_scroll = 0,
            _ => {}
        }
    }

    /// Typing the session filter. Returns whether the key was used.
    pub(super) fn filter_key(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                self.filter.push(c);
                self.list_requery();
                self.select_first_match();
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.list_requery();
            }
            KeyCode::Enter => {
                self.filtering = false;
                if !self.filter.is_empty() && self.selected.is_some() {
                    self.open_at_first_hit();
                }
            }
            KeyCode::Esc => {
                self.filtering = false;
                self.filter.clear();
                self.list_requery();
            }
            _ => return false,
        }
        true
    }

    /// Typing where to seek. Returns whether the key was used.
    pub(super) fn seek_key(&mut self, key: KeyEvent) -> bool {
        let Some(text) = self.seek_input.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                if text.len() < 16 {
                    text.push(c);
                }
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let text = self.seek_input.take().unwrap_or_default();
                if !text.trim().is_empty() {
                    self.seek_typed(&text);
                }
            }
            KeyCode::Esc => self.seek_input = None,
            _ => return false,
        }
        true
    }

    fn select_first_match(&mut self) {
        let rows = crate::app::panes::session_list::tree::rows(
            &self.store,
            &self.folded,
            &self.filter,
            &self.search.list.counts,
        );
        let needle = self.filter.to_lowercase();
        let sessions = self.store.sessions();
        if let Some(r) = rows.iter().find(|r| {
            r.header.is_none() && sessions[r.index].title().to_lowercase().contains(&needle)
        }) {
            self.selected = Some(sessions[r.index].info.id.clone());
        }
    }

    pub fn act(&mut self, action: Action) {
        self.note_navigation(action);
        let page = crate::app::draw::turn_inner(self.areas.turns).height.max(1) as i64;
        match action {
            Action::Quit => self.quit = true,
            Action::Suspend => {
                let stop = crate::app::terminal::job_control::Job::Stop;
                self.verbs.request = Some(crate::app::verbs::Request::Suspend(stop));
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help);
                self.help_scroll = 0;
            }
            Action::FocusNext => {
                let prompt = self.current_prompt().is_some();
                self.focus = match self.focus {
                    Focus::Sessions => Focus::Turns,
                    Focus::Turns if prompt => Focus::Prompt,
                    Focus::Turns | Focus::Prompt => Focus::Sessions,
                }
            }
            Action::Filter => {
                self.filtering = true;
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
                    self.side_panel_hidden = !self.side_panel_hidden;
                } else if self.overlay == Some(Overlay::SidePanel) {
                    self.overlay = None;
                } else {
                    self.overlay = Some(Overlay::SidePanel);
                }
            }
            Action::Back => self.back(),
            Action::Themes => self.open_theme_picker(),
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::First => self.move_selection(i64::MIN / 2),
            Action::Last => self.move_selection(i64::MAX / 2),
            Action::Open => {
                if !self.toggle_group() && self.selected.is_some() {
                    self.open_at_first_hit();
                }
            }
            Action::ToggleTree => self.toggle_fold(),
            Action::DismissServer => self.dismiss_server(),
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
            Action::Times => {
                self.show_times = !self.show_times;
                self.verbs.say(if self.show_times {
                    "wall-clock times on"
                } else {
                    "wall-clock times off"
                });
            }
            Action::PromptList => self.open_jump_list(),
            // The keys of layers that take every key (lists, the prompt
            // bar, confirmations, the diff view) never come here.
            Action::ListUp
            | Action::ListDown
            | Action::ListPageUp
            | Action::ListPageDown
            | Action::ListTop
            | Action::ListBottom
            | Action::ListChoose
            | Action::ListClose
            | Action::PromptNext
            | Action::PromptPrev
            | Action::PromptSession
            | Action::PromptView
            | Action::AllowOnce
            | Action::AllowAlways
            | Action::Reject
            | Action::RejectMessage
            | Action::ChoiceLeft
            | Action::ChoiceRight
            | Action::OptionUp
            | Action::OptionDown
            | Action::OptionToggle
            | Action::PromptEnter
            | Action::QuestionReview
            | Action::QuestionDismiss
            | Action::PromptLater
            | Action::Confirm
            | Action::Cancel
            | Action::DiffNextFile
            | Action::DiffPrevFile
            | Action::DiffScrollDown
            | Action::DiffScrollUp
            | Action::DiffPageDown
            | Action::DiffPageUp
            | Action::DiffTop
            | Action::DiffClose => {}
            Action::CycleDetail => {
                self.detail = self.detail.next();
                self.verbs
                    .say(format!("detail: {}", self.detail.describe()));
            }
            Action::Diffs => {
                self.overlay = Some(Overlay::Diffs);
                self.diff_scroll = 0;
            }
            Action::Copy => self.copy_selected(),
            Action::CopySession => self.copy_session(),
            Action::Pager => self.open_in(crate::app::handover::Program::Pager),
            Action::Editor => self.open_in(crate::app::handover::Program::Editor),
            Action::Abort => self.ask_abort(),
            Action::PlayPause
            | Action::Faster
            | Action::Slower
            | Action::StepForward
            | Action::StepBack
            | Action::PartForward
            | Action::PartBack
            | Action::TurnForward
            | Action::TurnBack
            | Action::SeekForward
            | Action::SeekBack
            | Action::SeekStart
            | Action::SeekEnd
            | Action::SeekTo => self.player_act(action),
        }
    }

    fn back(&mut self) {
        if self.overlay.is_some() {
            self.overlay = None;
        } else if self.focus == Focus::Turns && self.clear_search() {
        } else if !self.filter.is_empty() {
            self.filter.clear();
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

    fn move_selection(&mut self, by: i64) {
        if self.rows.is_empty() {
            self.rows = crate::app::panes::session_list::tree::rows(
                &self.store,
                &self.folded,
                &self.filter,
                &self.search.list.counts,
            );
        }
        if self.rows.is_empty() {
            return;
        }
        let cur = self.selected_row().unwrap_or(0) as i64;
        let last = self.rows.len() as i64 - 1;
        let mut next = cur.saturating_add(by).clamp(0, last) as usize;
        // Project headings are not selectable (a fleet's are): keep going
        // the same way.
        let step: i64 = if by < 0 { -1 } else { 1 };
        let selectable = |r: &crate::app::panes::session_list::tree::SessionRow| {
            r.header.is_none() || r.group.is_some()
        };
        while !selectable(&self.rows[next]) {
            let n = next as i64 + step;
            if !(0..=last).contains(&n) {
                next = self.rows.iter().position(selectable).unwrap_or(next);
                break;
            }
            next = n as usize;
        }
        self.selected = self.row_id(&self.rows[next]);
        self.history.clear();
    }

    fn toggle_fold(&mut self) {
        if self.toggle_group() {
            return;
        }
        let Some(row) = self.selected_row().map(|i| self.rows[i].clone()) else {
            return;
        };
        if !row.has_children {
            return;
        }
        let id = self.store.sessions()[row.index].info.id.clone();
        if !self.folded.remove(&id) {
            self.folded.insert(id);
        }
    }

    fn scroll(&mut self, lines: i64) {
        if let Some(t) = self.turn_state_mut() {
            t.scroll(lines);
        }
    }

    fn jump(&mut self, jump: Jump) {
        if let Some(t) = self.turn_state_mut() {
            t.jump(jump);
        }
    }

    /// Move the card selection to the next (or previous) tool or reasoning
    /// part, starting from the selection or the top of the view.
    fn select_card(&mut self, forward: bool) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let default_state = Default::default();
        let state = self.turn_state().unwrap_or(&default_state);
        let start = state
            .selected
            .as_ref()
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
        let mut cur = if state.selected.is_none() && is_card_at(start) {
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

    fn toggle_selected_card(&mut self) {
        if let Some(t) = self.turn_state_mut()
            && let Some((_, part)) = t.selected.clone()
        {
            t.toggle(&part);
        }
    }

    /// Enter on a task card opens its child session; on any other card it folds.
    fn open_selected_card(&mut self) {
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
                    let inner = crate::app::draw::list_inner(self.areas.sessions);
                    let row = (m.row.saturating_sub(inner.y)) as usize + self.list_offset;
                    if let Some(r) = self.rows.get(row) {
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
                    let inner = crate::app::draw::turn_inner(self.areas.turns);
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

    /// A click on a card selects and folds or unfolds it.
    fn click_turn_row(&mut self, row: usize) {
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
        let t = self.turn_state_mut().expect("a session is selected");
        t.toggle(&ids.1);
        t.selected = Some(ids);
    }
}
