//! Shapes every pane and overlay draws with: a centred box, an overlay's
//! frame, and the inner areas of the list and the turn view.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::render::theme::{Role, Theme};

/// A rectangle of `width` × `height` (at most the screen's) in the middle
/// of `screen`.
pub fn centred(screen: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(screen.width), height.min(screen.height));
    Rect {
        x: screen.x + (screen.width - width) / 2,
        y: screen.y + (screen.height - height) / 2,
        width,
        height,
    }
}

/// A list or text over the screen: cleared, bordered, titled, scrolled.
pub(crate) fn overlay_box(
    frame: &mut Frame,
    theme: &Theme,
    area: Rect,
    title: String,
    lines: Vec<ratatui::text::Line<'static>>,
    scroll: u16,
) {
    use ratatui::widgets::{Block, Borders, Clear, Paragraph};
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::BorderFocus))
        .title(ratatui::text::Line::styled(title, theme.style(Role::Title)));
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
}

/// The session list's rows area (below its header, left of its border).
pub fn list_inner(r: Rect) -> Rect {
    Rect {
        x: r.x,
        y: r.y.saturating_add(1).min(r.bottom()),
        width: r.width.saturating_sub(1),
        height: r.height.saturating_sub(1),
    }
}

/// The turn view's lines area (below its header, one column of margin).
pub fn turn_inner(r: Rect) -> Rect {
    Rect {
        x: r.x.saturating_add(1).min(r.right()),
        y: r.y.saturating_add(1).min(r.bottom()),
        width: r.width.saturating_sub(1),
        height: r.height.saturating_sub(1),
    }
}

/// What a view reading the archive says in place of its rows: why it
/// cannot read it, that it is reading (`words.0`), or that there is
/// nothing (`words.1`); `None` when it has rows to show.
pub fn read_state(
    error: Option<&str>,
    reading: bool,
    empty: bool,
    words: (&str, &str),
    width: usize,
    theme: &Theme,
) -> Option<ratatui::text::Line<'static>> {
    let (text, role) = match (error, reading, empty) {
        (Some(e), _, _) => (
            format!(
                "cannot read the archive: {}",
                crate::model::wire::sanitize::line(e)
            ),
            Role::Error,
        ),
        (None, true, _) => (words.0.to_string(), Role::Muted),
        (None, false, true) => (words.1.to_string(), Role::Muted),
        (None, false, false) => return None,
    };
    Some(ratatui::text::Line::styled(
        crate::render::wrap::truncate(&text, width),
        theme.style(role),
    ))
}
