//! The answers on record over the screen: when, the answer (an `always`
//! in the warning role, with what it allows), what the prompt showed, who
//! gave it and what the server said. Only the rows that fit are formatted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::archive::rows::AnswerRow;
use crate::model::wire::sanitize;
use crate::render::theme::{Role, Theme};
use crate::render::{clock, wrap};

/// The view's box on a screen: wide, nearly the whole height.
pub fn area(screen: Rect) -> Rect {
    let width = screen.width.saturating_sub(4).clamp(1, 160);
    let height = screen.height.saturating_sub(2).max(3.min(screen.height));
    crate::app::boxes::centred(screen, width, height)
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let view = &app.overlays.audit;
    let area = area(screen);
    let inner_w = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(3).max(1) as usize;
    let mut lines = vec![Line::styled(
        wrap::truncate(&view.filters(), inner_w),
        theme.style(Role::Muted),
    )];
    lines.extend(crate::app::boxes::read_state(
        view.error.as_deref(),
        view.loading,
        view.rows.is_empty(),
        ("reading the archive…", "no answer on record"),
        inner_w,
        theme,
    ));
    let first = view
        .selected
        .saturating_sub(rows / 3)
        .min(view.rows.len().saturating_sub(rows));
    let today = app.clock_ms();
    for (i, row) in view.rows.iter().enumerate().skip(first).take(rows) {
        lines.push(row_line(row, i == view.selected, inner_w, today, theme));
    }
    let key = |a: Action| app.keymap.hint(a).unwrap_or_default();
    let at = if view.rows.is_empty() {
        0
    } else {
        view.selected + 1
    };
    let title = format!(
        " Answers {at}/{} · {} kind · {} this session · {} open · {} close ",
        view.rows.len(),
        key(Action::ListKind),
        key(Action::ListThisSession),
        key(Action::ListChoose),
        key(Action::ListClose)
    );
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}

/// One answer: `12:03  ALWAYS (rm *)  bash: rm -rf build   alice@box · sent`.
fn row_line(
    row: &AnswerRow,
    chosen: bool,
    width: usize,
    today: i64,
    theme: &Theme,
) -> Line<'static> {
    let base = if chosen {
        theme.style(Role::SelectionFocus)
    } else {
        theme.style(Role::Text)
    };
    let time = format!("{:>12}  ", clock::wall_clock(row.time, today));
    let (answer, role) = match row.answer.as_str() {
        "always" => (
            format!("ALWAYS ({})", row.patterns.join(", ")),
            Role::Warning,
        ),
        "reject" => ("reject".to_string(), Role::Error),
        other => (other.to_string(), Role::Text),
    };
    let answer = format!("{}  ", wrap::truncate(&sanitize::line(&answer), 28));
    let who = match row.by.as_str() {
        "ocview" => format!("{}@{}", row.user, row.machine),
        other => other.to_string(),
    };
    let tail = format!(
        "  {} · {}",
        sanitize::line(&who),
        sanitize::line(&row.outcome)
    );
    let kind = row.prompt.rsplit(" · ").next().unwrap_or(&row.kind);
    let shown = row.shown.lines().next().unwrap_or_default();
    let room = width.saturating_sub(wrap::width(&time) + wrap::width(&answer) + wrap::width(&tail));
    let what = wrap::truncate(&sanitize::line(&format!("{kind}: {shown}")), room);
    let pad = room.saturating_sub(wrap::width(&what));
    Line::from(vec![
        Span::styled(time, theme.style(Role::Muted).patch(base)),
        Span::styled(answer, theme.style(role).patch(base)),
        Span::styled(format!("{what}{}", " ".repeat(pad)), base),
        Span::styled(tail, theme.style(Role::Muted).patch(base)),
    ])
}
