//! The failures as a heat map of model × tool, above the rows where the
//! view is tall and wide enough: a line per model and a column per tool
//! (those with most failures first, as many as fit), each cell its
//! failure rate as a shade and in per cent, blank where the model never
//! called the tool; the selected row's cell is marked.

use std::collections::BTreeMap;

use ratatui::text::{Line, Span};

use crate::insights::failures::Cell;
use crate::model::wire::sanitize;
use crate::render::theme::{Role, Theme};
use crate::render::wrap;

/// Columns a tool takes: a shade, a space, the rate, a gap.
const COLUMN: usize = 7;

/// A rate's shade: lighter for rarer failures.
fn shade(rate: f64) -> (char, Role) {
    match rate {
        r if r <= 0.0 => ('·', Role::Muted),
        r if r <= 0.1 => ('░', Role::Accent),
        r if r <= 0.25 => ('▒', Role::Accent),
        r if r <= 0.5 => ('▓', Role::Warning),
        _ => ('█', Role::Warning),
    }
}

/// Names by their failures, most first (then by name).
fn ranked(cells: &[Cell], key: fn(&Cell) -> &str) -> Vec<&str> {
    let mut failed: BTreeMap<&str, u64> = BTreeMap::new();
    for c in cells {
        *failed.entry(key(c)).or_default() += c.failed;
    }
    let mut names: Vec<(&str, u64)> = failed.into_iter().collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    names.into_iter().map(|(n, _)| n).collect()
}

/// The map's lines (a heading, then a line per model), at most `rows`.
pub(super) fn lines(
    cells: &[Cell],
    selected: Option<&Cell>,
    width: usize,
    rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let models = ranked(cells, |c| &c.model);
    let tools = ranked(cells, |c| &c.tool);
    let name_w = models
        .iter()
        .map(|m| wrap::width(&sanitize::line(m)))
        .max()
        .unwrap_or(5)
        .clamp(5, 28);
    let fit = width.saturating_sub(name_w + 2) / COLUMN;
    if fit == 0 || rows < 2 {
        return Vec::new();
    }
    let tools = &tools[..tools.len().min(fit)];
    let by: BTreeMap<(&str, &str), &Cell> = cells
        .iter()
        .map(|c| ((c.model.as_str(), c.tool.as_str()), c))
        .collect();
    let mut head = format!(" {:<name_w$} ", "FAILURE RATE");
    for t in tools {
        head.push_str(&format!(
            "{:>w$}",
            wrap::truncate(&sanitize::line(t), COLUMN - 1),
            w = COLUMN
        ));
    }
    let mut out = vec![Line::styled(
        wrap::truncate(&head, width),
        theme.style(Role::Heading),
    )];
    for model in models.iter().take(rows - 1) {
        let name = wrap::truncate(&sanitize::line(model), name_w);
        let pad = name_w.saturating_sub(wrap::width(&name));
        let mut spans = vec![Span::styled(
            format!(" {name}{} ", " ".repeat(pad)),
            theme.style(Role::Text),
        )];
        for tool in tools {
            let Some(cell) = by.get(&(*model, *tool)) else {
                spans.push(Span::raw(" ".repeat(COLUMN)));
                continue;
            };
            let (mark, role) = shade(cell.rate());
            let chosen = selected.is_some_and(|s| s.model == **model && s.tool == **tool);
            let style = match chosen {
                true => theme.style(Role::SelectionFocus),
                false => theme.style(role),
            };
            spans.push(Span::styled(
                format!(" {mark}{:>4}%", (cell.rate() * 100.0).round() as u64),
                style,
            ));
        }
        out.push(Line::from(spans));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::tool_calls::{CallCount, Outcome};

    #[test]
    fn each_model_is_a_line_and_each_tool_a_shaded_column() {
        let counts = [
            CallCount::new("a/x", "bash", Outcome::Completed, 3),
            CallCount::new("a/x", "bash", Outcome::Error, 1),
            CallCount::new("a/x", "read", Outcome::Completed, 5),
            CallCount::new("b/y", "bash", Outcome::Invalid, 2),
        ];
        let cells = crate::insights::failures::cells(&counts, Default::default());
        let theme = Theme::default();
        let text: Vec<String> = lines(&cells, None, 60, 10, &theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert!(
            text[0].contains("bash") && text[0].contains("read"),
            "{text:?}"
        );
        // b/y failed most: first; it never read, so its read column is blank.
        assert!(
            text[1].starts_with(" b/y") && text[1].contains("█ 100%"),
            "{text:?}"
        );
        assert!(text[1].ends_with(&" ".repeat(COLUMN)), "{text:?}");
        assert!(
            text[2].contains("▒  25%") && text[2].contains("·   0%"),
            "{text:?}"
        );
        assert!(lines(&cells, None, 10, 10, &theme).is_empty());
    }
}
