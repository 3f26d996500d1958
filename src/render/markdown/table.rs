//! Markdown tables: cells collected while parsing, laid out in columns
//! that fit the width (the widest shrink first), or one wrapped line per
//! row when even that is too narrow.

use ratatui::text::{Line, Span};

use crate::render::markdown::MdCtx;
use crate::render::theme::Role;
use crate::render::wrap;

#[derive(Default)]
pub(crate) struct Table {
    pub rows: Vec<Vec<String>>,
    pub header_rows: usize,
    pub cell: String,
    pub row: Vec<String>,
}

impl Table {
    /// The table's lines, for a text `prefix_width` columns in.
    pub fn lines(&self, ctx: &MdCtx, prefix_width: usize) -> Vec<Line<'static>> {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return Vec::new();
        }
        let avail = ctx
            .width
            .saturating_sub(prefix_width + 3 * (cols - 1))
            .max(cols);
        let mut widths: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r.get(c).map_or(0, |s| wrap::width(s.trim())))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        // Shrink the widest columns until the table fits.
        while widths.iter().sum::<usize>() > avail {
            let (i, _) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .expect("at least one column");
            if widths[i] <= 3 {
                break;
            }
            widths[i] -= 1;
        }
        let border = ctx.theme.style(Role::Muted);
        let head = ctx.theme.style(Role::Title);
        let text = ctx.theme.style(ctx.text_role);
        let mut lines = Vec::new();
        if widths.iter().sum::<usize>() + 3 * (cols - 1) + prefix_width > ctx.width {
            // Too narrow for columns: one wrapped line per row.
            let width = ctx.width.saturating_sub(prefix_width).max(4);
            for (ri, row) in self.rows.iter().enumerate() {
                let style = if ri < self.header_rows { head } else { text };
                let joined = row.iter().map(|c| c.trim()).collect::<Vec<_>>().join(" │ ");
                lines.extend(wrap::wrap_spans(&[(joined, style)], width, "  "));
            }
            return lines;
        }
        for (ri, row) in self.rows.iter().enumerate() {
            let mut spans = Vec::new();
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let cell = wrap::truncate(row.get(c).map_or("", |s| s.trim()), *w);
                let pad = w.saturating_sub(wrap::width(&cell));
                let style = if ri < self.header_rows { head } else { text };
                spans.push(Span::styled(format!("{cell}{}", " ".repeat(pad)), style));
            }
            lines.push(Line::from(spans));
            if ri + 1 == self.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                lines.push(Line::styled(rule.join("─┼─"), border));
            }
        }
        lines
    }
}
