//! The prompt bar: shown while a permission or question waits, with the
//! oldest waiting prompt and how many wait in all.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Role;
use super::wrap;
use crate::app::App;
use crate::model::PromptRequest;
use crate::sanitize;

/// One line saying what a prompt is about.
pub fn describe(request: &PromptRequest) -> (String, String) {
    match request {
        PromptRequest::Permission(p) => {
            let meta = |k: &str| {
                p.metadata
                    .get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            let subject = meta("command")
                .or_else(|| meta("filepath"))
                .or_else(|| meta("filePath"))
                .or_else(|| meta("url"))
                .or_else(|| meta("pattern"))
                .unwrap_or_else(|| p.patterns.join(", "));
            (format!("permission · {}", p.permission), subject)
        }
        PromptRequest::Question(q) => {
            let first = q
                .questions
                .first()
                .map(|q| q.question.clone())
                .unwrap_or_default();
            let n = q.questions.len();
            (
                format!(
                    "question{}",
                    if n > 1 {
                        format!(" · {n} questions")
                    } else {
                        String::new()
                    }
                ),
                first,
            )
        }
    }
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let theme = &app.theme;
    let pending: Vec<_> = app.store.pending_prompts().collect();
    let Some(prompt) = pending.first() else {
        return;
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.style(Role::Warning));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let (kind, subject) = describe(&prompt.request);
    let session = app
        .store
        .session(prompt.request.session_id())
        .map(|s| s.title().to_string())
        .unwrap_or_else(|| prompt.request.session_id().to_string());
    let place = format!("1 of {}", pending.len());
    let width = inner.width as usize;
    let head = format!(" {kind} — {}", sanitize::line(&session));
    let line1 = Line::from(vec![
        Span::styled(" ⚠ ", theme.style(Role::Badge)),
        Span::styled(
            wrap::truncate(&head, width.saturating_sub(place.len() + 5)),
            theme.style(Role::Warning),
        ),
        Span::styled(format!("  {place}"), theme.style(Role::Muted)),
    ]);
    let line2 = Line::styled(
        wrap::truncate(&format!("   {}", sanitize::line(&subject)), width),
        theme.style(Role::Text),
    );
    frame.render_widget(Paragraph::new(vec![line1, line2]), inner);
}
