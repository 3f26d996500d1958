//! The cost view's lines: the totals with the cache-read share, what the
//! steps that made a failed tool call cost and what retries waited, then
//! the models (a bar of each one's cost), the costliest sessions (enter
//! opens one) and the latest days (a bar of each day's cost), as room
//! allows. Only the rows that fit are formatted.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::insights::cost::{Cost, money};
use crate::insights::waits::duration;
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::{Role, Theme};
use crate::render::wrap;

use super::InsightsView;

fn share(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{:.0}%", s * 100.0))
}

/// `value` of `most` as a bar of at most `width` cells (one at least for
/// anything above nothing).
fn bar(value: f64, most: f64, width: usize) -> String {
    if most <= 0.0 || value <= 0.0 || width == 0 {
        return String::new();
    }
    let cells = ((value / most) * width as f64).round() as usize;
    "█".repeat(cells.clamp(1, width))
}

pub(super) fn lines(
    view: &InsightsView,
    width: usize,
    rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let messages = view.cost.as_deref().map(|c| c.messages);
    if let Some(state) = crate::app::boxes::read_state(
        view.error.as_deref(),
        view.loading || messages.is_none(),
        messages == Some(0),
        ("reading the archive…", "no assistant message in this range"),
        width,
        theme,
    ) {
        return vec![state];
    }
    let Some(c) = view.cost.as_deref() else {
        return Vec::new();
    };
    let t = &c.total;
    let muted = |text: String| Line::styled(wrap::truncate(&text, width), theme.style(Role::Muted));
    let heading =
        |text: &str| Line::styled(wrap::truncate(text, width), theme.style(Role::Heading));
    let mut lines = vec![
        Line::styled(
            wrap::truncate(
                &format!(
                    "{} in {} assistant messages · {} tokens · cache-read share {}",
                    money(t.cost),
                    c.messages,
                    format::tokens(t.tokens()),
                    share(c.cache_share)
                ),
                width,
            ),
            theme.style(Role::Text),
        ),
        muted(format!(
            "in {} · out {} · reasoning {} · cache read {} · cache write {}{}",
            format::tokens(t.input),
            format::tokens(t.output),
            format::tokens(t.reasoning),
            format::tokens(t.cache_read),
            format::tokens(t.cache_write),
            c.saved
                .map(|s| format!(" · the cache saved {}", money(s)))
                .unwrap_or_default()
        )),
        muted(format!(
            "steps with a failed tool call: {} costing {}",
            c.failed_steps,
            money(c.failed_cost),
        )),
        muted(format!(
            "retries: {} waiting {}{}",
            c.retry_count(),
            duration(c.retry_wait_ms()),
            retries_by_provider(c)
        )),
    ];
    let left = rows.saturating_sub(lines.len());
    // The models, a few; the sessions half of the rest; the days after.
    let models = c.by_model.len().min(5).min(left.saturating_sub(4) / 3);
    if models > 0 {
        lines.push(heading(" BY MODEL"));
        let most = c.by_model.first().map_or(0.0, |m| m.figures.cost);
        for m in c.by_model.iter().take(models) {
            let figures = format!(
                " {:>9} {:>6} msg {:>7} tok  cache {:>4}  ",
                money(m.figures.cost),
                m.messages,
                format::tokens(m.figures.tokens()),
                share(m.cache_share)
            );
            let name_w = (width / 3).clamp(10, 40);
            let name = wrap::truncate(&sanitize::line(&m.model), name_w);
            let pad = name_w.saturating_sub(wrap::width(&name));
            let room = width.saturating_sub(name_w + 1 + wrap::width(&figures));
            lines.push(Line::from(vec![
                Span::styled(
                    format!(" {name}{}", " ".repeat(pad)),
                    theme.style(Role::Text),
                ),
                Span::styled(figures, theme.style(Role::Muted)),
                Span::styled(bar(m.figures.cost, most, room), theme.style(Role::Accent)),
            ]));
        }
    }
    let left = rows.saturating_sub(lines.len() + 1);
    let days = c.by_day.len().min(14);
    let room = match days {
        0 => left,
        _ => left.div_ceil(2).max(3).min(left),
    };
    lines.push(heading(" COSTLIEST SESSIONS (enter opens)"));
    lines.extend(costliest(view, c, width, room, theme));
    let left = rows.saturating_sub(lines.len());
    let days = days.min(left.saturating_sub(1));
    if days > 0 {
        lines.push(heading(" BY DAY"));
        let shown: Vec<_> = c.by_day.iter().rev().take(days).collect();
        let most = shown.iter().map(|d| d.figures.cost).fold(0.0_f64, f64::max);
        for d in shown {
            let figures = format!(
                " {}  {:>9} {:>6} msg  cache {:>4}  ",
                d.day,
                money(d.figures.cost),
                d.messages,
                share(d.cache_share)
            );
            let room = width.saturating_sub(wrap::width(&figures));
            lines.push(Line::from(vec![
                Span::styled(figures, theme.style(Role::Muted)),
                Span::styled(bar(d.figures.cost, most, room), theme.style(Role::Accent)),
            ]));
        }
    }
    lines
}

/// " (anthropic 3, openai 1)" when any provider retried.
fn retries_by_provider(c: &Cost) -> String {
    if c.retries.is_empty() {
        return String::new();
    }
    let each: Vec<String> = c
        .retries
        .iter()
        .map(|r| format!("{} {}", sanitize::line(&r.provider), r.retries))
        .collect();
    format!(" ({})", each.join(", "))
}

/// The costliest sessions that fit in `room` rows, the chosen one in view.
fn costliest(
    view: &InsightsView,
    c: &Cost,
    width: usize,
    room: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let first = view
        .cost_selected
        .saturating_sub(room / 3)
        .min(c.costliest.len().saturating_sub(room));
    let mut out = Vec::new();
    for (i, s) in c.costliest.iter().enumerate().skip(first).take(room) {
        let chosen = i == view.cost_selected;
        let base = if chosen {
            theme.style(Role::SelectionFocus)
        } else {
            Style::default()
        };
        let head = format!(
            "{}{:>9} ",
            if chosen { "›" } else { " " },
            money(s.figures.cost)
        );
        let tail = format!(
            "  {} msg · {} tok",
            s.messages,
            format::tokens(s.figures.tokens())
        );
        let title = if s.title.is_empty() {
            &s.session_id
        } else {
            &s.title
        };
        let room = width.saturating_sub(wrap::width(&head) + wrap::width(&tail));
        let title = wrap::truncate(&sanitize::line(title), room);
        let pad = room.saturating_sub(wrap::width(&title));
        out.push(Line::from(vec![
            Span::styled(head, theme.style(Role::Accent).patch(base)),
            Span::styled(
                format!("{title}{}", " ".repeat(pad)),
                theme.style(Role::Text).patch(base),
            ),
            Span::styled(tail, theme.style(Role::Muted).patch(base)),
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn a_bar_is_as_long_as_its_share_and_never_lost() {
        assert_eq!(bar(5.0, 10.0, 8), "████");
        assert_eq!(bar(0.001, 10.0, 8), "█");
        assert_eq!(bar(0.0, 10.0, 8), "");
        assert_eq!(bar(20.0, 10.0, 8).chars().count(), 8);
    }
}
