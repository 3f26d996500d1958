//! The side panel: the selected session's todos and the files it modified.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::App;
use crate::model::entity::prompt::TodoStatus;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

/// From this share of its model's context window on, a session's context
/// use is worth the panel's columns: the session nears compaction. Below
/// it, and for the cost and token totals, the turn view's header says
/// enough.
pub const CONTEXT_WORTH_PERCENT: u64 = 70;

/// Whether the panel has something to show for `session` by itself: todos,
/// modified files, or a context use of `CONTEXT_WORTH_PERCENT` or more.
/// An empty panel ("Todos 0/0 none") takes no columns from the turns.
pub fn has_something(app: &App, session: &crate::model::Session) -> bool {
    let files = if app.files.0 == session.info.id {
        !app.files.2.is_empty()
    } else {
        // Not cached for this session: not worth a walk of every message
        // each frame; `App::prepare` caches the selected session's.
        false
    };
    !session.todos.is_empty()
        || files
        || crate::model::entity::context::context_use(session, app.store.model_limits())
            .and_then(|c| c.percent())
            .is_some_and(|p| p >= CONTEXT_WORTH_PERCENT)
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect, overlay: bool) {
    let theme = &app.theme;
    if overlay {
        frame.render_widget(Clear, area);
    }
    let block = Block::default()
        .borders(if overlay { Borders::ALL } else { Borders::LEFT })
        .border_style(theme.style(Role::Border));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = Vec::new();
    let Some(session) = app.selected_session() else {
        frame.render_widget(
            Paragraph::new(Line::styled("no session", theme.style(Role::Muted))),
            inner,
        );
        return;
    };
    context_lines(app, session, &mut lines);
    lines.push(Line::default());
    todo_lines(app, session, width, &mut lines);
    lines.push(Line::default());
    file_lines(app, session, width, &mut lines);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// How full the context is, and what the session cost.
fn context_lines(app: &App, session: &crate::model::Session, lines: &mut Vec<Line<'static>>) {
    let theme = &app.theme;
    match crate::model::entity::context::context_use(session, app.store.model_limits()) {
        Some(c) => {
            let head = match c.percent() {
                Some(p) => format!("Context {p}%"),
                None => "Context".to_string(),
            };
            lines.push(Line::styled(head, theme.style(Role::Title)));
            let of = c
                .limit
                .map(|l| format!(" of {}", crate::render::format::limit_tokens(l)))
                .unwrap_or_default();
            lines.push(Line::styled(
                format!("  {}{of} tokens", crate::render::format::tokens(c.used)),
                theme.style(Role::Text),
            ));
        }
        None => lines.push(Line::styled("Context", theme.style(Role::Title))),
    }
    let totals = session.totals();
    lines.push(Line::styled(
        format!("  cost {}", crate::render::format::totals_cost(&totals)),
        theme.style(Role::Muted),
    ));
    if totals.token_count() > 0 {
        let n = crate::render::format::tokens(totals.token_count());
        lines.push(Line::styled(
            format!(
                "  tokens {}",
                crate::render::format::summed(n, totals.tokens_summed)
            ),
            theme.style(Role::Muted),
        ));
    }
}

/// The todos, done of all, each with its state and priority.
fn todo_lines(
    app: &App,
    session: &crate::model::Session,
    width: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = &app.theme;
    let done = session
        .todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    lines.push(Line::styled(
        format!("Todos {done}/{}", session.todos.len()),
        theme.style(Role::Title),
    ));
    if session.todos.is_empty() {
        lines.push(Line::styled("  none", theme.style(Role::Muted)));
    }
    for todo in &session.todos {
        let (mark, role) = match todo.status {
            TodoStatus::Completed => ("[x]", Role::Success),
            TodoStatus::InProgress => ("[>]", Role::Running),
            TodoStatus::Cancelled => ("[-]", Role::Muted),
            _ => ("[ ]", Role::Text),
        };
        let prio = match todo.priority.as_str() {
            "high" => "!",
            _ => " ",
        };
        let text = wrap::truncate(&sanitize::line(&todo.content), width.saturating_sub(6));
        lines.push(Line::from(vec![
            Span::styled(format!("{prio}{mark} "), theme.style(role)),
            Span::styled(
                text,
                theme.style(if todo.status == TodoStatus::Cancelled {
                    Role::Muted
                } else {
                    Role::Text
                }),
            ),
        ]));
    }
}

/// The files the session changed, with their lines added and removed.
fn file_lines(
    app: &App,
    session: &crate::model::Session,
    width: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = &app.theme;
    let files = if app.files.0 == session.info.id {
        app.files.2.clone()
    } else {
        session.modified_files()
    };
    lines.push(Line::styled(
        format!("Modified files {}", files.len()),
        theme.style(Role::Title),
    ));
    if files.is_empty() {
        lines.push(Line::styled("  none", theme.style(Role::Muted)));
    }
    let dir = session.info.directory.as_deref().unwrap_or("");
    for (file, adds, dels) in files {
        let counts = format!(" +{adds} -{dels}");
        let rel = file
            .strip_prefix(dir)
            .map(|f| f.trim_start_matches('/'))
            .unwrap_or(&file);
        let name = wrap::truncate(
            &sanitize::line(rel),
            width.saturating_sub(wrap::width(&counts) + 1),
        );
        lines.push(Line::from(vec![
            Span::styled(format!(" {name}"), theme.style(Role::Text)),
            Span::styled(format!(" +{adds}"), theme.style(Role::DiffAdd)),
            Span::styled(format!(" -{dels}"), theme.style(Role::DiffDel)),
        ]));
    }
}
