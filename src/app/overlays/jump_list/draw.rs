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
    crate::app::draw::centred(screen, width, height)
}

/// Rows of entries the box holds at most.
pub fn rows(screen: Rect) -> usize {
    area(screen, usize::MAX).height.saturating_sub(2) as usize
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let list = &app.jump_list;
    let area = area(screen, list.entries.len());
    let rows = (area.height.saturating_sub(2) as usize).max(1);
    let inner_w = area.width.saturating_sub(2) as usize;
    // Keep the chosen entry in view, a third of the way down when it can.
    let first = list
        .selected
        .saturating_sub(rows / 3)
        .min(list.entries.len().saturating_sub(rows));
    let today = app.clock_ms();
    let mut lines = Vec::with_capacity(rows);
    for (i, entry) in list.entries.iter().enumerate().skip(first).take(rows) {
        let time = entry
            .created
            .map(|t| clock::wall_clock(t, today))
            .unwrap_or_default();
        let number = format!("{:>4} ", i + 1);
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
    let title = format!(
        " Prompts {}/{} · {} go · {} close ",
        list.selected + 1,
        list.entries.len(),
        key(Action::ListChoose),
        key(Action::ListClose)
    );
    crate::app::draw::overlay_box(frame, theme, area, title, lines, 0);
}
