//! The one diff renderer, for cards, the prompt bar and the diff overlay: a
//! unified diff as lines that read at a glance. Added and removed lines sit
//! on whole-line background bands; the code inside hunks is highlighted by
//! the file's language; wide areas show old and new side by side.
//!
//! Highlighting goes through the shared highlighter, never on the draw
//! path: the old side (context and removed lines) and the new side (context
//! and added lines) are two blocks, so a string or comment spanning lines
//! keeps its colour, and each row takes its line back from its side. Until
//! the colours are ready the code is drawn in the diff colours.

use std::ops::Range;
use std::sync::Arc;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::model::entity::patch::{self, Kind, Row};
use crate::model::wire::sanitize;
use crate::render::blocks::RenderCtx;
use crate::render::highlight::Lookup;
use crate::render::markdown::Highlighted;
use crate::render::theme::Role;
use crate::render::wrap;

/// A diff area at least this wide shows old and new side by side (each
/// half then holds about 55 columns of code).
pub const SIDE_BY_SIDE_MIN_WIDTH: usize = 120;

/// Columns given to a line number at least (they grow for longer files).
const MIN_NUMBER_WIDTH: usize = 4;

/// One displayed line of a diff.
#[derive(Debug, Clone, Copy)]
enum Shown {
    /// A hunk header, a note, or (unified) one diff line: a row index.
    Row(usize),
    /// Side by side: the old row on the left, the new row on the right.
    Pair(Option<usize>, Option<usize>),
}

/// A patch laid out at a width: which rows show on which lines. Cheap to
/// build (no styling); `lines` styles only the range asked for, so a view
/// pays for the lines it shows.
pub struct DiffLayout<'p> {
    rows: Vec<Row<'p>>,
    /// Each row's line in the old and the new block.
    sides: Vec<(Option<usize>, Option<usize>)>,
    old_code: String,
    new_code: String,
    lang: &'p str,
    shown: Vec<Shown>,
    width: usize,
    number_width: usize,
}

impl<'p> DiffLayout<'p> {
    /// `lang` is a highlighter token (a file extension); empty for none.
    pub fn new(patch: &'p str, lang: &'p str, width: usize) -> Self {
        let rows = patch::rows(patch);
        let (mut old_code, mut new_code) = (String::new(), String::new());
        let (mut old_n, mut new_n) = (0usize, 0usize);
        let mut sides = Vec::with_capacity(rows.len());
        let mut max_number = 0;
        for row in &rows {
            let side = match row {
                Row::Line {
                    kind,
                    text,
                    old,
                    new,
                } => {
                    max_number = max_number.max(old.unwrap_or(0)).max(new.unwrap_or(0));
                    let in_old = matches!(kind, Kind::Same | Kind::Removed);
                    let in_new = matches!(kind, Kind::Same | Kind::Added);
                    let take = |on: bool, code: &mut String, n: &mut usize| {
                        on.then(|| {
                            code.push_str(text);
                            code.push('\n');
                            *n += 1;
                            *n - 1
                        })
                    };
                    (
                        take(in_old, &mut old_code, &mut old_n),
                        take(in_new, &mut new_code, &mut new_n),
                    )
                }
                Row::Hunk(_) => (None, None),
            };
            sides.push(side);
        }
        // Only additions or only removals: nothing to set side by side.
        let both = |k: Kind| {
            rows.iter()
                .any(|r| matches!(r, Row::Line { kind, .. } if *kind == k))
        };
        let side_by_side =
            width >= SIDE_BY_SIDE_MIN_WIDTH && both(Kind::Added) && both(Kind::Removed);
        let shown = if side_by_side {
            pair_up(&rows)
        } else {
            (0..rows.len()).map(Shown::Row).collect()
        };
        DiffLayout {
            rows,
            sides,
            old_code,
            new_code,
            lang,
            shown,
            width,
            // No numbers at all (no numbered hunk header): no gutter.
            number_width: if max_number == 0 {
                0
            } else {
                max_number.to_string().len().max(MIN_NUMBER_WIDTH)
            },
        }
    }

    /// Lines the diff takes.
    pub fn len(&self) -> usize {
        self.shown.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// The lines in `range`, styled; each banded line is padded to the width.
    pub fn lines(&self, ctx: &RenderCtx, range: Range<usize>) -> Vec<Line<'static>> {
        let range = range.start.min(self.len())..range.end.min(self.len());
        if range.is_empty() {
            return Vec::new();
        }
        let paint = Painter {
            ctx,
            old: highlighted(ctx, self.lang, &self.old_code),
            new: highlighted(ctx, self.lang, &self.new_code),
            number_width: self.number_width,
        };
        self.shown[range]
            .iter()
            .map(|shown| match *shown {
                Shown::Row(i) => self.unified(&paint, i),
                Shown::Pair(l, r) => self.pair(&paint, l, r),
            })
            .collect()
    }

    fn unified(&self, paint: &Painter, i: usize) -> Line<'static> {
        match &self.rows[i] {
            Row::Hunk(h) => paint.hunk(h, self.width),
            Row::Line {
                kind: Kind::Note,
                text,
                ..
            } => paint.note(text, self.width),
            Row::Line { kind, old, new, .. } => {
                let w = self.number_width;
                let num = |n: &Option<usize>| n.map(|n| n.to_string()).unwrap_or_default();
                let gutter = if w == 0 {
                    String::new()
                } else {
                    format!("{:>w$} {:>w$} ", num(old), num(new))
                };
                Line::from(paint.cell(*kind, gutter, self.code(paint, i), self.width))
            }
        }
    }

    fn pair(&self, paint: &Painter, left: Option<usize>, right: Option<usize>) -> Line<'static> {
        let left_w = self.width.saturating_sub(1) / 2;
        let right_w = self.width.saturating_sub(1 + left_w);
        let mut spans = self.half(paint, left, true, left_w);
        spans.push(Span::styled("│", paint.ctx.theme.style(Role::Muted)));
        spans.extend(self.half(paint, right, false, right_w));
        Line::from(spans)
    }

    /// One side of a side-by-side line: the old side's number on the left,
    /// the new side's on the right.
    fn half(
        &self,
        paint: &Painter,
        row: Option<usize>,
        old_side: bool,
        width: usize,
    ) -> Vec<Span<'static>> {
        let Some(i) = row else {
            return vec![Span::raw(" ".repeat(width))];
        };
        let Row::Line { kind, old, new, .. } = &self.rows[i] else {
            return vec![Span::raw(" ".repeat(width))];
        };
        let number = if old_side { old } else { new };
        let w = self.number_width;
        let gutter = if w == 0 {
            String::new()
        } else {
            format!("{:>w$} ", number.map(|n| n.to_string()).unwrap_or_default())
        };
        let code = if *kind == Kind::Same {
            // Context lines take their colours from the side they sit on.
            let (o, n) = self.sides[i];
            let (block, at) = if old_side {
                (&paint.old, o)
            } else {
                (&paint.new, n)
            };
            self.code_from(paint, i, block, at)
        } else {
            self.code(paint, i)
        };
        paint.cell(*kind, gutter, code, width)
    }

    /// A diff line's code: highlighted pieces when ready, else the text.
    fn code(&self, paint: &Painter, i: usize) -> Vec<(String, Style)> {
        let (o, n) = self.sides[i];
        match n {
            Some(_) => self.code_from(paint, i, &paint.new, n),
            None => self.code_from(paint, i, &paint.old, o),
        }
    }

    fn code_from(
        &self,
        paint: &Painter,
        i: usize,
        block: &Option<Arc<Highlighted>>,
        at: Option<usize>,
    ) -> Vec<(String, Style)> {
        let Row::Line { kind, text, .. } = &self.rows[i] else {
            return Vec::new();
        };
        match block.as_ref().zip(at).and_then(|(b, at)| b.get(at)) {
            Some(pieces) => pieces
                .iter()
                .map(|(t, s)| (sanitize::line(t).into_owned(), *s))
                .collect(),
            None => vec![(sanitize::line(text).into_owned(), paint.plain(*kind))],
        }
    }
}

/// Rows for side by side: a change's removed and added lines pair up on the
/// same lines; context lines face themselves.
fn pair_up(rows: &[Row]) -> Vec<Shown> {
    let mut out = Vec::new();
    let (mut dels, mut adds) = (Vec::new(), Vec::new());
    let flush = |dels: &mut Vec<usize>, adds: &mut Vec<usize>, out: &mut Vec<Shown>| {
        for k in 0..dels.len().max(adds.len()) {
            out.push(Shown::Pair(dels.get(k).copied(), adds.get(k).copied()));
        }
        dels.clear();
        adds.clear();
    };
    for (i, row) in rows.iter().enumerate() {
        match row {
            Row::Line {
                kind: Kind::Removed,
                ..
            } => dels.push(i),
            Row::Line {
                kind: Kind::Added, ..
            } => adds.push(i),
            Row::Line {
                kind: Kind::Same, ..
            } => {
                flush(&mut dels, &mut adds, &mut out);
                out.push(Shown::Pair(Some(i), Some(i)));
            }
            // A hunk header or a note spans both halves.
            Row::Line {
                kind: Kind::Note, ..
            }
            | Row::Hunk(_) => {
                flush(&mut dels, &mut adds, &mut out);
                out.push(Shown::Row(i));
            }
        }
    }
    flush(&mut dels, &mut adds, &mut out);
    out
}

/// A side's colours if the highlighter has them; pending ones are noted so
/// a cached render is redone when they arrive.
fn highlighted(ctx: &RenderCtx, lang: &str, code: &str) -> Option<Arc<Highlighted>> {
    if lang.is_empty() || code.is_empty() {
        return None;
    }
    match ctx.highlighter.lookup(lang, code) {
        Lookup::Ready(h) => Some(h),
        Lookup::Pending => {
            ctx.pending_highlight.set(true);
            None
        }
        Lookup::Plain => None,
    }
}

/// Styles for one render: the theme's diff roles and both sides' colours.
struct Painter<'c, 'a> {
    ctx: &'c RenderCtx<'a>,
    old: Option<Arc<Highlighted>>,
    new: Option<Arc<Highlighted>>,
    number_width: usize,
}

impl Painter<'_, '_> {
    fn style(&self, role: Role) -> Style {
        self.ctx.theme.style(role)
    }

    /// The background band of a line of this kind (none for context).
    fn band(&self, kind: Kind) -> Option<Color> {
        match kind {
            Kind::Added => self.style(Role::DiffAddLine).bg,
            Kind::Removed => self.style(Role::DiffDelLine).bg,
            Kind::Same | Kind::Note => None,
        }
    }

    /// Code not (yet) highlighted: the diff colours.
    fn plain(&self, kind: Kind) -> Style {
        match kind {
            Kind::Added => self.style(Role::DiffAdd),
            Kind::Removed => self.style(Role::DiffDel),
            Kind::Same => self.style(Role::Text),
            Kind::Note => self.style(Role::Muted),
        }
    }

    fn hunk(&self, header: &str, width: usize) -> Line<'static> {
        Line::styled(
            wrap::truncate(&sanitize::line(header), width),
            self.style(Role::DiffHunk),
        )
    }

    fn note(&self, text: &str, width: usize) -> Line<'static> {
        let pad = " ".repeat((self.number_width + 1) * 2 * usize::from(self.number_width > 0));
        Line::styled(
            wrap::truncate(&format!("{pad}{}", sanitize::line(text)), width),
            self.style(Role::Muted),
        )
    }

    /// Gutter, sign and code in exactly `width` columns, on the kind's band.
    fn cell(
        &self,
        kind: Kind,
        gutter: String,
        code: Vec<(String, Style)>,
        width: usize,
    ) -> Vec<Span<'static>> {
        // Only the band's background: the code keeps its syntax colours.
        let band = self.band(kind);
        let on_band = |style: Style| match band {
            Some(bg) => style.bg(bg),
            None => style,
        };
        let sign = match kind {
            Kind::Added => "+ ",
            Kind::Removed => "- ",
            _ => "  ",
        };
        let mut pieces = vec![
            (gutter, self.style(Role::Muted)),
            (sign.to_string(), self.plain(kind)),
        ];
        pieces.extend(code);
        let pieces: Vec<(String, Style)> =
            pieces.into_iter().map(|(t, s)| (t, on_band(s))).collect();
        let (mut spans, used) = wrap::truncate_pieces(&pieces, width);
        // Padded to the width: the band reaches the edge, and the left half
        // of a side-by-side line keeps the divider in its column.
        if used < width {
            spans.push(Span::styled(
                " ".repeat(width - used),
                on_band(Style::default()),
            ));
        }
        spans
    }
}

/// A whole diff at a width.
pub fn diff_lines(patch: &str, lang: &str, ctx: &RenderCtx, width: usize) -> Vec<Line<'static>> {
    let layout = DiffLayout::new(patch, lang, width);
    layout.lines(ctx, 0..layout.len())
}
