//! The prompt jump list over the screen: time and first line of each of
//! the session's prompts, the chosen one highlighted. Only the rows that
//! fit are formatted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::{clock, wrap};

/// The list's box on a screen, for `entries` entries.
pub fn area(screen: Rect, entries: usize) -> Rect {
    let width = screen.width.saturating_sub(4).clamp(1, 100);
    let height = screen
        .height
        .saturating_sub(2)
        .min(entries.saturating_add(2).min(u16::MAX as usize) as u16)
        .max(3.min(screen.height));
    crate::app::boxes::centred(screen, width, height)
}

/// Rows of entries the box holds at most.
pub fn rows(screen: Rect) -> usize {
    area(screen, usize::MAX).height.saturating_sub(2) as usize
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let list = &app.overlays.jump_list;
    // Older prompts on their way: a row above the oldest one says so.
    let loading = app.jump_list_loading();
    let area = area(screen, list.entries.len() + loading as usize);
    let inner_w = area.width.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    if loading {
        lines.push(Line::styled(
            wrap::truncate("loading older…", inner_w),
            theme.style(Role::Muted),
        ));
    }
    let rows = (area.height.saturating_sub(2) as usize)
        .saturating_sub(lines.len())
        .max(1);
    // Keep the chosen entry in view, a third of the way down when it can.
    let first = list
        .selected
        .saturating_sub(rows / 3)
        .min(list.entries.len().saturating_sub(rows));
    let today = app.clock_ms();
    if list.entries.is_empty() && !list.filter.is_empty() {
        lines.push(Line::styled(
            "no prompt holds the filter",
            theme.style(Role::Muted),
        ));
    }
    for (i, entry) in list.entries.iter().enumerate().skip(first).take(rows) {
        let time = entry
            .created
            .map(|t| clock::wall_clock(t, today))
            .unwrap_or_default();
        let number = format!("{:>4} ", entry.number);
        let time = format!("{time:>12}  ");
        let room = inner_w.saturating_sub(wrap::width(&number) + wrap::width(&time));
        let text = wrap::truncate(&sanitize::line(&entry.text), room);
        let chosen = i == list.selected;
        let base = if chosen {
            theme.style(Role::SelectionFocus)
        } else {
            theme.style(Role::Text)
        };
        let pad = room.saturating_sub(wrap::width(&text));
        lines.push(Line::from(vec![
            Span::styled(number, theme.style(Role::Muted).patch(base)),
            Span::styled(time, theme.style(Role::Muted).patch(base)),
            Span::styled(format!("{text}{}", " ".repeat(pad)), base),
        ]));
    }
    let key = |a: Action| app.keymap.hint(a).unwrap_or_default();
    let at = if list.entries.is_empty() {
        0
    } else {
        list.selected + 1
    };
    let filter = match (list.typing, list.filter.is_empty()) {
        (true, _) => format!("/{}▏ · ", sanitize::line(&list.filter)),
        (false, false) => format!("/{} · ", sanitize::line(&list.filter)),
        (false, true) => "/ filter · ".to_string(),
    };
    let title = format!(
        " Prompts {at}/{} · {filter}{} go · {} close ",
        list.entries.len(),
        key(Action::ListChoose),
        key(Action::ListClose)
    );
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}
