//! The frame: `layout` splits the screen into the panes; `draw` paints each
//! pane and overlay from state that `App::prepare` laid out, and changes
//! nothing.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::overlays::{confirm, diff_view, help, jump_list, theme_picker};
use crate::app::panes::{prompt_bar, session_list, side_panel, status_line, turn_view};
use crate::app::{App, Overlay};
use crate::render::theme;

/// The screen's panes, as laid out for the current frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    pub screen: Rect,
    pub sessions: Rect,
    pub turns: Rect,
    /// The side panel beside the turns (wide terminals).
    pub side: Option<Rect>,
    pub prompt: Option<Rect>,
    pub status: Rect,
    /// The player's timeline bar in the status line (a click seeks).
    pub timeline: Option<Rect>,
    /// The session list is folded to a one-line bar above the turns.
    pub list_bar: bool,
}

/// Columns of the docked side panel.
const SIDE_WIDTH: u16 = 38;

/// The turns keep at least this many columns before the side panel docks
/// by itself beside them (asked for with its key, it docks anyway).
pub const TURNS_MIN_WIDTH: u16 = 80;

/// The session list's most columns on a terminal up to 136 wide.
const LIST_WIDTH: u16 = 34;

/// Columns the turns keep before the list grows past `LIST_WIDTH`: a diff
/// shows side by side from 120 (`SIDE_BY_SIDE_MIN_WIDTH`), plus the card.
const TURNS_ROOMY: u16 = 130;

/// The list's most columns when the config sets none: 34, or a quarter of
/// a wider terminal (50 at 200), as long as the turns (and the side panel,
/// when it sits beside them) keep `TURNS_ROOMY` columns.
fn auto_list_width(app: &App, screen_width: u16, main_width: u16) -> u16 {
    let grown = LIST_WIDTH.max(main_width / 4);
    let side = if side_panel_beside(app, screen_width, main_width.saturating_sub(LIST_WIDTH)) {
        SIDE_WIDTH
    } else {
        0
    };
    let spare = main_width.saturating_sub(side + TURNS_ROOMY);
    grown.min(spare).max(LIST_WIDTH)
}

pub fn layout(area: Rect, app: &App) -> Areas {
    let prompt_rows = prompt_bar::draw::height(app, area);
    let [main, prompt, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(prompt_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let list_bar = !app.list_whole(area.width);
    let [sessions, rest] = if list_bar {
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main)
    } else {
        // As wide as the titles in view need, up to the configured width
        // (unset: see `auto_list_width`) and a third of the screen.
        let wanted = app
            .config
            .session_list_width
            .unwrap_or_else(|| auto_list_width(app, area.width, main.width));
        let limit = wanted.min(main.width / 3);
        let height = crate::app::boxes::list_inner(main).height as usize;
        let offset = session_list::width::offset_keeping(
            app.selected_row(),
            app.panes.list.offset,
            app.panes.list.rows.len(),
            height,
        );
        let list_w =
            session_list::width::wanted(app, offset, height, limit).max(12.min(main.width));
        Layout::horizontal([Constraint::Length(list_w), Constraint::Min(1)]).areas(main)
    };
    let (turns, side) = if side_panel_beside(app, area.width, rest.width) {
        let [t, s] =
            Layout::horizontal([Constraint::Min(1), Constraint::Length(SIDE_WIDTH)]).areas(rest);
        (t, Some(s))
    } else {
        (rest, None)
    };
    Areas {
        screen: area,
        sessions,
        turns,
        side,
        prompt: (prompt_rows > 0).then_some(prompt),
        status,
        timeline: status_line::draw::compose(app, status).bar,
        list_bar,
    }
}

/// Whether the side panel sits beside the turns: where the screen is wide
/// enough for it to dock, when asked for with its key (and not when hidden
/// with it), else by itself when it has something to show and the turns
/// keep `TURNS_MIN_WIDTH` columns beside it.
pub fn side_panel_beside(app: &App, screen_width: u16, beside_list: u16) -> bool {
    if !app.side_panel_docked(screen_width) {
        return false;
    }
    app.panes.side_panel_shown.unwrap_or_else(|| {
        beside_list >= TURNS_MIN_WIDTH + SIDE_WIDTH
            && app
                .selected_session()
                .is_some_and(|s| side_panel::has_something(app, s))
    })
}

/// The theme's own background and text colour under everything drawn
/// with the terminal's (a light theme on a dark terminal stays readable).
/// Last, so overlays that cleared their area are painted too.
fn paint_background(frame: &mut Frame, theme: &theme::Theme) {
    use ratatui::style::Color;
    let base = theme.style(theme::Role::Background);
    if base.bg.is_none() && base.fg.is_none() {
        return;
    }
    for cell in frame.buffer_mut().content.iter_mut() {
        if let Some(bg) = base.bg
            && cell.bg == Color::Reset
        {
            cell.bg = bg;
        }
        if let Some(fg) = base.fg
            && cell.fg == Color::Reset
        {
            cell.fg = fg;
        }
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let areas = app.areas;
    session_list::draw::draw(frame, app, areas.sessions);
    turn_view::draw::draw(frame, app, areas.turns);
    if let Some(side) = areas.side {
        side_panel::draw(frame, app, side, false);
    }
    if let Some(prompt) = areas.prompt {
        prompt_bar::draw::draw(frame, app, prompt);
    }
    status_line::draw::draw(frame, app, areas.status);
    match app.overlay {
        Some(Overlay::Help) => help::draw(frame, app, areas.screen),
        Some(Overlay::BadRecord) => {
            crate::app::overlays::bad_record::draw(frame, app, areas.screen)
        }
        Some(Overlay::SidePanel) => {
            let w = SIDE_WIDTH.min(areas.turns.width);
            let r = Rect {
                x: areas.turns.right() - w,
                width: w,
                ..areas.turns
            };
            side_panel::draw(frame, app, r, true);
        }
        Some(Overlay::Diffs) => {
            if let Some(session) = app.selected_session() {
                let ctx = app.render_ctx(session, areas.screen.width);
                diff_view::draw(frame, app, areas.screen, &ctx);
            }
        }
        Some(Overlay::PromptView) => prompt_bar::view::draw_view(frame, app, areas.screen),
        Some(Overlay::Prompts) => jump_list::draw::draw(frame, app, areas.screen),
        Some(Overlay::Themes) => theme_picker::draw::draw(frame, app, areas.screen),
        Some(Overlay::Usage) => crate::app::overlays::usage::draw::draw(frame, app, areas.screen),
        Some(Overlay::ArchiveSearch) => {
            crate::app::overlays::archive_search::draw::draw(frame, app, areas.screen)
        }
        Some(Overlay::Audit) => crate::app::overlays::audit::draw::draw(frame, app, areas.screen),
        Some(Overlay::Insights) => {
            crate::app::overlays::insights::draw::draw(frame, app, areas.screen)
        }
        None => {}
    }
    // A prompt waiting behind the overlay says so on its last row.
    prompt_bar::wait::draw_waiting_line(frame, app, areas.screen);
    // Above everything: it takes the next key.
    confirm::draw_abort(frame, app, areas.screen);
    paint_background(frame, &app.theme);
}
