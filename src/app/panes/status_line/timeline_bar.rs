//! The player's part of the status line: play state, speed, the head's time
//! over the length, a bar with the head and a mark where a prompt or an
//! error happened, and the record position (what a step moves).

use ratatui::style::Style;
use ratatui::text::Span;

use crate::app::panes::status_line::player::Player;
use crate::render::theme::{Role, Theme};
use crate::source::timeline::playback::clock_text;

/// The bar's width for a status line `width` wide.
pub fn bar_width(width: usize) -> usize {
    (width / 5).clamp(8, 40)
}

/// "▶ 2× 0:12/1:05", "❚❚ 1× …", "■ …" at the end.
pub fn state_text(p: &Player) -> String {
    let icon = if p.at_end() {
        "■"
    } else if p.clock.playing() {
        "▶"
    } else {
        "❚❚"
    };
    format!(
        "{icon} {} {}/{}",
        p.clock.speed.label(),
        clock_text(p.head_ms),
        clock_text(p.timeline.duration_ms())
    )
}

/// "#12/340": records applied, of all.
pub fn position_text(p: &Player) -> String {
    format!("#{}/{}", p.timeline.position(), p.timeline.len())
}

/// The bar, `width` cells: played, the head, still to come, and marks.
pub fn bar(p: &Player, width: usize, theme: &Theme, base: Style) -> Vec<Span<'static>> {
    if width == 0 {
        return Vec::new();
    }
    // By play time when the recording has times, else by record count.
    let duration = p.timeline.duration_ms();
    let (head, total) = if duration > 0 {
        (p.head_ms, duration)
    } else {
        (p.timeline.position() as i64, p.timeline.len().max(1) as i64)
    };
    let cell_of = |x: i64| {
        ((x.clamp(0, total) as i128 * (width as i128 - 1)) / total.max(1) as i128) as usize
    };
    let head_cell = if p.at_end() { width - 1 } else { cell_of(head) };
    // 0: nothing, 1: a prompt, 2: an error (an error wins a shared cell).
    let mut marks = vec![0u8; width];
    for &(index, at, error) in &p.marks {
        let x = if duration > 0 { at } else { index as i64 };
        let cell = &mut marks[cell_of(x)];
        *cell = (*cell).max(if error { 2 } else { 1 });
    }
    let played = base.patch(theme.style(Role::Accent));
    let ahead = base.patch(theme.style(Role::Muted));
    let prompt = base.patch(theme.style(Role::Warning));
    let error = base.patch(theme.style(Role::Error));
    let mut spans: Vec<Span<'static>> = Vec::with_capacity(width);
    for (i, mark) in marks.iter().enumerate() {
        let (glyph, style) = if i == head_cell {
            ("●", played)
        } else {
            match mark {
                2 => ("✕", error),
                1 => ("◆", prompt),
                _ if i < head_cell => ("━", played),
                _ => ("─", ahead),
            }
        };
        // Runs of one style share a span.
        match spans.last_mut() {
            Some(last) if last.style == style && glyph != "●" && !last.content.contains('●') => {
                last.content.to_mut().push_str(glyph)
            }
            _ => spans.push(Span::styled(glyph.to_string(), style)),
        }
    }
    spans
}
