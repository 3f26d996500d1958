//! The session list: a tree of sessions with status, age, badge and cost.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::panes::session_list::width as row_width;
use crate::app::session_tree::groups::{Counts, Group, Level};
use crate::app::session_tree::rows::SessionRow;
use crate::app::{App, Focus};
use crate::model::SessionStatus;
use crate::model::store::fleet::ServerState;
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::Role;
use crate::render::wrap;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    if app.areas.list_bar {
        draw_bar(frame, app, area);
        return;
    }
    let theme = &app.theme;
    let focused = app.focus == Focus::Sessions;
    let border = theme.style(if focused {
        Role::BorderFocus
    } else {
        Role::Border
    });
    frame.render_widget(
        Block::default()
            .borders(Borders::RIGHT)
            .border_style(border),
        area,
    );

    let width = area.width.saturating_sub(1) as usize;
    let header = header(app);
    frame.render_widget(
        Paragraph::new(header),
        Rect {
            height: 1,
            width: width as u16,
            ..area
        },
    );

    let inner = crate::app::boxes::list_inner(area);
    let sessions = app.store.sessions();
    let selected = app.selected_row();
    // In a fleet, sessions sit a column in from their project's heading,
    // as it does from its server's.
    let fleet = row_width::is_fleet_list(&app.panes.list.rows);
    let mut lines = Vec::new();
    for (i, row) in app
        .panes
        .list
        .rows
        .iter()
        .enumerate()
        .skip(app.panes.list.offset)
        .take(inner.height as usize)
    {
        if let (Some(text), Some(group)) = (&row.header, &row.group) {
            let style = selection_style(app, Some(i) == selected);
            lines.push(group_line(app, row, group, text, width, style));
            continue;
        }
        if let Some(dir) = &row.header {
            let badge = if row.badge { " •" } else { "" };
            let text = wrap::truncate(&format!("▍{}{badge}", sanitize::line(dir)), width);
            lines.push(Line::styled(text, theme.style(Role::Heading)));
            continue;
        }
        lines.push(session_line(
            app,
            &sessions[row.index],
            row,
            fleet,
            width,
            Some(i) == selected,
        ));
    }
    if app.panes.list.rows.is_empty() {
        // Never "no match" before every session was searched.
        let text = if app.panes.list.filter.is_empty() {
            "no sessions yet".to_string()
        } else {
            app.list_search_progress()
                .unwrap_or_else(|| "no session matches".to_string())
        };
        lines.push(Line::styled(text, theme.style(Role::Muted)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The list's first line: the filter being typed (and how far its search
/// is), or "Sessions N".
fn header(app: &App) -> Line<'static> {
    let theme = &app.theme;
    if app.panes.list.filtering || !app.panes.list.filter.is_empty() {
        let cursor = if app.panes.list.filtering { "▏" } else { "" };
        let mut spans = vec![
            Span::styled("/", theme.style(Role::Accent)),
            Span::styled(
                format!("{}{cursor}", sanitize::line(&app.panes.list.filter)),
                theme.style(Role::Text),
            ),
        ];
        if let Some(progress) = app.list_search_progress_short() {
            spans.push(Span::styled(
                format!("  {progress}"),
                theme.style(Role::Muted),
            ));
        }
        Line::from(spans)
    } else {
        let n = app.panes.list.listed;
        Line::from(vec![
            Span::styled("Sessions", theme.style(Role::Title)),
            Span::styled(format!(" {n}"), theme.style(Role::Muted)),
        ])
    }
}

/// One session's row: the selection mark, its place in the tree, its
/// status glyph and prompt badge, its title, the filter's hits in it, and
/// its time and cost.
fn session_line(
    app: &App,
    s: &crate::model::Session,
    row: &crate::app::session_tree::rows::SessionRow,
    fleet: bool,
    width: usize,
    is_sel: bool,
) -> Line<'static> {
    let theme = &app.theme;
    let indent = row_width::indent(fleet, row.depth);
    let fold = match (row.has_children, row.folded) {
        (true, true) => "▸",
        (true, false) => "▾",
        _ => " ",
    };
    let (glyph, role) = if s.error.is_some() && s.status == SessionStatus::Idle {
        ("✗", Role::Error)
    } else {
        match &s.status {
            SessionStatus::Busy => (format::spinner(app.now_ms), Role::Running),
            SessionStatus::Retry { .. } => ("↻", Role::Warning),
            _ => ("·", Role::Muted),
        }
    };
    let badge = if row.own_prompt {
        "?"
    } else if row.badge {
        "•"
    } else {
        ""
    };
    let right = row_width::right_text(app, s, width > row_width::COST_FROM);
    // Hits of the filter in this session's content.
    let hits = row_width::hits_text(app, s);
    let left_w = row_width::left_width(&indent, !badge.is_empty());
    let title_w = width.saturating_sub(left_w + wrap::width(&right) + wrap::width(&hits) + 1);
    let title = wrap::truncate(&sanitize::line(s.title()), title_w);
    let pad = width
        .saturating_sub(left_w + wrap::width(&title) + wrap::width(&hits) + wrap::width(&right));
    let base = selection_style(app, is_sel).unwrap_or_default();
    let mut spans = vec![
        Span::styled(if is_sel { "›" } else { " " }, theme.style(Role::Accent)),
        Span::raw(indent),
        Span::styled(fold, theme.style(Role::Muted)),
        Span::styled(format!("{glyph} "), theme.style(role)),
    ];
    if !badge.is_empty() {
        spans.push(Span::styled(badge, theme.style(Role::Badge)));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(title, theme.style(Role::Text)));
    spans.push(Span::raw(" ".repeat(pad)));
    if !hits.is_empty() {
        spans.push(Span::styled(hits, theme.style(Role::Accent)));
    }
    spans.push(Span::styled(right, theme.style(Role::Muted)));
    let spans = spans
        .into_iter()
        .map(|s| if is_sel { s.patch_style(base) } else { s })
        .collect::<Vec<_>>();
    Line::from(spans)
}

/// The style a selected row is patched with (`None`: not selected).
fn selection_style(app: &App, selected: bool) -> Option<Style> {
    let role = if app.focus == Focus::Sessions {
        Role::SelectionFocus
    } else {
        Role::Selection
    };
    selected.then(|| app.theme.style(role))
}

/// A fleet's heading: fold mark, server (with its state) or project, the
/// `•` badge, and on the right what its sessions are doing. At a narrow
/// width the name gives way first, then the state; the counts stay.
fn group_line(
    app: &App,
    row: &SessionRow,
    group: &Group,
    text: &str,
    width: usize,
    selected: Option<Style>,
) -> Line<'static> {
    let theme = &app.theme;
    let fold = match (row.has_children, row.folded) {
        (true, true) => "▸ ",
        (true, false) => "▾ ",
        _ => "  ",
    };
    let marker = if selected.is_some() { "›" } else { " " };
    let lead = format!("{}{fold}", " ".repeat(row.depth as usize));
    let (state, name_role) = match &group.level {
        Level::Server(Some(s)) => {
            let role = match s {
                ServerState::Reconnecting { .. } => Role::Warning,
                ServerState::AuthFailed { .. } | ServerState::Failed { .. } => Role::Error,
                ServerState::Connecting | ServerState::Live | ServerState::Gone => Role::Muted,
            };
            let name = if *s == ServerState::Gone {
                Role::Muted
            } else {
                Role::Title
            };
            (group.state_label(s).map(|label| (label, role)), name)
        }
        Level::Server(None) => (None, Role::Title),
        Level::Project => (None, Role::Heading),
    };
    let badge = if row.badge { " •" } else { "" };
    let right = if group.counts.sessions == 0 {
        vec![(" no sessions".to_string(), theme.style(Role::Muted))]
    } else {
        counts(app, &group.counts)
    };
    let right_w: usize = right.iter().map(|(t, _)| wrap::width(t)).sum();
    let fixed = 1 + wrap::width(&lead) + wrap::width(badge) + right_w;
    let name = sanitize::line(text);
    let name_w = wrap::width(&name).min(6);
    let room = width.saturating_sub(fixed);
    // The state keeps what the name's first columns leave it.
    let state = state.and_then(|(label, role)| {
        let label = wrap::truncate(&label, room.saturating_sub(name_w + 1));
        (wrap::width(&label) >= 3).then_some((label, role))
    });
    let state_w = state.as_ref().map_or(0, |(l, _)| 1 + wrap::width(l));
    let room = room.saturating_sub(state_w);
    let name = if group.level == Level::Project {
        wrap::truncate_start(&name, room)
    } else {
        wrap::truncate_address(&name, room)
    };
    let mut pieces = vec![
        (marker.to_string(), theme.style(Role::Accent)),
        (lead, theme.style(Role::Muted)),
        (name, theme.style(name_role)),
    ];
    if let Some((label, role)) = state {
        pieces.push((format!(" {label}"), theme.style(role)));
    }
    if !badge.is_empty() {
        pieces.push((" ".into(), Style::default()));
        pieces.push(("•".into(), theme.style(Role::Badge)));
    }
    let used: usize = pieces.iter().map(|(t, _)| wrap::width(t)).sum();
    pieces.push((
        " ".repeat(width.saturating_sub(used + right_w)),
        Style::default(),
    ));
    pieces.extend(right);
    let (spans, _) = wrap::truncate_pieces(&pieces, width);
    let spans = spans.into_iter();
    match selected {
        Some(base) => Line::from(spans.map(|s| s.patch_style(base)).collect::<Vec<_>>()),
        None => Line::from(spans.collect::<Vec<_>>()),
    }
}

/// A group's counts, each with its glyph as the session rows show it:
/// busy (the spinner), waiting for an answer (`?`), failed (`✗`).
fn counts(app: &App, counts: &Counts) -> Vec<(String, Style)> {
    let theme = &app.theme;
    let spinner = format::spinner(app.now_ms);
    [
        (counts.busy, spinner, Role::Running),
        (counts.asking, "?", Role::Warning),
        (counts.failed, "✗", Role::Error),
    ]
    .into_iter()
    .filter(|(n, ..)| *n > 0)
    .map(|(n, glyph, role)| (format!(" {glyph}{n}"), theme.style(role)))
    .collect()
}

/// A fleet's selected heading, in words: "server a:1 gone", "project /p1".
fn group_title(app: &App) -> Option<String> {
    let i = app.selected_row()?;
    let (text, group) = (
        app.panes.list.rows[i].header.as_deref()?,
        app.panes.list.rows[i].group.as_ref()?,
    );
    let text = sanitize::line(text);
    Some(match &group.level {
        Level::Server(Some(state)) => format!("server {text} {}", state.label()),
        Level::Server(None) => format!("server {text}"),
        Level::Project => format!("project {text}"),
    })
}

/// The list folded to one line (narrow terminals, or hidden): which session
/// is shown, where it is in the list, and what the others are doing.
fn draw_bar(frame: &mut Frame, app: &App, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Focus::Sessions;
    let sessions = app.store.sessions();
    let total = app
        .panes
        .list
        .rows
        .iter()
        .filter(|r| r.header.is_none())
        .count();
    let at = app
        .selected_row()
        .filter(|&i| app.panes.list.rows[i].header.is_none())
        .map(|i| {
            app.panes.list.rows[..=i]
                .iter()
                .filter(|r| r.header.is_none())
                .count()
        });
    let busy = sessions
        .iter()
        .filter(|s| matches!(s.status, SessionStatus::Busy | SessionStatus::Retry { .. }))
        .count();
    let asking = app.prompt_queue().len();
    let width = area.width as usize;
    let mut right = Vec::new();
    if busy > 0 {
        right.push(format!("{busy} busy"));
    }
    if asking > 0 {
        right.push(format!("{asking} asking"));
    }
    if let Some(k) = app.keymap.hint(crate::app::keymap::Action::ToggleList) {
        right.push(format!("{k} list"));
    }
    let right = format!(" {} ", right.join(" · "));
    let head = match at {
        Some(i) => format!(" Sessions {i}/{total} ▸ "),
        None => format!(" Sessions {total} ▸ "),
    };
    let title = app
        .selected_session()
        .map(|s| sanitize::line(s.title()).into_owned())
        .or_else(|| group_title(app))
        .unwrap_or_else(|| "none selected".into());
    let room = width.saturating_sub(wrap::width(&head) + wrap::width(&right));
    let title = wrap::truncate(&title, room);
    let pad = room.saturating_sub(wrap::width(&title));
    let title_style = theme.style(if focused {
        Role::SelectionFocus
    } else {
        Role::Title
    });
    let line = Line::from(vec![
        Span::styled(head, theme.style(Role::Accent)),
        Span::styled(title, title_style),
        Span::raw(" ".repeat(pad)),
        Span::styled(right, theme.style(Role::Muted)),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
