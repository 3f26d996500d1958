//! A prompt that waits for the person to finish something else: the line
//! that says so over a list or view covering the screen, and the prompt
//! bar's text box left open after its prompt went away.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::keymap::Action;
use crate::app::router::Layer;
use crate::app::{App, Overlay};
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

/// Rows of the bar while it shows a text box whose prompt is gone: the
/// border, what it was for, three rows of text, the keys.
pub const STALE_EDITOR_ROWS: u16 = 6;

/// "waits until you close help (esc)": how the waiting prompt gets the keys.
pub fn waiting_hint(app: &App) -> Option<String> {
    let busy = app.prompt_waiting_behind()?;
    let close = match app.top_layer() {
        Layer::Overlay(Overlay::Diffs) => app.keymap.hint(Action::DiffClose),
        Layer::Overlay(_) => app.keymap.hint(Action::ListClose),
        Layer::ConfirmAbort => app.keymap.hint(Action::Cancel),
        _ => Some("enter or esc".to_string()),
    }
    .unwrap_or_default();
    Some(format!("waits until you close {busy} ({close})"))
}

/// Over a list or view that covers the prompt bar: one line on the last
/// row saying a prompt waits and how to get to it.
pub fn draw_waiting_line(frame: &mut Frame, app: &App, screen: Rect) {
    if !matches!(app.top_layer(), Layer::Overlay(_)) || screen.height == 0 {
        return;
    }
    let (Some(hint), Some((_, n, prompt))) = (waiting_hint(app), app.current_prompt()) else {
        return;
    };
    let (kind, subject) = crate::model::entity::prompt::describe(&prompt.request);
    let more = if n > 1 {
        format!(" (+{} more)", n - 1)
    } else {
        String::new()
    };
    let text = format!(" {kind}: {}{more} · {hint}", sanitize::line(&subject));
    let row = Rect {
        y: screen.bottom() - 1,
        height: 1,
        ..screen
    };
    let theme = &app.theme;
    frame.render_widget(Clear, row);
    let line = Line::from(vec![
        Span::styled(" ⚠", theme.style(Role::Badge)),
        Span::styled(
            wrap::truncate(&text, (row.width as usize).saturating_sub(2)),
            theme.style(Role::Warning),
        ),
    ]);
    frame.render_widget(Paragraph::new(line), row);
}

/// The bar while its text box belongs to a prompt that is gone: typing
/// goes on into the box, and enter or esc closes it without sending.
pub fn draw_stale_editor(frame: &mut Frame, app: &App, area: Rect) {
    let theme = &app.theme;
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.style(Role::Warning));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let what = app
        .panes
        .prompts
        .editor_for
        .as_ref()
        .map_or("the text", |o| o.what.as_str());
    let head = format!(
        " gone: {} — answered elsewhere or withdrawn",
        sanitize::line(what)
    );
    let keys = "   enter or esc closes this; nothing is sent";
    let lines = vec![
        Line::styled(wrap::truncate(&head, width), theme.style(Role::Warning)),
        Line::styled(wrap::truncate(keys, width), theme.style(Role::Muted)),
    ];
    frame.render_widget(Paragraph::new(lines), inner);
    if let Some(editor) = &app.panes.prompts.editor {
        let r = Rect {
            y: inner.y.saturating_add(2).min(inner.bottom()),
            height: inner.height.saturating_sub(2).min(3),
            x: inner.x + 3,
            width: inner.width.saturating_sub(3),
        };
        frame.render_widget(editor, r);
    }
}
