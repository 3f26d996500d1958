//! The prompt bar: the current permission or question with its place in
//! the queue, who asks (the parent chain of a subagent), what it is about,
//! and the answers, step by step; and the full-screen view of a prompt.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::keymap::Action;
use crate::app::panes::prompt_bar::answers::{PERM_CHOICES, PermStep};
use crate::app::panes::prompt_bar::draw_question::question;
use crate::app::{App, Focus};
use crate::model::entity::prompt::{describe, meta, subject};
use crate::model::wire::sanitize;
use crate::model::{PermissionRequest, PromptRequest};
use crate::render::diff_lines::DiffLayout;
use crate::render::theme::Role;
use crate::render::tools::lang_of;
use crate::render::wrap;

/// A permission's diff starts this far in, and shows at most this many
/// lines in the bar (`v` shows all).
const DIFF_INDENT: &str = "   ";
const DIFF_ROWS: usize = 8;

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
    if app.prompts.editor_is_stale() {
        return crate::app::panes::prompt_bar::wait::STALE_EDITOR_ROWS.min(screen_height / 2);
    }
    let Some((_, _, prompt)) = app.current_prompt() else {
        return 0;
    };
    let focused = app.focus == Focus::Prompt;
    let want = match (&prompt.request, focused) {
        (_, false) => 3,
        (PromptRequest::Permission(p), true) => {
            // Border, heading, subject, choices, keys, status; a diff (cut
            // at 8 lines, and a line saying so) as laid out at this width;
            // the editor.
            let diff = meta(p, "diff").map_or(0, |d| {
                let width = (screen.width as usize).saturating_sub(DIFF_INDENT.len());
                let rows = DiffLayout::new(d, "", width).len();
                rows.min(DIFF_ROWS) + usize::from(rows > DIFF_ROWS)
            });
            let editor = if app.prompts.editor.is_some() { 3 } else { 0 };
            6 + diff as u16 + editor
        }
        (PromptRequest::Question(q), true) => {
            let tab = app.prompts.drafts.get(&q.id).map_or(0, |d| d.tab);
            let rows = q
                .questions
                .get(tab)
                .map_or(q.questions.len(), |qq| qq.options.len() + 2);
            let editor = if app.prompts.editor.is_some() { 4 } else { 0 };
            5 + rows as u16 + editor
        }
    };
    want.min(screen_height / 2).max(3)
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    if app.prompts.editor_is_stale() {
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
    match &prompt.request {
        PromptRequest::Permission(p) => permission(app, p, width, &mut lines),
        PromptRequest::Question(q) => question(app, q, width, &mut lines),
    }
    let status = if app.prompts.sending.contains(prompt.request.id()) {
        Some(("sending…".to_string(), Role::Running))
    } else if app.replies.is_some() && app.prompts.arming_shown {
        let why = if app.prompts.dropped_while_arming {
            "arming: keys are ignored until this prompt has been on screen a moment"
        } else {
            "arming…"
        };
        Some((why.to_string(), Role::Warning))
    } else if let Some(e) = &app.prompts.error {
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
    };
    if let Some((text, role)) = status {
        lines.push(Line::styled(
            wrap::truncate(&format!("   {}", sanitize::line(&text)), width),
            theme.style(role),
        ));
    }
    let editor_rows = if app.prompts.editor.is_some() { 3 } else { 0 };
    let text_area = Rect {
        height: inner.height.saturating_sub(editor_rows),
        ..inner
    };
    frame.render_widget(Paragraph::new(lines), text_area);
    if let Some(editor) = &app.prompts.editor {
        let r = Rect {
            y: inner.bottom().saturating_sub(editor_rows),
            height: editor_rows.min(inner.height),
            x: inner.x + 3,
            width: inner.width.saturating_sub(3),
        };
        frame.render_widget(editor, r);
    }
}

fn permission(app: &App, p: &PermissionRequest, width: usize, lines: &mut Vec<Line<'static>>) {
    let theme = &app.theme;
    let text = theme.style(Role::Text);
    let muted = theme.style(Role::Muted);
    let what = subject(p);
    let lead = if p.permission == "bash" { "$ " } else { "" };
    for l in sanitize::block(&what).lines().take(3) {
        lines.push(Line::styled(
            wrap::truncate(&format!("   {lead}{l}"), width),
            text,
        ));
    }
    if let Some(diff) = meta(p, "diff")
        && let Some(session) = app
            .selected_session()
            .or_else(|| app.store.session(&p.session_id))
    {
        let ctx = app.render_ctx(session, width as u16);
        let layout = DiffLayout::new(
            diff,
            lang_of(&what),
            width.saturating_sub(DIFF_INDENT.len()),
        );
        let total = layout.len();
        for mut l in layout.lines(&ctx, 0..DIFF_ROWS) {
            l.spans.insert(0, Span::raw(DIFF_INDENT));
            lines.push(l);
        }
        if total > DIFF_ROWS {
            lines.push(Line::styled(
                format!(
                    "{DIFF_INDENT}… {} more lines (v shows all)",
                    total - DIFF_ROWS
                ),
                muted,
            ));
        }
    }
    match app.prompts.step {
        PermStep::ConfirmAlways => {
            let remembered = if p.always.is_empty() {
                p.patterns.join(", ")
            } else {
                p.always.join(", ")
            };
            lines.push(Line::styled(
                wrap::truncate(
                    &format!(
                        "   Always allow? The server will remember: {}",
                        sanitize::line(&remembered)
                    ),
                    width,
                ),
                theme.style(Role::Warning),
            ));
            let k = |a| app.keymap.describe(a);
            lines.push(keys_line(
                app,
                &[
                    (&k(Action::Confirm), "confirm"),
                    (&k(Action::Cancel), "back"),
                ],
                width,
            ));
        }
        PermStep::RejectMessage => {
            lines.push(keys_line(
                app,
                &[("enter", "reject with this message"), ("esc", "back")],
                width,
            ));
        }
        PermStep::Choose => {
            let mut spans = vec![Span::raw("   ")];
            let choice_keys = [
                Action::AllowOnce,
                Action::AllowAlways,
                Action::Reject,
                Action::RejectMessage,
            ]
            .map(|a| app.keymap.hint(a).unwrap_or_default());
            for (i, ((_, label), k)) in PERM_CHOICES.iter().zip(&choice_keys).enumerate() {
                let style = if app.prompts.chose && i == app.prompts.choice {
                    theme.style(Role::SelectionFocus)
                } else {
                    text
                };
                spans.push(Span::styled(format!("[{k}]"), theme.style(Role::Accent)));
                spans.push(Span::styled(format!(" {label}"), style));
                spans.push(Span::raw("  "));
            }
            lines.push(Line::from(spans));
            let k = |a| app.keymap.hint(a).unwrap_or_default();
            let choose = format!(
                "{}/{} then {}",
                k(Action::ChoiceLeft),
                k(Action::ChoiceRight),
                k(Action::PromptEnter)
            );
            let view = format!("{}/{}", k(Action::PromptEnter), k(Action::PromptView));
            let next = format!("{}/{}", k(Action::PromptNext), k(Action::PromptPrev));
            lines.push(keys_line(
                app,
                &[
                    (&choose, "choose"),
                    (&view, "view"),
                    (&next, "next/prev"),
                    (&k(Action::PromptSession), "go to session"),
                    (&k(Action::PromptLater), "later"),
                ],
                width,
            ));
        }
    }
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
