//! The keys line under a prompt: its answers, or the text box's own keys.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::render::theme::Role;
use crate::render::wrap;

/// The keys of the text box (fixed: the box is text input, every other
/// key is typed): "enter send · esc cancel".
pub(super) fn typing_keys(app: &App, enter_does: &str, width: usize) -> Line<'static> {
    let theme = &app.theme;
    let accent = theme.style(Role::Accent);
    let muted = theme.style(Role::Muted);
    let text = format!("   enter {enter_does} · esc cancel");
    if text.chars().count() > width {
        return Line::styled(wrap::truncate(&text, width), muted);
    }
    Line::from(vec![
        Span::raw("   "),
        Span::styled("enter", accent),
        Span::styled(format!(" {enter_does} · "), muted),
        Span::styled("esc", accent),
        Span::styled(" cancel", muted),
    ])
}

pub(super) fn keys_line(app: &App, keys: &[(&str, &str)], width: usize) -> Line<'static> {
    let theme = &app.theme;
    let mut spans = vec![Span::raw("   ")];
    let mut used = 3;
    for (k, label) in keys {
        let w = k.len() + label.len() + 3;
        if used + w > width {
            break;
        }
        spans.push(Span::styled(k.to_string(), theme.style(Role::Accent)));
        spans.push(Span::styled(
            format!(" {label}  "),
            theme.style(Role::Muted),
        ));
        used += w;
    }
    Line::from(spans)
}
