//! The diff overlay: the session's modified files, and the chosen file's
//! diff with line numbers, unified or side by side when wide enough.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::blocks::RenderCtx;
use super::side_panel::modified_files;
use super::theme::Role;
use super::tools::body::diff_lines;
use super::wrap;
use crate::app::App;
use crate::model::Session;
use crate::model::patch::{self, Row};
use crate::sanitize;

/// Wider than this, old and new sit side by side.
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 160;

/// The patch of a modified file: the latest user message's diff for it, or
/// the session diff.
pub fn patch_of(session: &Session, file: &str) -> Option<String> {
    session
        .messages
        .iter()
        .rev()
        .flat_map(|m| m.info.diffs.iter())
        .chain(session.diff.iter())
        .find(|d| d.file == file)
        .and_then(|d| d.patch.clone())
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect, ctx: &RenderCtx) {
    let theme = &app.theme;
    frame.render_widget(Clear, screen);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::BorderFocus))
        .title(Line::styled(
            " Modified files (j/k file, ctrl-d/u scroll, Esc close) ",
            theme.style(Role::Title),
        ));
    let inner = block.inner(screen);
    frame.render_widget(block, screen);
    let Some(session) = app.selected_session() else {
        return;
    };
    let files = modified_files(session);
    if files.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no modified files", theme.style(Role::Muted))),
            inner,
        );
        return;
    }
    let list_w = (inner.width / 4).clamp(16, 40).min(inner.width);
    let list = Rect {
        width: list_w,
        ..inner
    };
    let body = Rect {
        x: inner.x + list_w + 1,
        width: inner.width.saturating_sub(list_w + 1),
        ..inner
    };
    let selected = app.diff_file.min(files.len() - 1);
    let dir = session.info.directory.as_deref().unwrap_or("");
    let rows: Vec<Line> = files
        .iter()
        .enumerate()
        .map(|(i, (f, a, d))| {
            let rel = f
                .strip_prefix(dir)
                .map(|f| f.trim_start_matches('/'))
                .unwrap_or(f);
            let counts = format!(" +{a} -{d}");
            let name = wrap::truncate(
                &sanitize::line(rel),
                (list_w as usize).saturating_sub(counts.len() + 1),
            );
            let style = if i == selected {
                theme.style(Role::SelectionFocus)
            } else {
                theme.style(Role::Text)
            };
            Line::from(vec![
                Span::styled(
                    if i == selected { "›" } else { " " },
                    theme.style(Role::Accent),
                ),
                Span::styled(name, style),
                Span::styled(counts, theme.style(Role::Muted)),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), list);
    let file = &files[selected].0;
    let Some(patch) = patch_of(session, file) else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "no patch recorded for this file",
                theme.style(Role::Muted),
            )),
            body,
        );
        return;
    };
    let lines = if body.width >= SIDE_BY_SIDE_MIN_WIDTH - list_w {
        side_by_side(&patch, ctx, body.width as usize)
    } else {
        diff_lines(&patch, ctx, body.width as usize)
    };
    let scroll = app.diff_scroll.min(lines.len().saturating_sub(1) as u16);
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), body);
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Same,
    Del,
    Add,
}

/// Old on the left, new on the right; deletions and additions of a change
/// pair up on the same rows.
pub fn side_by_side(patch: &str, ctx: &RenderCtx, width: usize) -> Vec<Line<'static>> {
    let half = width.saturating_sub(1) / 2;
    let style = |k: Kind| match k {
        Kind::Same => ctx.theme.style(Role::Text),
        Kind::Del => ctx.theme.style(Role::DiffDel),
        Kind::Add => ctx.theme.style(Role::DiffAdd),
    };
    let muted = ctx.theme.style(Role::Muted);
    let cell = |side: Option<(usize, &str, Kind)>| -> Vec<Span<'static>> {
        match side {
            None => vec![Span::raw(" ".repeat(half))],
            Some((n, text, k)) => {
                let num = format!("{n:>4} ");
                let body = wrap::truncate(&sanitize::line(text), half.saturating_sub(num.len()));
                let pad = half.saturating_sub(num.len() + wrap::width(&body));
                vec![
                    Span::styled(num, muted),
                    Span::styled(body, style(k)),
                    Span::raw(" ".repeat(pad)),
                ]
            }
        }
    };
    let mut out = Vec::new();
    let mut dels: Vec<(usize, String)> = Vec::new();
    let mut adds: Vec<(usize, String)> = Vec::new();
    let flush = |dels: &mut Vec<(usize, String)>,
                 adds: &mut Vec<(usize, String)>,
                 out: &mut Vec<Line<'static>>| {
        for i in 0..dels.len().max(adds.len()) {
            let l = dels.get(i).map(|(n, t)| (*n, t.as_str(), Kind::Del));
            let r = adds.get(i).map(|(n, t)| (*n, t.as_str(), Kind::Add));
            let mut spans = cell(l);
            spans.push(Span::styled("│", muted));
            spans.extend(cell(r));
            out.push(Line::from(spans));
        }
        dels.clear();
        adds.clear();
    };
    for row in patch::rows(patch) {
        match row {
            Row::Hunk(h) => {
                flush(&mut dels, &mut adds, &mut out);
                out.push(Line::styled(
                    wrap::truncate(&sanitize::line(h), width),
                    ctx.theme.style(Role::DiffHunk),
                ));
            }
            Row::Line {
                kind: patch::Kind::Removed,
                old: Some(o),
                text,
                ..
            } => dels.push((o, text.to_string())),
            Row::Line {
                kind: patch::Kind::Added,
                new: Some(n),
                text,
                ..
            } => adds.push((n, text.to_string())),
            Row::Line {
                kind: patch::Kind::Same,
                old: Some(o),
                new: Some(n),
                text,
            } => {
                flush(&mut dels, &mut adds, &mut out);
                let mut spans = cell(Some((o, text, Kind::Same)));
                spans.push(Span::styled("│", muted));
                spans.extend(cell(Some((n, text, Kind::Same))));
                out.push(Line::from(spans));
            }
            Row::Line { .. } => {}
        }
    }
    flush(&mut dels, &mut adds, &mut out);
    out
}
