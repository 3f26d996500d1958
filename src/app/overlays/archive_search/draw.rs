//! The archive search over the screen: what is typed, then each hit in two
//! rows (when, title, project, where from; the snippet with the words in
//! the match role). Only the hits that fit are formatted; every string
//! from the archive is sanitised (snippets when they arrive, the rest here).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::{clock, wrap};

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let view = &app.archive.view;
    let width = screen.width.saturating_sub(4).clamp(1, 120);
    let height = screen.height.saturating_sub(2).max(3.min(screen.height));
    let area = crate::app::boxes::centred(screen, width, height);
    let inner = area.width.saturating_sub(2) as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled("› ", theme.style(Role::Accent)),
        Span::styled(
            format!(
                "{}▏",
                wrap::truncate(&sanitize::line(&view.input), inner.saturating_sub(3))
            ),
            theme.style(Role::Text),
        ),
    ])];
    let today = app.clock_ms();
    let note = if view.waiting {
        Some("searching…".to_string())
    } else {
        let unchecked = view.unchecked_before.map(|t| {
            format!(
                "parts older than {} were not searched for the phrase\nuntil:{t} searches them",
                clock::wall_clock(t, today).trim()
            )
        });
        match (view.status.clone(), unchecked) {
            (Some(status), Some(unchecked)) => Some(format!("{status}\n{unchecked}")),
            (status, unchecked) => status.or(unchecked),
        }
    };
    if let Some(note) = note {
        for line in note.lines() {
            lines.push(Line::styled(
                wrap::truncate(&sanitize::line(line), inner),
                theme.style(Role::Muted),
            ));
        }
    } else {
        lines.push(Line::default());
    }
    let rows = (area.height.saturating_sub(2) as usize).saturating_sub(lines.len()) / 2;
    let first = view
        .selected
        .saturating_sub(rows.saturating_sub(1))
        .min(view.hits.len().saturating_sub(rows.max(1)));
    for (i, hit) in view.hits.iter().enumerate().skip(first).take(rows) {
        lines.extend(hit_lines(app, hit, i == view.selected, today, inner));
    }
    let key = |a: Action| app.keymap.hint(a).unwrap_or_default();
    let at = if view.hits.is_empty() {
        0
    } else {
        view.selected + 1
    };
    let title = format!(
        " Archive {at}/{} · tool: project: state: … filter · {} open · esc close ",
        view.hits.len(),
        key(Action::ListChoose),
    );
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}

/// A hit's two lines: when, its session's title, project and origin; then
/// its kind and the text around what matched.
fn hit_lines(
    app: &App,
    hit: &crate::archive::Hit,
    chosen: bool,
    today: i64,
    inner: usize,
) -> [Line<'static>; 2] {
    let theme = &app.theme;
    let base = if chosen {
        theme.style(Role::SelectionFocus)
    } else {
        theme.style(Role::Text)
    };
    let when = format!("{:>12}  ", clock::wall_clock(hit.time, today));
    let from = hit
        .server
        .as_deref()
        .or(hit
            .file
            .as_deref()
            .map(|f| f.rsplit('/').next().unwrap_or(f)))
        .or(hit.host.as_deref())
        .unwrap_or("");
    let project = hit
        .project
        .as_deref()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("");
    let tail = format!("  {}  {}", sanitize::line(project), sanitize::line(from));
    let room = inner.saturating_sub(wrap::width(&when) + wrap::width(&tail));
    let title = wrap::truncate(&sanitize::line(&hit.title), room);
    let pad = room.saturating_sub(wrap::width(&title));
    let head = Line::from(vec![
        Span::styled(when, theme.style(Role::Muted).patch(base)),
        Span::styled(format!("{title}{}", " ".repeat(pad)), base),
        Span::styled(
            wrap::truncate(&tail, inner.saturating_sub(room)),
            theme.style(Role::Muted).patch(base),
        ),
    ]);
    let mut spans = vec![Span::styled(
        format!("{:>12}  ", sanitize::line(&hit.kind)),
        theme.style(Role::Muted),
    )];
    let mut left = inner.saturating_sub(14);
    for (piece, matched) in hit.pieces() {
        if left == 0 {
            break;
        }
        let piece = wrap::truncate(&piece, left);
        left = left.saturating_sub(wrap::width(&piece));
        let role = if matched { Role::Match } else { Role::Text };
        spans.push(Span::styled(piece, theme.style(role)));
    }
    [head, Line::from(spans)]
}
