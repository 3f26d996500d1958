//! The insights over the screen. Failures: the totals, then a row per
//! model and tool (calls, failed, the rate with its bar, each outcome
//! apart, as wide as the screen allows); drilled into, the row's failed
//! calls under their error's fingerprint. Waits: the totals, where prompts
//! were answered, the longest waits, then the latest days and the
//! projects, as room allows. Only the rows that fit are formatted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::archive::tool_calls::Outcome;
use crate::insights::failures::{self, Cell};
use crate::model::wire::sanitize;
use crate::render::theme::{Role, Theme};
use crate::render::{clock, wrap};

use super::{Drill, DrillLine, InsightsView, Kind};

/// The view's box on a screen: wide, nearly the whole height.
pub fn area(screen: Rect) -> Rect {
    let width = screen.width.saturating_sub(4).clamp(1, 160);
    let height = screen.height.saturating_sub(2).max(3.min(screen.height));
    crate::app::boxes::centred(screen, width, height)
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let view = &app.overlays.insights;
    let area = area(screen);
    let width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(4).max(1) as usize;
    let key = |a: Action| app.keymap.hint(a).unwrap_or_default();
    let (title, lines) = match &view.drill {
        None if view.kind == Kind::Cost => (
            format!(
                " Cost · {} · 1-5 range · {} {} · {} open · {} close ",
                view.range_words(),
                key(Action::ListKind),
                view.kind.next().name(),
                key(Action::ListChoose),
                key(Action::ListClose)
            ),
            super::cost_draw::lines(view, width, rows, theme),
        ),
        None if view.kind == Kind::Waits => (
            format!(
                " Waits on people · {} · 1-5 range · {} {} · {} open · {} close ",
                view.range_words(),
                key(Action::ListKind),
                view.kind.next().name(),
                key(Action::ListChoose),
                key(Action::ListClose)
            ),
            waits_lines(view, width, rows, app.clock_ms(), theme),
        ),
        Some(drill) => (
            format!(
                " {} by {} · {} · {} open · {} back ",
                sanitize::line(&drill.tool),
                sanitize::line(&drill.model),
                view.range_words(),
                key(Action::ListChoose),
                key(Action::ListClose)
            ),
            drill_lines(drill, width, rows, app.clock_ms(), theme),
        ),
        None => (
            format!(
                " Failures by model and tool · {} · 1-5 range · {} order · {} {} · {} calls · {} close ",
                view.range_words(),
                key(Action::ListSort),
                key(Action::ListKind),
                view.kind.next().name(),
                key(Action::ListChoose),
                key(Action::ListClose)
            ),
            cell_lines(view, width, rows, theme),
        ),
    };
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}

/// The columns a width shows: the outcomes apart from 72 columns, the
/// rate's bar from 100.
struct Columns {
    model: usize,
    tool: usize,
    outcomes: bool,
    bar: usize,
}

impl Columns {
    /// At `width`, the names as wide as the longest of `cells` (what is
    /// left, at most).
    fn at(width: usize, cells: &[Cell]) -> Columns {
        let outcomes = width >= 72;
        let bar = if width >= 100 { 12 } else { 0 };
        // calls, failed, rate: 7 + 7 + 7; outcomes 4 × 6; the bar and its gap.
        let fixed = 21 + if outcomes { 24 } else { 0 } + if bar > 0 { bar + 2 } else { 0 } + 3;
        let names = width.saturating_sub(fixed).max(8);
        let longest = |f: fn(&Cell) -> &str, least: usize| {
            cells
                .iter()
                .map(|c| wrap::width(&sanitize::line(f(c))))
                .max()
                .unwrap_or(0)
                .max(least)
        };
        let tool = longest(|c| &c.tool, 4).min(16).min(names / 3);
        let model = longest(|c| &c.model, 5).min(names.saturating_sub(tool + 1).max(4));
        Columns {
            model,
            tool: tool.max(4),
            outcomes,
            bar,
        }
    }
}

fn cell_lines(view: &InsightsView, width: usize, rows: usize, theme: &Theme) -> Vec<Line<'static>> {
    let (calls, failed) = failures::totals(&view.cells);
    let rate = if calls == 0 {
        0.0
    } else {
        failed as f64 / calls as f64
    };
    let summary = format!(
        "{calls} tool calls, {failed} failed ({:.1}%) · by {}",
        rate * 100.0,
        view.sort.name()
    );
    let mut lines = vec![Line::styled(
        wrap::truncate(&summary, width),
        theme.style(Role::Muted),
    )];
    if let Some(state) = crate::app::boxes::read_state(
        view.error.as_deref(),
        view.loading,
        view.cells.is_empty(),
        ("reading the archive…", "no tool call in this range"),
        width,
        theme,
    ) {
        lines.push(state);
        return lines;
    }
    // Tall and wide: the model × tool heat map above the rows, in at most
    // half of them.
    let rows = if width >= 100 && rows >= 20 {
        let chosen = view.cells.get(view.selected);
        let map = super::matrix::lines(&view.cells, chosen, width, rows / 2, theme);
        let taken = map.len() + usize::from(!map.is_empty());
        lines.extend(map);
        if taken > 0 {
            lines.push(Line::raw(""));
        }
        rows - taken
    } else {
        rows
    };
    let c = Columns::at(width, &view.cells);
    let mut head = format!(
        " {:<mw$} {:<tw$} {:>6} {:>6} {:>6}",
        "MODEL",
        "TOOL",
        "CALLS",
        "FAILED",
        "RATE",
        mw = c.model,
        tw = c.tool
    );
    if c.bar > 0 {
        head.push_str(&format!("  {:<w$}", "", w = c.bar));
    }
    if c.outcomes {
        head.push_str(&format!(
            " {:>5} {:>5} {:>5} {:>5}",
            "ERR", "INV", "REJ", "ABT"
        ));
    }
    lines.push(Line::styled(
        wrap::truncate(&head, width),
        theme.style(Role::Heading),
    ));
    let first = view
        .selected
        .saturating_sub(rows / 3)
        .min(view.cells.len().saturating_sub(rows.saturating_sub(1)));
    for (i, cell) in view
        .cells
        .iter()
        .enumerate()
        .skip(first)
        .take(rows.saturating_sub(1))
    {
        lines.push(cell_line(cell, i == view.selected, &c, width, theme));
    }
    lines
}

/// One row: ` anthropic/claude  bash  120  12  10.0%  ██▌  8  0  3  1`.
fn cell_line(cell: &Cell, chosen: bool, c: &Columns, width: usize, theme: &Theme) -> Line<'static> {
    let base = if chosen {
        theme.style(Role::SelectionFocus)
    } else {
        Style::default()
    };
    let cut = |s: &str, w: usize| {
        let s = wrap::truncate(&sanitize::line(s), w);
        let pad = w.saturating_sub(wrap::width(&s));
        format!("{s}{}", " ".repeat(pad))
    };
    let rate_role = match cell.rate() {
        r if r >= 0.25 => Role::Error,
        r if r > 0.0 => Role::Warning,
        _ => Role::Muted,
    };
    let mut pieces: Vec<(String, Style)> = vec![
        (
            if chosen { "›" } else { " " }.to_string(),
            theme.style(Role::Accent).patch(base),
        ),
        (
            cut(&cell.model, c.model),
            theme.style(Role::Text).patch(base),
        ),
        (
            format!(" {}", cut(&cell.tool, c.tool)),
            theme.style(Role::Title).patch(base),
        ),
        (
            format!(" {:>6}", cell.calls),
            theme.style(Role::Text).patch(base),
        ),
        (
            format!(" {:>6}", cell.failed),
            theme.style(rate_role).patch(base),
        ),
        (
            format!(" {:>5.1}%", cell.rate() * 100.0),
            theme.style(rate_role).patch(base),
        ),
    ];
    if c.bar > 0 {
        pieces.push((
            format!("  {}", bar(cell.rate(), c.bar)),
            theme.style(rate_role).patch(base),
        ));
    }
    if c.outcomes {
        for o in [
            Outcome::Error,
            Outcome::Invalid,
            Outcome::Rejected,
            Outcome::Aborted,
        ] {
            let n = cell.outcomes.get(&o).copied().unwrap_or(0);
            let role = if n == 0 { Role::Muted } else { Role::Text };
            pieces.push((format!(" {n:>5}"), theme.style(role).patch(base)));
        }
    }
    let (spans, _) = wrap::truncate_pieces(&pieces, width);
    Line::from(spans)
}

/// A rate as a bar of `width` cells, eighths at its end.
fn bar(rate: f64, width: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (rate.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut out: String = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        out.push(EIGHTHS[eighths % 8]);
    }
    let used = out.chars().count();
    out.push_str(&" ".repeat(width.saturating_sub(used)));
    out
}

fn drill_lines(
    drill: &Drill,
    width: usize,
    rows: usize,
    today: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let n: usize = drill.groups.iter().map(|g| g.calls.len()).sum();
    let mut lines = vec![Line::styled(
        wrap::truncate(
            &format!(
                "{n} failed call{}, {} kind{} of error",
                if n == 1 { "" } else { "s" },
                drill.groups.len(),
                if drill.groups.len() == 1 { "" } else { "s" }
            ),
            width,
        ),
        theme.style(Role::Muted),
    )];
    if let Some(state) = crate::app::boxes::read_state(
        drill.error.as_deref(),
        drill.loading,
        drill.lines.is_empty(),
        ("reading the failed calls…", "no failed call in this range"),
        width,
        theme,
    ) {
        lines.push(state);
        return lines;
    }
    let first = drill
        .selected
        .saturating_sub(rows / 3)
        .min(drill.lines.len().saturating_sub(rows));
    for (i, line) in drill.lines.iter().enumerate().skip(first).take(rows) {
        let chosen = i == drill.selected;
        let base = if chosen {
            theme.style(Role::SelectionFocus)
        } else {
            Style::default()
        };
        let marker = if chosen { "›" } else { " " };
        let line = match *line {
            DrillLine::Group(g) => {
                let group = &drill.groups[g];
                let role = match group.outcome {
                    Outcome::Rejected => Role::Warning,
                    _ => Role::Error,
                };
                let head = format!(
                    "{marker}{:>5} × {:<8} ",
                    group.calls.len(),
                    group.outcome.name()
                );
                let room = width.saturating_sub(wrap::width(&head));
                Line::from(vec![
                    Span::styled(head, theme.style(role).patch(base)),
                    Span::styled(
                        wrap::truncate(&sanitize::line(&group.fingerprint), room),
                        theme.style(Role::Title).patch(base),
                    ),
                ])
            }
            DrillLine::Call(g, c) => {
                let call = &drill.groups[g].calls[c];
                let when = format!(
                    "{marker}        {:>12}  ",
                    clock::wall_clock(call.time, today)
                );
                let title = format!("{}  ", wrap::truncate(&sanitize::line(&call.title), 28));
                let room = width.saturating_sub(wrap::width(&when) + wrap::width(&title));
                let error = call.error.lines().next().unwrap_or_default();
                Line::from(vec![
                    Span::styled(when, theme.style(Role::Muted).patch(base)),
                    Span::styled(title, theme.style(Role::Text).patch(base)),
                    Span::styled(
                        wrap::truncate(&sanitize::line(error), room),
                        theme.style(Role::Muted).patch(base),
                    ),
                ])
            }
        };
        lines.push(line);
    }
    lines
}

/// The waits: the totals, where prompts were answered, then the longest
/// waits (selectable), then the projects that waited most, as room allows.
fn waits_lines(
    view: &InsightsView,
    width: usize,
    rows: usize,
    today: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    use crate::insights::waits::duration;
    let asked = view.waits.as_deref().map(|w| w.total.asked);
    if let Some(state) = crate::app::boxes::read_state(
        view.error.as_deref(),
        view.loading || asked.is_none(),
        asked == Some(0),
        ("reading the archive…", "no prompt asked in this range"),
        width,
        theme,
    ) {
        return vec![state];
    }
    let Some(w) = view.waits.as_deref() else {
        return Vec::new();
    };
    let t = &w.total;
    let d = |ms: Option<i64>| ms.map_or("-".to_string(), duration);
    let muted = |text: String| Line::styled(wrap::truncate(&text, width), theme.style(Role::Muted));
    let mut lines = vec![
        Line::styled(
            wrap::truncate(
                &format!(
                    "{} prompts asked, {} answered, {} rejected ({:.1}%), {} never answered",
                    t.asked,
                    t.answered,
                    t.rejected,
                    t.rejected_share() * 100.0,
                    t.never_answered
                ),
                width,
            ),
            theme.style(Role::Text),
        ),
        muted(format!(
            "waited: median {}, p90 {}, longest {}",
            d(t.median_ms),
            d(t.p90_ms),
            d(t.longest_ms)
        )),
        muted(format!(
            "answered by: {}",
            w.answered_where
                .iter()
                .map(|(place, n)| format!("{} {n}", place.words()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Line::styled(
            wrap::truncate(" LONGEST WAITS", width),
            theme.style(Role::Heading),
        ),
    ];
    // The longest waits take at most half of what is left when the days
    // and projects have something to say.
    let left = rows.saturating_sub(lines.len() + 1);
    let room = match w.by_day.len() + w.by_project.len() {
        0 => left,
        _ => left.div_ceil(2).max(3).min(left),
    };
    let first = view
        .wait_selected
        .saturating_sub(room / 3)
        .min(w.longest.len().saturating_sub(room));
    for (i, l) in w.longest.iter().enumerate().skip(first).take(room) {
        let chosen = i == view.wait_selected;
        let base = if chosen {
            theme.style(Role::SelectionFocus)
        } else {
            Style::default()
        };
        let head = format!(
            "{}{:>9}  {:>12}  {:<10} ",
            if chosen { "›" } else { " " },
            d(l.waited()),
            clock::wall_clock(l.asked.unwrap_or_default(), today),
            wrap::truncate(&sanitize::line(&l.what), 10)
        );
        let reply = format!("  {}", sanitize::line(l.reply.as_deref().unwrap_or("-")));
        let room = width.saturating_sub(wrap::width(&head) + wrap::width(&reply));
        let title = wrap::truncate(&sanitize::line(&l.title), room);
        let pad = room.saturating_sub(wrap::width(&title));
        let role = if l.rejected() {
            Role::Warning
        } else {
            Role::Muted
        };
        lines.push(Line::from(vec![
            Span::styled(head, theme.style(Role::Accent).patch(base)),
            Span::styled(
                format!("{title}{}", " ".repeat(pad)),
                theme.style(Role::Text).patch(base),
            ),
            Span::styled(reply, theme.style(role).patch(base)),
        ]));
    }
    let left = rows.saturating_sub(lines.len());
    // The latest days, most recent first, then the projects.
    let days = w.by_day.len().min(7).min(left.saturating_sub(1) / 2);
    if days > 0 {
        lines.push(Line::styled(
            wrap::truncate(" BY DAY", width),
            theme.style(Role::Heading),
        ));
        for (day, f) in w.by_day.iter().rev().take(days) {
            lines.push(muted(format!(
                " {day:<40} {:>5} asked  median {}  longest {}",
                f.asked,
                d(f.median_ms),
                d(f.longest_ms)
            )));
        }
    }
    let left = rows.saturating_sub(lines.len());
    if left >= 2 && !w.by_project.is_empty() {
        lines.push(Line::styled(
            wrap::truncate(" BY PROJECT", width),
            theme.style(Role::Heading),
        ));
        for (project, f) in w.by_project.iter().take(left - 1) {
            lines.push(muted(format!(
                " {:<40} {:>5} asked  median {}  longest {}",
                wrap::truncate_start(&sanitize::line(project), 40),
                f.asked,
                d(f.median_ms),
                d(f.longest_ms)
            )));
        }
    }
    lines
}
