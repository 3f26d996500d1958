//! Search matches marked in laid-out lines. Only the visible rows are
//! marked, each frame, so the cost follows the screen, not the session.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::model::entity::search::Query;

/// The plain text of a line, as searched when marking.
pub fn line_text(line: &Line) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// Occurrences of `query` in a line.
pub fn count_in_line(line: &Line, query: &Query) -> usize {
    query.count(&line_text(line))
}

/// Mark every occurrence in `line` with `style`, and the one of rank
/// `current` (counted within this line) with `current_style`. Returns how
/// many occurrences the line holds.
pub fn mark_line(
    line: &mut Line<'static>,
    query: &Query,
    style: Style,
    current: Option<usize>,
    current_style: Style,
) -> usize {
    let text = line_text(line);
    let ranges: Vec<(Range<usize>, Style)> = query
        .find_iter(&text)
        .enumerate()
        .map(|(i, r)| {
            let s = if current == Some(i) {
                current_style
            } else {
                style
            };
            (r, s)
        })
        .collect();
    if !ranges.is_empty() {
        restyle(line, &ranges);
    }
    ranges.len()
}

/// Split the spans of `line` so each range (byte offsets into the line's
/// text, in order, not overlapping) gets its style patched on.
fn restyle(line: &mut Line<'static>, ranges: &[(Range<usize>, Style)]) {
    let mut out: Vec<Span<'static>> = Vec::with_capacity(line.spans.len() + ranges.len() * 2);
    let mut start = 0usize;
    let mut next = ranges.iter().peekable();
    for span in line.spans.drain(..) {
        let content = span.content.as_ref();
        let end = start + content.len();
        let mut at = start;
        while at < end {
            // Skip ranges that ended before here.
            while next.peek().is_some_and(|(r, _)| r.end <= at) {
                next.next();
            }
            let Some((r, s)) = next.peek() else {
                out.push(Span::styled(content[at - start..].to_string(), span.style));
                break;
            };
            if r.start >= end {
                out.push(Span::styled(content[at - start..].to_string(), span.style));
                break;
            }
            if r.start > at {
                out.push(Span::styled(
                    content[at - start..r.start - start].to_string(),
                    span.style,
                ));
                at = r.start;
            }
            let stop = r.end.min(end);
            out.push(Span::styled(
                content[at - start..stop - start].to_string(),
                span.style.patch(*s),
            ));
            at = stop;
        }
        start = end;
    }
    line.spans = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

    #[test]
    fn a_match_across_spans_is_split_and_marked() {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let mut line = Line::from(vec![
            Span::raw("say he"),
            Span::styled("llo world, hello", bold),
        ]);
        let q = Query::new("hello").unwrap();
        let mark = Style::default().bg(Color::Yellow);
        let cur = Style::default().bg(Color::Red);
        assert_eq!(mark_line(&mut line, &q, mark, Some(1), cur), 2);
        let parts: Vec<(&str, Style)> = line
            .spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style))
            .collect();
        assert_eq!(
            parts,
            vec![
                ("say ", Style::default()),
                ("he", mark),
                ("llo", bold.patch(mark)),
                (" world, ", bold),
                ("hello", bold.patch(cur)),
            ]
        );
        assert_eq!(line_text(&line), "say hello world, hello");
    }

    #[test]
    fn no_match_leaves_the_line_alone() {
        let mut line = Line::from("nothing here");
        let before = line.clone();
        let q = Query::new("zzz").unwrap();
        assert_eq!(
            mark_line(&mut line, &q, Style::default(), None, Style::default()),
            0
        );
        assert_eq!(line, before);
    }
}
