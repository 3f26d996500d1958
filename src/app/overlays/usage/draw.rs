//! Drawing the usage view over the whole screen: a line of totals, bars
//! of cost per day, then a calendar of activity, a sparkline per model and
//! the totals by project and agent side by side, then the costliest
//! sessions. Every figure is the reader's; nothing here reads the database.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::calendar::{CalendarEventStore, Monthly};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Borders, Clear, Paragraph, Sparkline};

use super::{Answer, RANGES, UsageView};
use crate::app::App;
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::{Role, Theme};
use crate::render::wrap;
use crate::source::opencode_db::usage::{DAY_MS, Usage};

fn range_name(days: Option<u32>) -> String {
    match days {
        Some(d) => format!("{d} days"),
        None => "all time".into(),
    }
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let Some(view) = &app.overlays.usage.view else {
        return;
    };
    let theme = &app.theme;
    frame.render_widget(Clear, screen);
    let ranges: Vec<Span> = RANGES
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            let role = if i == view.range {
                Role::SelectionFocus
            } else {
                Role::Muted
            };
            [
                Span::styled(format!("{} {}", i + 1, range_name(*d)), theme.style(role)),
                Span::raw(" "),
            ]
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::BorderFocus))
        .title(Line::styled(" Usage ", theme.style(Role::Title)))
        .title_bottom(Line::from(ranges));
    let inner = block.inner(screen);
    frame.render_widget(block, screen);
    match &view.answer {
        Answer::Loading => frame.render_widget(
            Paragraph::new(Line::styled("loading…", theme.style(Role::Muted))),
            inner,
        ),
        Answer::Failed(why) => {
            // Why, what the view reads, and how to leave it.
            use crate::app::keymap::Action;
            let keys: Vec<String> = [Action::ListClose, Action::Usage]
                .into_iter()
                .filter_map(|a| app.keymap.hint(a))
                .collect();
            let width = inner.width as usize;
            let mut lines =
                wrap::wrap_text(&sanitize::line(why), theme.style(Role::Warning), width, "");
            lines.push(Line::raw(""));
            lines.extend(wrap::wrap_text(
                "This view shows what opencode's sessions cost, read from its database: $OPENCODE_DB, else opencode.db in $XDG_DATA_HOME/opencode (~/.local/share/opencode).",
                theme.style(Role::Text),
                width,
                "",
            ));
            lines.extend(wrap::wrap_text(
                &format!("{} closes it.", keys.join(" or ")),
                theme.style(Role::Muted),
                width,
                "",
            ));
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Answer::Ready(usage) => draw_usage(frame, theme, view, usage, inner),
    }
}

fn draw_usage(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let tall = area.height >= 30;
    let [top, bars, middle, list] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(if tall { 12 } else { 5 }),
        Constraint::Length(if tall { 14 } else { 8 }),
        Constraint::Min(1),
    ])
    .areas(area);
    let summed = u.summed_sessions > 0;
    let t = &u.totals;
    let mut counts = format!("{} sessions · {} messages", u.sessions, u.messages);
    if u.malformed > 0 {
        // Said beside what was counted, so no figure reads as whole.
        counts.push_str(&format!(" · ! {} unreadable rows skipped", u.malformed));
    }
    let cost = format::summed(format::cost(t.cost), summed);
    let full = format!(
        "{cost} · {} tok (in {} out {} reasoning {} cache {}/{}) · {counts}",
        format::tokens(t.tokens()),
        format::tokens(t.input),
        format::tokens(t.output),
        format::tokens(t.reasoning),
        format::tokens(t.cache_read),
        format::tokens(t.cache_write),
    );
    // Where the breakdown does not fit, the counts still do.
    let totals = if wrap::width(&full) <= top.width as usize {
        full
    } else {
        format!("{cost} · {} tok · {counts}", format::tokens(t.tokens()))
    };
    frame.render_widget(
        Paragraph::new(Line::styled(
            wrap::truncate(&totals, top.width as usize),
            theme.style(Role::Text),
        )),
        top,
    );
    draw_bars(frame, theme, view, u, bars);
    let [calendar, models, groups] = Layout::horizontal([
        Constraint::Length(24),
        Constraint::Percentage(50),
        Constraint::Percentage(50),
    ])
    .areas(middle);
    draw_calendar(frame, theme, view, u, calendar);
    draw_models(frame, theme, view, u, models);
    draw_groups(frame, theme, u, groups);
    draw_costliest(frame, theme, view, u, list);
}

/// The first and last day drawn (day numbers, local).
fn day_span(view: &UsageView, u: &Usage) -> (i64, i64) {
    let off = crate::source::opencode_db::usage::local_offset_ms(view.now_ms);
    let today = (view.now_ms + off).div_euclid(DAY_MS);
    let first = match view.days() {
        Some(d) => today - i64::from(d.max(1)) + 1,
        None => u.by_day.keys().next().copied().unwrap_or(today).min(today),
    };
    (first, today)
}

fn titled<'a>(theme: &Theme, title: String) -> Block<'a> {
    Block::default()
        .borders(Borders::TOP)
        .border_style(theme.style(Role::Border))
        .title(Line::styled(title, theme.style(Role::Heading)))
}

/// Cost per day as bars; a long range is put in as many buckets as fit.
fn draw_bars(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let (first, last) = day_span(view, u);
    let days = (last - first + 1).max(1) as usize;
    let width = area.width.max(1) as usize;
    // Wide bars with a gap for a short range, one column each for a long one.
    let (bar_width, gap) = if days * 4 <= width {
        (3u16, 1u16)
    } else {
        (1, 0)
    };
    let buckets = days.min(width / usize::from(bar_width + gap)).max(1);
    let per = days.div_ceil(buckets);
    let mut cents = vec![0u64; days.div_ceil(per)];
    for (day, g) in u.by_day.range(first..=last) {
        cents[((day - first) as usize) / per] += (g.figures.cost * 100.0).round() as u64;
    }
    let bars: Vec<Bar> = cents
        .iter()
        .map(|c| {
            Bar::default()
                .value(*c)
                .text_value(String::new())
                .style(theme.style(Role::Accent))
        })
        .collect();
    let most = cents.iter().max().copied().unwrap_or(0);
    let title = format!(
        " cost per day{} · top {} ",
        if per > 1 {
            format!(" ({per} days a bar)")
        } else {
            String::new()
        },
        format::cost(most as f64 / 100.0)
    );
    let chart = BarChart::default()
        .block(titled(theme, title))
        .data(BarGroup::default().bars(&bars))
        .bar_width(bar_width)
        .bar_gap(gap)
        .bar_style(theme.style(Role::Accent));
    frame.render_widget(chart, area);
}

/// This month (and the ones before it, as far as they fit): a day with
/// messages is marked, the busiest the strongest.
fn draw_calendar(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let (_, today) = day_span(view, u);
    let Some(date) = date_of(today) else { return };
    let most = u.by_day.values().map(|g| g.count).max().unwrap_or(0).max(1);
    let mut events = CalendarEventStore::default();
    let month_start = today - i64::from(date.day()) + 1;
    for (day, g) in u.by_day.range(month_start..=today) {
        let Some(d) = date_of(*day) else { continue };
        let role = if g.count * 2 >= most {
            Role::MatchCurrent
        } else {
            Role::Match
        };
        events.add(d, theme.style(role));
    }
    // Every week of the month must show: where the rows are short, the
    // month's name moves into the title, then the weekday row goes.
    let weeks = month_weeks(date);
    let rows = area.height.saturating_sub(1);
    let month_header = rows >= weeks + 2;
    let weekday_header = rows > weeks;
    let title = if month_header {
        " activity ".to_string()
    } else {
        format!(" activity · {} {} ", date.month(), date.year())
    };
    let block = titled(theme, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut calendar = Monthly::new(date, events).default_style(theme.style(Role::Text));
    if month_header {
        calendar = calendar.show_month_header(theme.style(Role::Heading));
    }
    if weekday_header {
        calendar = calendar.show_weekdays_header(theme.style(Role::Muted));
    }
    frame.render_widget(calendar, inner);
}

/// The rows a month takes in a calendar whose weeks start on Sunday.
fn month_weeks(date: time::Date) -> u16 {
    let first = date.replace_day(1).unwrap_or(date);
    let lead = u16::from(first.weekday().number_days_from_sunday());
    let days = u16::from(date.month().length(date.year()));
    (lead + days).div_ceil(7)
}

fn date_of(day: i64) -> Option<time::Date> {
    time::Date::from_julian_day(i32::try_from(day + 2_440_588).ok()?).ok()
}

/// One line per model: its name and cost, then a sparkline of its tokens
/// per day over the range.
fn draw_models(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let block = titled(theme, " by model ".into());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let (first, last) = day_span(view, u);
    let width = inner.width as usize;
    let mut y = inner.y;
    for g in &u.by_model {
        if y + 1 >= inner.bottom() {
            break;
        }
        let name = sanitize::line(&g.name);
        let figures = format!(" {} · {} msg", format::cost(g.figures.cost), g.count);
        let label = wrap::truncate(&name, width.saturating_sub(figures.len()));
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(label, theme.style(Role::Text)),
                Span::styled(figures, theme.style(Role::Muted)),
            ])),
            Rect {
                y,
                height: 1,
                ..inner
            },
        );
        let series = model_series(u, &g.name, first, last, width);
        frame.render_widget(
            Sparkline::default()
                .data(&series)
                .style(theme.style(Role::Accent)),
            Rect {
                y: y + 1,
                height: 1,
                ..inner
            },
        );
        y += 2;
    }
}

/// A model's tokens per day from `first` to `last`, in `width` buckets.
fn model_series(u: &Usage, model: &str, first: i64, last: i64, width: usize) -> Vec<u64> {
    let days = (last - first + 1).max(1) as usize;
    let per = days.div_ceil(width.max(1));
    let mut out = vec![0u64; days.div_ceil(per)];
    if let Some(by_day) = u.model_days.get(model) {
        for (day, tokens) in by_day.range(first..=last) {
            out[((day - first) as usize) / per] += tokens;
        }
    }
    out
}

fn draw_groups(frame: &mut Frame, theme: &Theme, u: &Usage, area: Rect) {
    let block = titled(theme, " by project · by agent ".into());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = Vec::new();
    let row = |name: &str, cost: f64, n: u64, what: &str| {
        let figures = format!(" {} · {n} {what}", format::cost(cost));
        let name = wrap::truncate(&sanitize::line(name), width.saturating_sub(figures.len()));
        let pad = width.saturating_sub(wrap::width(&name) + figures.len());
        Line::from(vec![
            Span::styled(name, theme.style(Role::Text)),
            Span::raw(" ".repeat(pad)),
            Span::styled(figures, theme.style(Role::Muted)),
        ])
    };
    for g in &u.by_project {
        lines.push(row(&g.name, g.figures.cost, g.count, "sessions"));
    }
    for g in &u.by_agent {
        lines.push(row(&format!("@{}", g.name), g.figures.cost, g.count, "msg"));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_costliest(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let block = titled(theme, " costliest sessions (enter opens) ".into());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = inner.height as usize;
    let first = view.selected.saturating_sub(rows.saturating_sub(1));
    let width = inner.width as usize;
    let lines: Vec<Line> = u
        .costliest
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, s)| {
            let chosen = i == view.selected;
            let figures = format!(
                " {} {}",
                format::summed(format::cost(s.figures.cost), s.summed),
                format::tokens(s.figures.tokens())
            );
            let title = if s.title.is_empty() { &s.id } else { &s.title };
            let marker = if chosen { "› " } else { "  " };
            let name = wrap::truncate(
                &format!("{marker}{}", sanitize::line(title)),
                width.saturating_sub(figures.len()),
            );
            let pad = width.saturating_sub(wrap::width(&name) + wrap::width(&figures));
            let style = if chosen {
                theme.style(Role::SelectionFocus)
            } else {
                Style::default()
            };
            Line::from(vec![
                Span::styled(name, theme.style(Role::Text).patch(style)),
                Span::styled(" ".repeat(pad), style),
                Span::styled(figures, theme.style(Role::Muted).patch(style)),
            ])
        })
        .collect();
    if lines.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "no sessions in this range",
                theme.style(Role::Muted),
            )),
            inner,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

#[cfg(test)]
mod tests {
    use super::month_weeks;
    use time::{Date, Month};

    #[test]
    fn a_month_takes_the_weeks_its_days_span() {
        // May 2026 starts on a Friday: 5 + 31 days run into a sixth week.
        let may = Date::from_calendar_date(2026, Month::May, 17).unwrap();
        assert_eq!(month_weeks(may), 6);
        // February 2026 starts on a Sunday and fills exactly four.
        let feb = Date::from_calendar_date(2026, Month::February, 3).unwrap();
        assert_eq!(month_weeks(feb), 4);
    }
}
