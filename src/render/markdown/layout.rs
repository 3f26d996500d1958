//! How the parsed blocks become lines: the prefixes of quotes and list
//! items (and the one marker past `MAX_NESTING`), the blank line between
//! blocks, paragraphs wrapped to what the prefixes leave, fenced code with
//! its bar and cut lines, tables, and the `MAX_LINES` budget.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{Container, Highlighted, MAX_LINE_BYTES, MAX_LINES, MAX_NESTING, Renderer};
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

impl Renderer<'_, '_> {
    /// Before a block: close the open paragraph, and leave a blank line
    /// after the previous block (none inside a tight list item).
    pub(super) fn block_start(&mut self) {
        self.flush_paragraph();
        if self.gap && !self.out.is_empty() {
            let prefix = self.prefix(false);
            self.push_line(Line::from(prefix));
        }
        self.gap = false;
    }

    /// The containers that draw a prefix: those within `MAX_NESTING`, and
    /// whether deeper ones were left out.
    fn shown_containers(&self) -> (usize, bool) {
        let mut levels = 0;
        for (i, c) in self.containers.iter().enumerate() {
            if !matches!(c, Container::List(_)) {
                levels += 1;
                if levels > MAX_NESTING {
                    return (i, true);
                }
            }
        }
        (self.containers.len(), false)
    }

    pub(super) fn prefix_width(&self) -> usize {
        let (shown, deeper) = self.shown_containers();
        let width: usize = self.containers[..shown]
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::List(_) => 0,
                Container::Item { width, .. } => *width,
            })
            .sum();
        width + if deeper { 2 } else { 0 }
    }

    /// The prefix for the next line: quote bars, and each item's marker on
    /// the first line printed inside it (spaces of its width afterwards).
    fn prefix(&mut self, first_line_of_item: bool) -> Vec<Span<'static>> {
        let quote = self.theme().style(Role::Quote);
        let marker_style = self.theme().style(Role::Accent);
        let mut spans = Vec::new();
        let (shown, deeper) = self.shown_containers();
        for c in self.containers[..shown].iter_mut() {
            match c {
                Container::Quote => spans.push(Span::styled("│ ", quote)),
                Container::List(_) => {}
                Container::Item { marker, width } => match marker.take_if(|_| first_line_of_item) {
                    Some(m) => spans.push(Span::styled(m, marker_style)),
                    None => spans.push(Span::raw(" ".repeat(*width))),
                },
            }
        }
        if deeper {
            spans.push(Span::styled("… ", quote));
        }
        spans
    }

    fn push_line(&mut self, line: Line<'static>) {
        if self.out.len() < MAX_LINES {
            self.out.push(line);
        } else {
            self.cut += 1;
        }
    }

    pub(super) fn emit(&mut self, lines: Vec<Line<'static>>) {
        for line in lines {
            if self.out.len() >= MAX_LINES {
                self.cut += 1;
                continue;
            }
            let mut prefix = self.prefix(true);
            prefix.extend(line.spans);
            self.push_line(Line::from(prefix));
        }
    }

    pub(super) fn flush_paragraph(&mut self) {
        let pieces = std::mem::replace(&mut self.pieces, vec![Vec::new()]);
        if pieces.iter().all(|p| p.is_empty()) {
            return;
        }
        let width = self.ctx.width.saturating_sub(self.prefix_width()).max(4);
        let mut lines = Vec::new();
        for logical in &pieces {
            lines.extend(wrap::wrap_spans(logical, width, ""));
        }
        self.emit(lines);
    }

    pub(super) fn end_code(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let code = code.strip_suffix('\n').unwrap_or(&code);
        let code_style = self.theme().style(Role::Code);
        let bar = self.theme().style(Role::Muted);
        let width = self
            .ctx
            .width
            .saturating_sub(self.prefix_width() + 2)
            .max(4);
        let highlighted = (!lang.is_empty())
            .then(|| self.hl.highlight(&lang, code))
            .flatten();
        let mut lines = Vec::new();
        if !lang.is_empty() {
            lines.push(Line::styled(format!("╭ {}", sanitize::line(&lang)), bar));
        }
        let plain_lines: Vec<Vec<(String, Style)>>;
        let source: &Highlighted = match &highlighted {
            Some(h) => h,
            None => {
                plain_lines = code
                    .split('\n')
                    .map(|l| vec![(l.to_string(), code_style)])
                    .collect();
                &plain_lines
            }
        };
        for pieces in source {
            let mut clean: Vec<(String, Style)> = Vec::with_capacity(pieces.len());
            let mut bytes = 0;
            for (text, style) in pieces {
                if bytes >= MAX_LINE_BYTES {
                    break;
                }
                let mut t = sanitize::line(text.trim_end_matches(['\n', '\r'])).into_owned();
                if bytes + t.len() > MAX_LINE_BYTES {
                    let mut cut = MAX_LINE_BYTES - bytes;
                    while !t.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    t.truncate(cut);
                    t.push('…');
                }
                bytes += t.len();
                clean.push((t, *style));
            }
            for mut l in wrap::wrap_spans(&clean, width, "") {
                l.spans.insert(0, Span::styled("│ ", bar));
                lines.push(l);
            }
        }
        self.emit(lines);
        self.gap = true;
    }

    pub(super) fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let lines = table.lines(self.ctx, self.prefix_width());
        if !lines.is_empty() {
            self.emit(lines);
            self.gap = true;
        }
    }
}
