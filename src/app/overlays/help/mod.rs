//! The help overlay, generated from the keymap.

pub mod keys;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::render::theme::Role;
use crate::render::wrap;

/// What help keeps while open.
#[derive(Debug, Default)]
pub struct HelpState {
    /// First line shown (it scrolls on short screens).
    pub scroll: u16,
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let mut groups = app.keymap.help_rows();
    // The player's keys only mean something while replaying a file.
    if app.player.is_none() {
        groups.retain(|(ctx, _)| *ctx != crate::app::keymap::Context::Player);
    }
    let widest = |f: fn(&(String, &str, &str)) -> usize| {
        groups
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(f))
            .max()
            .unwrap_or(0)
    };
    let key_w = widest(|r| wrap::width(&r.0)).min(22);
    let name_w = widest(|r| wrap::width(r.2));
    // On a narrow screen the descriptions wrap: the keys and the names
    // (what the config rebinds) stay whole on the first line.
    let help_room = (screen.width as usize).saturating_sub(key_w + name_w + 7);
    let help_w = widest(|r| wrap::width(r.1)).min(help_room.max(12));
    let mut lines = Vec::new();
    for (ctx, rows) in &groups {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::styled(ctx.title(), theme.style(Role::Heading)));
        for (keys, help, name) in rows {
            let keys = wrap::truncate(keys, key_w);
            let pad = key_w.saturating_sub(wrap::width(&keys));
            let text = theme.style(Role::Text);
            let wrapped = wrap::wrap_text(help, text, help_w, "");
            for (i, help_line) in wrapped.into_iter().enumerate() {
                let help: String = help_line.spans.iter().map(|s| s.content.as_ref()).collect();
                let help_pad = help_w.saturating_sub(wrap::width(&help));
                let (keys, name) = if i == 0 {
                    (format!("  {keys}{} ", " ".repeat(pad)), *name)
                } else {
                    (" ".repeat(key_w + 3), "")
                };
                lines.push(Line::from(vec![
                    Span::styled(keys, theme.style(Role::Accent)),
                    Span::styled(format!("{help}{}  ", " ".repeat(help_pad)), text),
                    Span::styled(name, theme.style(Role::Muted)),
                ]));
            }
        }
    }
    // Keys, what they do, and the action's name for the config.
    let width = ((key_w + help_w + name_w + 7) as u16).min(screen.width);
    let total = lines.len() as u16;
    let height = (total + 2).min(screen.height);
    let scroll = app
        .overlays
        .help
        .scroll
        .min(total.saturating_sub(height.saturating_sub(2)));
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    use crate::app::keymap::Action as A;
    let title = if scroll > 0 || total + 2 > height {
        format!(
            " Keys ({}/{} scroll, {} close) ",
            k(A::ListDown),
            k(A::ListUp),
            k(A::ListClose)
        )
    } else {
        format!(" Keys ({} to close) ", k(A::ListClose))
    };
    let area = crate::app::boxes::centred(screen, width, height);
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, scroll);
}
