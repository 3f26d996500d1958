//! The diff overlay: the session's modified files, and the chosen file's
//! diff (see `diff_lines`: banded, highlighted, side by side when wide).

pub mod keys;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::App;
use crate::model::Session;
use crate::model::wire::sanitize;
use crate::render::blocks::RenderCtx;
use crate::render::diff_lines::DiffLayout;
use crate::render::theme::Role;
use crate::render::tools::lang_of;
use crate::render::wrap;

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

/// What the diff view keeps while open.
#[derive(Debug, Default)]
pub struct DiffViewState {
    /// The chosen file, by its place in the session's modified files.
    pub file: usize,
    pub scroll: u16,
}

/// The overlay's title, with its keys.
fn title(app: &App) -> String {
    use crate::app::keymap::Action as A;
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    format!(
        " Modified files ({}/{} file, {}/{} scroll, {} close) ",
        k(A::DiffNextFile),
        k(A::DiffPrevFile),
        k(A::DiffScrollDown),
        k(A::DiffScrollUp),
        k(A::DiffClose)
    )
}

/// The files, each with its lines added and removed, the selected marked.
fn file_rows(
    app: &App,
    files: &[(String, u64, u64)],
    selected: usize,
    dir: &str,
    list_w: usize,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    files
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
                list_w.saturating_sub(counts.len() + 1),
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
        .collect()
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect, ctx: &RenderCtx) {
    let theme = &app.theme;
    frame.render_widget(Clear, screen);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::BorderFocus))
        .title(Line::styled(title(app), theme.style(Role::Title)));
    let inner = block.inner(screen);
    frame.render_widget(block, screen);
    let Some(session) = app.selected_session() else {
        return;
    };
    // Laid out by `prepare` for the selected session; walked again only
    // if that was another one.
    let fresh;
    let files = if app.files.0 == session.info.id {
        &app.files.2
    } else {
        fresh = session.modified_files();
        &fresh
    };
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
    let selected = app.overlays.diff.file.min(files.len() - 1);
    let dir = session.info.directory.as_deref().unwrap_or("");
    let rows = file_rows(app, files, selected, dir, list_w as usize);
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
    // Side by side when the diff area is wide enough; only the lines in
    // view are styled.
    let layout = DiffLayout::new(&patch, lang_of(file), body.width as usize);
    let top = (app.overlays.diff.scroll as usize).min(layout.len().saturating_sub(1));
    let lines = layout.lines(ctx, top..top + body.height as usize);
    frame.render_widget(Paragraph::new(lines), body);
}
