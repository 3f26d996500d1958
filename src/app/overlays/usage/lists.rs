//! The usage view's list, one at a time (`tab`): the costliest sessions
//! (enter opens one), a table of each day (newest first: cost, messages,
//! the tokens of each kind, the models), the projects and agents (their
//! names whole), or the tools used (calls, their share, a bar). Only the
//! rows that fit are formatted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{List, UsageView};
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::{Role, Theme};
use crate::render::wrap;
use crate::source::opencode_db::usage::Usage;

/// The rows the chosen list holds.
pub fn rows(view: &UsageView, u: &Usage) -> usize {
    match view.list {
        List::Sessions => u.costliest.len(),
        List::Days => u.by_day.len(),
        List::Projects => u.by_project.len() + u.by_agent.len(),
        List::Tools => u.tools.len(),
    }
}

/// The list's title.
pub fn title(view: &UsageView, tab: &str) -> String {
    let (what, others) = match view.list {
        List::Sessions => ("costliest sessions (enter opens)", "days"),
        List::Days => ("by day", "projects"),
        List::Projects => ("by project · by agent", "tools"),
        List::Tools => ("tools", "sessions"),
    };
    format!(" {what} · {tab} {others} ")
}

pub fn draw(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let rows = area.height as usize;
    let width = area.width as usize;
    let lines = match view.list {
        List::Sessions => sessions(theme, view, u, rows, width),
        List::Days => days(theme, view, u, rows, width),
        List::Projects => {
            let first = first_row(view.selected, rows);
            group_lines(theme, u, width, Some(view.selected))
                .into_iter()
                .skip(first)
                .take(rows)
                .collect()
        }
        List::Tools => tools(theme, view, u, rows, width),
    };
    frame.render_widget(Paragraph::new(lines), area);
}

/// The first row shown so that the chosen one is in view.
fn first_row(selected: usize, rows: usize) -> usize {
    selected.saturating_sub(rows.saturating_sub(1))
}

/// A row: `name` on the left, `figures` on the right, chosen or not.
fn row(theme: &Theme, name: &str, figures: &str, chosen: bool, width: usize) -> Line<'static> {
    let marker = if chosen { "› " } else { "  " };
    let name = wrap::truncate(
        &format!("{marker}{name}"),
        width.saturating_sub(wrap::width(figures)),
    );
    let pad = width.saturating_sub(wrap::width(&name) + wrap::width(figures));
    let style = if chosen {
        theme.style(Role::SelectionFocus)
    } else {
        Style::default()
    };
    Line::from(vec![
        Span::styled(name, theme.style(Role::Text).patch(style)),
        Span::styled(" ".repeat(pad), style),
        Span::styled(figures.to_string(), theme.style(Role::Muted).patch(style)),
    ])
}

fn said(theme: &Theme, text: &str) -> Vec<Line<'static>> {
    vec![Line::styled(text.to_string(), theme.style(Role::Muted))]
}

fn sessions(
    theme: &Theme,
    view: &UsageView,
    u: &Usage,
    rows: usize,
    width: usize,
) -> Vec<Line<'static>> {
    if u.costliest.is_empty() {
        return said(theme, "no sessions in this range");
    }
    let first = first_row(view.selected, rows);
    u.costliest
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, s)| {
            let figures = format!(
                " {} {}",
                format::summed(format::cost(s.figures.cost), s.summed),
                format::tokens(s.figures.tokens())
            );
            let title = if s.title.is_empty() { &s.id } else { &s.title };
            row(
                theme,
                &sanitize::line(title),
                &figures,
                i == view.selected,
                width,
            )
        })
        .collect()
}

/// A table of each day, newest first, as wide as the screen allows: the
/// date, cost and messages, then input, output, cache read and write and
/// the total from 64 columns, then the models.
fn days(
    theme: &Theme,
    view: &UsageView,
    u: &Usage,
    rows: usize,
    width: usize,
) -> Vec<Line<'static>> {
    if u.by_day.is_empty() {
        return said(theme, "no messages in this range");
    }
    let tokens = width >= 64;
    let mut head = format!("  {:<10} {:>9} {:>6}", "DATE", "COST", "MSGS");
    if tokens {
        head.push_str(&format!(
            " {:>7} {:>7} {:>7} {:>7} {:>7}",
            "INPUT", "OUTPUT", "C.READ", "C.WRITE", "TOTAL"
        ));
    }
    head.push_str("  MODELS");
    let mut out = vec![Line::styled(
        wrap::truncate(&head, width),
        theme.style(Role::Heading),
    )];
    let rows = rows.saturating_sub(1);
    let first = first_row(view.selected, rows);
    for (i, (day, g)) in u.by_day.iter().rev().enumerate().skip(first).take(rows) {
        let f = &g.figures;
        let mut text = format!(
            "{:<10} {:>9} {:>6}",
            crate::insights::cost::date(*day),
            format::cost(f.cost),
            g.count
        );
        if tokens {
            text.push_str(&format!(
                " {:>7} {:>7} {:>7} {:>7} {:>7}",
                format::tokens(f.input),
                format::tokens(f.output),
                format::tokens(f.cache_read),
                format::tokens(f.cache_write),
                format::tokens(f.tokens())
            ));
        }
        let mut models: Vec<&str> = u
            .model_days
            .iter()
            .filter(|(_, by_day)| by_day.contains_key(day))
            .map(|(m, _)| m.as_str())
            .collect();
        models.sort_unstable();
        text.push_str("  ");
        text.push_str(&sanitize::line(&models.join(", ")));
        out.push(row(theme, &text, "", i == view.selected, width));
    }
    out
}

/// The tools used, most first: calls, their share and a bar.
fn tools(
    theme: &Theme,
    view: &UsageView,
    u: &Usage,
    rows: usize,
    width: usize,
) -> Vec<Line<'static>> {
    if view.tools_pending {
        return said(theme, "counting the tools…");
    }
    if let Some(why) = &view.tools_error {
        return said(
            theme,
            &format!("tools not counted: {}", sanitize::line(why)),
        );
    }
    if u.tools.is_empty() {
        return said(theme, "no tool calls in this range");
    }
    let all: u64 = u.tools.iter().map(|(_, n)| n).sum();
    let most = u.tools.first().map_or(1, |(_, n)| *n).max(1);
    let first = first_row(view.selected, rows);
    u.tools
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, (name, calls))| {
            let share = *calls as f64 / all.max(1) as f64 * 100.0;
            let bar_room = (width / 3).max(1);
            let bar = "█".repeat(((*calls * bar_room as u64).div_ceil(most)) as usize);
            let figures = format!(" {calls:>7} {share:>5.1}%  {bar:<bar_room$}");
            row(
                theme,
                &sanitize::line(name),
                &figures,
                i == view.selected,
                width,
            )
        })
        .collect()
}

/// A line per project, then per agent: its name (a project's end, which
/// says which it is: "…/work/shop", not "/ho…"), its cost and count;
/// `chosen` marked.
pub fn group_lines(
    theme: &Theme,
    u: &Usage,
    width: usize,
    chosen: Option<usize>,
) -> Vec<Line<'static>> {
    let projects = u
        .by_project
        .iter()
        .map(|g| (sanitize::line(&g.name).into_owned(), g, "sessions"));
    let agents = u
        .by_agent
        .iter()
        .map(|g| (format!("@{}", sanitize::line(&g.name)), g, "msg"));
    projects
        .chain(agents)
        .enumerate()
        .map(|(i, (name, g, what))| {
            let mark = match chosen {
                Some(c) if c == i => "› ",
                Some(_) => "  ",
                None => "",
            };
            let figures = format!(" {} · {} {what}", format::cost(g.figures.cost), g.count);
            let room = width.saturating_sub(figures.len() + mark.len());
            let name = format!("{mark}{}", wrap::truncate_start(&name, room));
            let pad = width.saturating_sub(wrap::width(&name) + figures.len());
            let style = match chosen == Some(i) {
                true => theme.style(Role::SelectionFocus),
                false => ratatui::style::Style::default(),
            };
            Line::from(vec![
                Span::styled(name, theme.style(Role::Text).patch(style)),
                Span::styled(" ".repeat(pad), style),
                Span::styled(figures, theme.style(Role::Muted).patch(style)),
            ])
        })
        .collect()
}
