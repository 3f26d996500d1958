//! Drawing the usage view over the whole screen: a line of totals and one
//! of what `opencode stats` derives, bars of cost per day over a date
//! axis, then a heat map of activity, a sparkline per model and the totals
//! by project and agent side by side, then the chosen list. Every figure
//! is the reader's; nothing here reads the database.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
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
    let tall = area.height >= 34;
    let [top, derived, bars, axis, middle, list] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(if tall { 10 } else { 4 }),
        Constraint::Length(1),
        Constraint::Length(9),
        Constraint::Min(2),
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
    // What `opencode stats` derives beside the totals.
    let d = u.derived(view.days(), view.now_ms);
    let figures = format!(
        "{} days · {}/day · {} tok/session · median {}",
        d.days,
        crate::insights::cost::money(d.cost_per_day),
        format::tokens(d.tokens_per_session.round() as u64),
        format::tokens(d.median_tokens_per_session.round() as u64),
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            wrap::truncate(&figures, derived.width as usize),
            theme.style(Role::Muted),
        )),
        derived,
    );
    draw_bars(frame, theme, view, u, bars, axis);
    let (first, last) = day_span(view, u);
    // The map as wide as its weeks need (up to half the screen); beside it
    // the models, and the projects and agents where there is room (else
    // they are a list of their own).
    let wide = middle.width >= 120;
    // Narrow, the map takes all but what the models need to be read (a
    // year's 53 weeks fit at 80 columns).
    let most = match wide {
        true => middle.width / 2,
        false => middle.width.saturating_sub(21),
    };
    let heat_width = super::heat::width(first, last, most as usize) as u16;
    let [heat, models, groups] = Layout::horizontal([
        Constraint::Length(heat_width + 1),
        Constraint::Fill(1),
        Constraint::Fill(u16::from(wide)),
    ])
    .areas(middle);
    draw_heat(frame, theme, u, first, last, heat);
    draw_models(frame, theme, view, u, models);
    if wide {
        draw_groups(frame, theme, u, groups);
    }
    let block = titled(theme, super::lists::title(view, "tab"));
    let inner = block.inner(list);
    frame.render_widget(block, list);
    super::lists::draw(frame, theme, view, u, inner);
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

/// Cost per day as bars as wide as the area allows (a long range in as
/// many buckets as fit), and under them the dates they span.
fn draw_bars(
    frame: &mut Frame,
    theme: &Theme,
    view: &UsageView,
    u: &Usage,
    area: Rect,
    axis: Rect,
) {
    let (first, last) = day_span(view, u);
    let days = (last - first + 1).max(1) as usize;
    let width = area.width.max(1) as usize;
    let buckets = days.min(width);
    let per = days.div_ceil(buckets);
    let buckets = days.div_ceil(per);
    // Each bucket as wide as fits, a gap between wide ones.
    let each = (width / buckets).max(1);
    let (bar_width, gap) = if each >= 3 { (each - 1, 1) } else { (each, 0) };
    let mut cents = vec![0u64; buckets];
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
        .bar_width(bar_width as u16)
        .bar_gap(gap as u16)
        .bar_style(theme.style(Role::Accent));
    frame.render_widget(chart, area);
    let drawn = (buckets * (bar_width + gap)).saturating_sub(gap).min(width);
    frame.render_widget(
        Paragraph::new(Line::styled(
            date_axis(first, last, drawn),
            theme.style(Role::Muted),
        )),
        axis,
    );
}

/// The dates under `width` columns of bars from `first` to `last`: the
/// first at the left, the last at the right, the middle one where it fits.
fn date_axis(first: i64, last: i64, width: usize) -> String {
    let label = |day: i64| day_label(first, last, day);
    let (a, b) = (label(first), label(last));
    if first == last || width < a.len() + b.len() + 1 {
        return wrap::truncate(&a, width);
    }
    let mut line = a.clone();
    let mid = label(first + (last - first) / 2);
    let centre = width / 2;
    let mid_at = centre.saturating_sub(mid.len() / 2);
    if mid_at > line.len() + 1 && mid_at + mid.len() + 1 < width - b.len() && mid != a && mid != b {
        line.push_str(&" ".repeat(mid_at - line.len()));
        line.push_str(&mid);
    }
    line.push_str(&" ".repeat(width - b.len() - line.len()));
    line.push_str(&b);
    line
}

/// A day on an axis from `first` to `last`: "May 17", or "May 2025" on
/// an axis of about a year or more.
fn day_label(first: i64, last: i64, day: i64) -> String {
    match date_of(day) {
        Some(d) if last - first >= 300 => format!("{} {}", short_month(d.month()), d.year()),
        Some(d) => format!("{} {}", short_month(d.month()), d.day()),
        None => String::new(),
    }
}

fn short_month(m: time::Month) -> &'static str {
    [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][usize::from(u8::from(m)) - 1]
}

/// A day number as `YYYY-MM-DD`.
pub fn date(day: i64) -> String {
    crate::insights::cost::date(day)
}

/// Activity over the whole range as a heat map (`super::heat`).
fn draw_heat(frame: &mut Frame, theme: &Theme, u: &Usage, first: i64, last: i64, area: Rect) {
    let (lines, shown) = super::heat::lines(
        &u.by_day,
        |g| g.count,
        first,
        last,
        area.width as usize,
        theme,
    );
    // Where not every week fits, the title says which are shown.
    let all = super::heat::all_weeks(first, last);
    let title = match shown < all {
        true => format!(" activity · last {shown} of {all} weeks "),
        false => " activity ".into(),
    };
    let block = titled(theme, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines), inner);
}

fn date_of(day: i64) -> Option<time::Date> {
    time::Date::from_julian_day(i32::try_from(day + 2_440_588).ok()?).ok()
}

/// One line per model: its name and cost, then a sparkline of its tokens
/// per day over the range.
fn draw_models(frame: &mut Frame, theme: &Theme, view: &UsageView, u: &Usage, area: Rect) {
    let (first, last) = day_span(view, u);
    let block = titled(
        theme,
        format!(
            " by model · tokens {}–{} ",
            day_label(first, last, first),
            day_label(first, last, last)
        ),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut y = inner.y;
    for g in &u.by_model {
        if y + 1 >= inner.bottom() {
            break;
        }
        let name = sanitize::line(&g.name);
        let mut figures = format!(" {} · {} msg", format::cost(g.figures.cost), g.count);
        // Its input and output tokens, as `opencode stats --models` says
        // them, where the name still fits beside them.
        let tokens = format!(
            " · in {} out {}",
            format::tokens(g.figures.input),
            format::tokens(g.figures.output)
        );
        if wrap::width(&name) + figures.len() + tokens.len() <= width {
            figures.push_str(&tokens);
        }
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
    let lines = super::lists::group_lines(theme, u, inner.width as usize, None);
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::date_axis;

    #[test]
    fn the_axis_says_the_first_middle_and_last_dates() {
        // 2026-11-01 to 2026-11-30.
        let first = 20_758;
        let axis = date_axis(first, first + 29, 60);
        assert!(
            axis.starts_with("Nov 1 ") && axis.ends_with(" Nov 30"),
            "{axis:?}"
        );
        assert!(axis.contains("Nov 15"), "{axis:?}");
        assert_eq!(axis.chars().count(), 60);
        let year = date_axis(first - 364, first, 40);
        assert!(
            year.starts_with("Nov 2025") && year.ends_with("Nov 2026"),
            "{year:?}"
        );
        assert_eq!(date_axis(first, first, 20), "Nov 1");
    }
}
