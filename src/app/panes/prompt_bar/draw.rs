//! The prompt bar: the current permission or question with its place in
//! the queue, who asks (the parent chain of a subagent), what it is about,
//! and the answers, step by step; and the full-screen view of a prompt.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::panes::prompt_bar::draw_permission;
use crate::app::panes::prompt_bar::draw_question::question;
use crate::app::{App, Focus};
use crate::model::PromptRequest;
use crate::model::entity::prompt::describe;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

/// "parent › child" for a subagent's session.
pub(super) fn session_chain(app: &App, id: &str) -> String {
    let mut names = Vec::new();
    let mut cur = Some(id.to_string());
    for _ in 0..8 {
        let Some(c) = cur else { break };
        match app.store.session(&c) {
            Some(s) => {
                names.push(s.title().to_string());
                cur = s.info.parent_id.clone();
            }
            None => {
                names.push(c);
                break;
            }
        }
    }
    names.reverse();
    // In a fleet, which server asks.
    match crate::model::store::fleet::server_of(id) {
        Some(key) => format!("{key} › {}", names.join(" › ")),
        None => names.join(" › "),
    }
}

/// Rows the bar needs on this screen.
pub fn height(app: &App, screen: Rect) -> u16 {
    let screen_height = screen.height;
    if app.panes.prompts.editor_is_stale() {
        return crate::app::panes::prompt_bar::wait::STALE_EDITOR_ROWS.min(screen_height / 2);
    }
    let Some((_, _, prompt)) = app.current_prompt() else {
        return 0;
    };
    let focused = app.focus == Focus::Prompt;
    let want = match (&prompt.request, focused) {
        (_, false) => 3,
        (PromptRequest::Permission(p), true) => {
            // Border, heading, choices, keys, status; the subject and a diff
            // as laid out at this width (each cut, and a line saying so);
            // the editor.
            let (subject, diff) = draw_permission::preview_size(p, screen.width as usize);
            let preview = draw_permission::PreviewCut::new(subject, diff, None).rows();
            let editor = if app.panes.prompts.editor.is_some() {
                3
            } else {
                0
            };
            5 + preview as u16 + editor
        }
        (PromptRequest::Question(q), true) => {
            let tab = app.panes.prompts.drafts.get(&q.id).map_or(0, |d| d.tab);
            let rows = q
                .questions
                .get(tab)
                .map_or(q.questions.len(), |qq| qq.options.len() + 2);
            let editor = if app.panes.prompts.editor.is_some() {
                4
            } else {
                0
            };
            5 + rows as u16 + editor
        }
    };
    want.min(screen_height / 2).max(3)
}

/// What the bar says under the prompt: sending, arming, an error, or why
/// answers are not sent.
fn status_line(app: &App, request_id: &str) -> Option<(String, Role)> {
    let prompts = &app.panes.prompts;
    if prompts.sending.contains(request_id) {
        Some(("sending…".to_string(), Role::Running))
    } else if app.replies.is_some() && prompts.arming_shown {
        let why = if prompts.dropped_while_arming {
            "arming: keys are ignored until this prompt has been on screen a moment"
        } else {
            "arming…"
        };
        Some((why.to_string(), Role::Warning))
    } else if let Some(e) = &prompts.error {
        Some((e.clone(), Role::Error))
    } else if app.replies.is_none() {
        Some((
            if app.source.recorded {
                "replay: answers are not sent".into()
            } else {
                "read-only: answers are not sent".into()
            },
            Role::Muted,
        ))
    } else {
        None
    }
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    if app.panes.prompts.editor_is_stale() {
        return crate::app::panes::prompt_bar::wait::draw_stale_editor(frame, app, area);
    }
    let theme = &app.theme;
    let Some((i, n, prompt)) = app.current_prompt() else {
        return;
    };
    let focused = app.focus == Focus::Prompt;
    let border = if focused { Role::Warning } else { Role::Border };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.style(border));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let (kind, subject_line) = describe(&prompt.request);
    let place = format!("{} of {n}", i + 1);
    let who = session_chain(app, prompt.request.session_id());
    let head = format!(" {kind} — {}", sanitize::line(&who));
    let mut lines = vec![Line::from(vec![
        Span::styled(" ⚠ ", theme.style(Role::Badge)),
        Span::styled(
            wrap::truncate(&head, width.saturating_sub(place.len() + 5)),
            theme.style(Role::Warning),
        ),
        Span::styled(format!("  {place}"), theme.style(Role::Muted)),
    ])];
    if !focused {
        lines.push(Line::styled(
            wrap::truncate(&format!("   {}", sanitize::line(&subject_line)), width),
            theme.style(Role::Text),
        ));
        let hint = match crate::app::panes::prompt_bar::wait::waiting_hint(app) {
            Some(waits) => format!("   {waits}"),
            None if app.replies.is_some() => "   tab to answer".into(),
            None => "   (not answerable here)".into(),
        };
        lines[0]
            .spans
            .push(Span::styled(hint, theme.style(Role::Muted)));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let status = status_line(app, prompt.request.id());
    let editor_rows = if app.panes.prompts.editor.is_some() {
        3
    } else {
        0
    };
    let text_area = Rect {
        height: inner.height.saturating_sub(editor_rows),
        ..inner
    };
    // What the prompt is about shrinks to the rows left; its answer keys
    // always keep theirs.
    let rows =
        (text_area.height as usize).saturating_sub(lines.len() + usize::from(status.is_some()));
    lines.extend(match &prompt.request {
        PromptRequest::Permission(p) => draw_permission::permission(app, p, width, rows),
        PromptRequest::Question(q) => question(app, q, width, rows),
    });
    if let Some((text, role)) = status {
        lines.push(Line::styled(
            wrap::truncate(&format!("   {}", sanitize::line(&text)), width),
            theme.style(role),
        ));
    }
    frame.render_widget(Paragraph::new(lines), text_area);
    if let Some(editor) = &app.panes.prompts.editor {
        let r = Rect {
            y: inner.bottom().saturating_sub(editor_rows),
            height: editor_rows.min(inner.height),
            x: inner.x + 3,
            width: inner.width.saturating_sub(3),
        };
        frame.render_widget(editor, r);
    }
}
