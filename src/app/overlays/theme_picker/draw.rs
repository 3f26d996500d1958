//! The theme picker: a narrow list at the right edge, so most of the
//! screen behind it shows the highlighted theme.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

const WIDTH: u16 = 30;

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let Some(picker) = &app.overlays.theme_picker else {
        return;
    };
    let theme = &app.theme;
    let width = WIDTH.min(screen.width);
    let height = (picker.names.len() as u16 + 4).min(screen.height);
    let area = Rect {
        x: screen.right() - width,
        y: screen.y,
        width,
        height,
    };
    let rows = height.saturating_sub(4) as usize;
    // Keep the highlighted row in view on short screens.
    let first = picker.index.saturating_sub(rows.saturating_sub(1));
    let inner = width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = picker
        .names
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, name)| {
            let chosen = i == picker.index;
            let marker = if chosen { "› " } else { "  " };
            // File names are untrusted text.
            let name = sanitize::line(name);
            let text = wrap::truncate(&format!("{marker}{name}"), inner);
            let pad = inner.saturating_sub(wrap::width(&text));
            let role = if chosen {
                Role::SelectionFocus
            } else {
                Role::Text
            };
            Line::from(Span::styled(
                format!("{text}{}", " ".repeat(pad)),
                theme.style(role),
            ))
        })
        .collect();
    lines.push(Line::default());
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    use crate::app::keymap::Action as A;
    lines.push(Line::styled(
        wrap::truncate(
            &format!("{} keep · {} back", k(A::ListChoose), k(A::ListClose)),
            inner,
        ),
        theme.style(Role::Muted),
    ));
    let title = format!(" Themes ({}) ", theme.mode.name());
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}
