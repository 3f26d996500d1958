//! Building a card's body: labelled values, wrapped text, command output
//! (ANSI colours kept as styles), highlighted code with line numbers and
//! diffs (drawn by `diff_lines`), each trimmed to a head and a tail unless
//! the card is full.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use std::ops::Range;

use crate::model::wire::sanitize;
use crate::render::blocks::RenderCtx;
use crate::render::diff_lines::DiffLayout;
use crate::render::highlight::Lookup;
use crate::render::theme::Role;
use crate::render::wrap;

/// Body lines start under the tool name.
const INDENT: &str = "    ";
/// Lines shown before and after "… N more lines" in a trimmed card.
const HEAD: usize = 8;
const TAIL: usize = 4;

pub struct Body<'a> {
    ctx: &'a RenderCtx<'a>,
    full: bool,
    lines: Vec<Line<'static>>,
}

impl<'a> Body<'a> {
    pub fn new(ctx: &'a RenderCtx<'a>, full: bool) -> Self {
        Body {
            ctx,
            full,
            lines: Vec::new(),
        }
    }

    pub fn into_lines(self) -> Vec<Line<'static>> {
        self.lines
    }

    fn width(&self) -> usize {
        (self.ctx.width as usize)
            .saturating_sub(INDENT.len())
            .max(8)
    }

    fn style(&self, role: Role) -> Style {
        self.ctx.theme.style(role)
    }

    /// `label value`, the label muted.
    pub fn kv(&mut self, label: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        let pieces = vec![
            (format!("{label} "), self.style(Role::Muted)),
            (self.ctx.short(value), self.style(Role::Text)),
        ];
        for l in wrap::wrap_spans(&pieces, self.width(), "  ") {
            self.push_indented(l);
        }
    }

    /// Wrapped text in one role.
    pub fn text(&mut self, text: &str, role: Role) {
        let clean = self.ctx.relative(&sanitize::block(text));
        for l in wrap::wrap_text(&clean, self.style(role), self.width(), "") {
            self.push_indented(l);
        }
    }

    fn push_indented(&mut self, mut line: Line<'static>) {
        line.spans.insert(0, Span::raw(INDENT));
        self.lines.push(line);
    }

    /// Keep a head and a tail of `rows` unless full; says how many were cut.
    fn trimmed(&mut self, rows: Vec<Line<'static>>) {
        self.trimmed_by(rows.len(), |range| rows[range].to_vec());
    }

    /// The same for `total` lines made on demand: only the kept ones are.
    fn trimmed_by(
        &mut self,
        total: usize,
        mut make: impl FnMut(Range<usize>) -> Vec<Line<'static>>,
    ) {
        if self.full || total <= HEAD + TAIL + 1 {
            self.lines.extend(make(0..total));
            return;
        }
        self.lines.extend(make(0..HEAD));
        self.lines.push(Line::styled(
            format!("{INDENT}… {} more lines (O shows all)", total - HEAD - TAIL),
            self.style(Role::Muted),
        ));
        self.lines.extend(make(total - TAIL..total));
    }

    /// Command output: ANSI SGR colours become styles; every other sequence
    /// and control character is made inert.
    pub fn output(&mut self, text: &str) {
        let text = text.trim_end_matches(['\n', '\r', ' ']);
        if text.is_empty() {
            return;
        }
        let bar = self.style(Role::Muted);
        let base = self.style(Role::Text);
        let width = self.width().saturating_sub(2);
        let mut rows = Vec::new();
        for raw in text.split('\n') {
            let pieces = ansi_pieces(raw, base);
            for mut l in wrap::wrap_spans(&pieces, width, "") {
                l.spans.insert(0, Span::styled(format!("{INDENT}│ "), bar));
                rows.push(l);
            }
        }
        self.trimmed(rows);
    }

    /// Source code with line numbers, highlighted when the highlighter has it.
    pub fn code(&mut self, lang: &str, text: &str, first_line: usize) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let styled: Vec<Vec<(String, Style)>> = match self.ctx.highlighter.lookup(lang, text) {
            Lookup::Ready(h) => h.iter().cloned().collect(),
            other => {
                if matches!(other, Lookup::Pending) {
                    self.ctx.pending_highlight.set(true);
                }
                let code = self.style(Role::Code);
                text.split('\n')
                    .map(|l| vec![(l.to_string(), code)])
                    .collect()
            }
        };
        let last = first_line + styled.len();
        let num_w = last.to_string().len();
        let gutter = self.style(Role::Muted);
        let width = self.width().saturating_sub(num_w + 3);
        let mut rows = Vec::new();
        for (i, pieces) in styled.iter().enumerate() {
            let clean: Vec<(String, Style)> = pieces
                .iter()
                .map(|(t, s)| (sanitize::line(t).into_owned(), *s))
                .collect();
            for (j, mut l) in wrap::wrap_spans(&clean, width, "").into_iter().enumerate() {
                let n = if j == 0 {
                    format!("{:>num_w$}", first_line + i)
                } else {
                    " ".repeat(num_w)
                };
                l.spans
                    .insert(0, Span::styled(format!("{INDENT}{n} │ "), gutter));
                rows.push(l);
            }
        }
        self.trimmed(rows);
    }

    /// A unified diff in a file of language `lang` (see `diff_lines`).
    pub fn diff(&mut self, patch: &str, lang: &str) {
        let layout = DiffLayout::new(patch, lang, self.width());
        let ctx = self.ctx;
        self.trimmed_by(layout.len(), |range| {
            let mut lines = layout.lines(ctx, range);
            for l in &mut lines {
                l.spans.insert(0, Span::raw(INDENT));
            }
            lines
        });
    }

    /// A shell command: `$ ` before its first line, every line wrapped at
    /// the pane's edge (continuations indented under the command).
    pub fn command(&mut self, cmd: &str) {
        let lead = self.style(Role::Accent);
        let text = self.style(Role::Text);
        for (i, l) in cmd.lines().enumerate() {
            let pieces = vec![
                ((if i == 0 { "$ " } else { "  " }).to_string(), lead),
                (sanitize::line(l).into_owned(), text),
            ];
            for line in wrap::wrap_spans(&pieces, self.width(), "    ") {
                self.push_indented(line);
            }
        }
    }

    /// A raw line, already styled.
    pub fn line(&mut self, line: Line<'static>) {
        self.push_indented(line);
    }

    /// Styled pieces of one logical line, wrapped to the body's width;
    /// continuation lines start with `hang`.
    pub fn spans(&mut self, pieces: &[(String, ratatui::style::Style)], hang: &str) {
        for l in wrap::wrap_spans(pieces, self.width(), hang) {
            self.push_indented(l);
        }
    }
}

/// Pieces of one output line with ANSI SGR colours as styles.
pub fn ansi_pieces(raw: &str, base: Style) -> Vec<(String, Style)> {
    use ansi_to_tui::IntoText;
    // Hyperlinks and titles go first, whatever ends them: the ANSI parser
    // would take the text after an `ESC \`-ended one as part of it.
    let raw = sanitize::strip_control_strings(raw);
    let raw = raw.as_ref();
    if !raw.contains('\u{1b}') {
        return vec![(sanitize::line(raw).into_owned(), base)];
    }
    match raw.as_bytes().into_text() {
        Ok(text) => text
            .lines
            .into_iter()
            .flat_map(|l| l.spans.into_iter())
            .map(|s| (sanitize::line(&s.content).into_owned(), base.patch(s.style)))
            .collect(),
        Err(_) => vec![(sanitize::line(raw).into_owned(), base)],
    }
}
