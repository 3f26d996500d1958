//! The usage view's heat map of activity: the chosen range as weeks (a
//! year is 53 of them), a column each, Monday at the top, the month's name
//! above the week it starts in; a day's shade says its messages against
//! the busiest day's. Where the weeks do not all fit, the latest do.

use std::collections::BTreeMap;

use ratatui::text::{Line, Span};

use crate::render::theme::{Role, Theme};

/// The shades, from a quiet day to the busiest.
const SHADES: [char; 4] = ['░', '▒', '▓', '█'];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// The weekdays' labels (Monday first; every other one named).
const WEEKDAYS: [&str; 7] = ["Mo", "", "We", "", "Fr", "", "Su"];
/// Columns the labels take.
const LABEL: usize = 3;

/// Monday of the week of `day` (days since 1970, a Thursday).
fn week_of(day: i64) -> i64 {
    day - (day + 3).rem_euclid(7)
}

/// (month 1-12, day of month) of a day number.
fn month_day(day: i64) -> Option<(u8, u8)> {
    let d = time::Date::from_julian_day(i32::try_from(day + 2_440_588).ok()?).ok()?;
    Some((u8::from(d.month()), d.day()))
}

/// The weeks shown and each one's width: two columns a week where all fit
/// so, else one; the latest weeks where even that is too wide.
pub fn weeks(first: i64, last: i64, width: usize) -> (i64, usize, usize) {
    let all = all_weeks(first, last);
    let room = width.saturating_sub(LABEL);
    let cell = if all * 2 <= room { 2 } else { 1 };
    let shown = all.min(room / cell).max(1);
    let start = week_of(last) - 7 * (shown as i64 - 1);
    (start, shown, cell)
}

/// The weeks `first..=last` spans.
pub fn all_weeks(first: i64, last: i64) -> usize {
    ((week_of(last) - week_of(first)) / 7 + 1).max(1) as usize
}

/// The width the map of `first..=last` takes in at most `most` columns.
pub fn width(first: i64, last: i64, most: usize) -> usize {
    let (_, shown, cell) = weeks(first, last, most);
    (LABEL + shown * cell).min(most)
}

/// The map's eight lines (months, then Monday to Sunday) of `days` (day →
/// what `count` says its messages are) from `first` to `last`, in `width`
/// columns; and how many weeks it shows. Only the shown weeks' days are
/// looked up.
pub fn lines<V>(
    days: &BTreeMap<i64, V>,
    count: impl Fn(&V) -> u64,
    first: i64,
    last: i64,
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let (start, shown, cell) = weeks(first, last, width);
    let most = days
        .range(first..=last)
        .map(|(_, v)| count(v))
        .max()
        .unwrap_or(0);
    // The months' names, each above the week its first day falls in, as
    // long as the last name has room.
    let mut header = " ".repeat(LABEL);
    for w in 0..shown {
        let monday = start + 7 * w as i64;
        let at = LABEL + w * cell;
        let starts = (0..7).find_map(|i| match month_day(monday + i) {
            Some((m, 1)) => Some(m),
            _ => None,
        });
        let name = match (w, starts) {
            (_, Some(m)) => Some(m),
            (0, None) => month_day(monday.max(first)).map(|(m, _)| m),
            _ => None,
        };
        if let Some(m) = name
            && header.chars().count() <= at
            && at + 3 <= width
        {
            let pad = at - header.chars().count();
            header.push_str(&" ".repeat(pad));
            header.push_str(MONTHS[usize::from(m - 1)]);
        }
    }
    let mut out = vec![Line::styled(header, theme.style(Role::Muted))];
    for (row, label) in WEEKDAYS.iter().enumerate() {
        let mut spans = vec![Span::styled(
            format!("{label:<LABEL$}"),
            theme.style(Role::Muted),
        )];
        for w in 0..shown {
            let day = start + 7 * w as i64 + row as i64;
            let (text, role) = if day < first || day > last {
                (' ', Role::Muted)
            } else {
                match days.get(&day).map_or(0, &count) {
                    0 => ('·', Role::Muted),
                    n => {
                        let level = ((n * 4).div_ceil(most.max(1))).clamp(1, 4) as usize;
                        (SHADES[level - 1], Role::Accent)
                    }
                }
            };
            let mut s = text.to_string();
            if cell == 2 {
                s.push(' ');
            }
            spans.push(Span::styled(s, theme.style(role)));
        }
        out.push(Line::from(spans));
    }
    (out, shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_year_is_fifty_three_weeks_and_the_latest_weeks_fit_a_narrow_map() {
        // 2026-11-29 is a Sunday: day 20_786.
        let last: i64 = 20_786;
        assert_eq!((last + 3).rem_euclid(7), 6, "a Sunday");
        let (_, shown, cell) = weeks(last - 364, last, 200);
        assert_eq!((shown, cell), (53, 2));
        let (_, shown, cell) = weeks(last - 364, last, 60);
        assert_eq!((shown, cell), (53, 1));
        let (start, shown, _) = weeks(last - 364, last, 20);
        assert_eq!(shown, 17);
        assert_eq!(start, week_of(last) - 7 * 16);
    }

    #[test]
    fn each_day_is_shaded_by_its_messages_under_its_months_name() {
        let theme = Theme::default();
        // November 2026: the 1st is a Sunday.
        let first = 20_758; // Sunday 1 November
        let last = first + 13;
        let counts = BTreeMap::from([(first, 1), (first + 1, 4), (first + 8, 2)]);
        let (lines, shown) = lines(&counts, |n| *n, first, last, 40, &theme);
        assert_eq!(shown, 3);
        let rows = text(&lines);
        // The week of Monday 26 October holds the 1st of November.
        assert_eq!(rows[0], "   Nov", "{rows:?}");
        // Sunday the 1st: a quiet day in the first week's last row; the
        // 8th had nothing; the 15th is past the range.
        assert_eq!(rows[7], "Su ░ ·   ", "{rows:?}");
        // Monday the 2nd, the busiest; Monday the 9th, half as busy.
        assert_eq!(rows[1], "Mo   █ ▒ ", "{rows:?}");
    }
}
