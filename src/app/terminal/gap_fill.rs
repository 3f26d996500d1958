//! Fewer bytes per frame: ratatui's diff sends only the cells that changed,
//! and the backend moves the cursor (`ESC [ row ; col H`, 6–8 bytes) over
//! every run of unchanged cells between two changed ones. While a long
//! answer streams, the turn view scrolls a line at a time and a word over a
//! word leaves a one-space gap every few cells: most of a scrolled frame's
//! bytes were cursor moves. `Shadow` keeps what the screen shows, so a short
//! gap is written again (the same cells, so nothing changes on screen)
//! where that is shorter than the move, and in the same colours so that no
//! colour change is needed either.

use ratatui::buffer::{Cell, CellDiffOption};
use unicode_width::UnicodeWidthStr;

/// Gaps longer than this are always crossed by moving the cursor.
const MAX_GAP: u16 = 6;

/// What the terminal shows, cell by cell, as the backend wrote it.
pub struct Shadow {
    /// Rows of cells written since the last clear; `None` where a wide
    /// character covers the cell.
    rows: Vec<Vec<Option<Cell>>>,
    /// A cell never written since the last clear is blank (true at start
    /// on the alternate screen, as ratatui assumes too, and after a whole
    /// clear), or unknown (after a partial clear).
    unwritten_blank: bool,
}

impl Default for Shadow {
    fn default() -> Self {
        Shadow {
            rows: Vec::new(),
            unwritten_blank: true,
        }
    }
}

impl Shadow {
    /// The whole screen was cleared to blank cells.
    pub fn cleared(&mut self) {
        self.rows.clear();
        self.unwritten_blank = true;
    }

    /// The screen may hold anything (a partial clear, another program ran).
    pub fn forget(&mut self) {
        self.rows.clear();
        self.unwritten_blank = false;
    }

    fn get(&self, x: u16, y: u16) -> Option<Cell> {
        match self.rows.get(y as usize).and_then(|r| r.get(x as usize)) {
            Some(cell) => cell.clone(),
            None => self.unwritten_blank.then(Cell::default),
        }
    }

    fn set(&mut self, x: u16, y: u16, cell: Option<Cell>) {
        let (x, y) = (x as usize, y as usize);
        if self.rows.len() <= y {
            self.rows.resize_with(y + 1, Vec::new);
        }
        let row = &mut self.rows[y];
        if row.len() <= x {
            let blank = self.unwritten_blank.then(Cell::default);
            row.resize(x + 1, blank);
        }
        row[x] = cell;
    }

    fn note(&mut self, x: u16, y: u16, cell: &Cell) {
        self.set(x, y, Some(cell.clone()));
        // A wide character covers the cells after it: what shows there is
        // no longer what was written there.
        let width = cell.symbol().width().max(1) as u16;
        for dx in 1..width {
            self.set(x.saturating_add(dx), y, None);
        }
    }

    /// The unchanged cells from `from` to `to` (exclusive) on row `y`, if
    /// writing them costs fewer bytes than moving the cursor to `to` and
    /// needs no change of colour or attribute after `last`.
    fn gap(&self, last: &Cell, from: u16, to: u16, y: u16) -> Option<Vec<Cell>> {
        let len = to.checked_sub(from)?;
        if len == 0 || len > MAX_GAP {
            return None;
        }
        // `ESC [ row ; col H`, both 1-based.
        let moving = 4 + digits(y + 1) + digits(to + 1);
        let mut bytes = 0;
        let mut out = Vec::with_capacity(len as usize);
        for x in from..to {
            let cell = self.get(x, y)?;
            let symbol = cell.symbol();
            let narrow = unambiguously_narrow(symbol);
            let same_style = cell.fg == last.fg
                && cell.bg == last.bg
                && cell.underline_color == last.underline_color
                && cell.modifier == last.modifier;
            let special = !matches!(cell.diff_option, CellDiffOption::None);
            if !narrow || !same_style || special {
                return None;
            }
            bytes += symbol.len();
            out.push(cell);
        }
        (bytes < moving).then_some(out)
    }

    /// The changed cells as the terminal gets them, in ratatui's order
    /// (row by row, left to right), with the short gaps between them filled
    /// from the screen's own cells; the shadow takes them all in.
    pub fn fill(&mut self, changed: Vec<(u16, u16, Cell)>) -> Vec<(u16, u16, Cell)> {
        let mut out: Vec<(u16, u16, Cell)> = Vec::with_capacity(changed.len());
        for (x, y, cell) in changed {
            if let Some((lx, ly, last)) = out.last()
                && *ly == y
                && unambiguously_narrow(last.symbol())
                && let Some(gap) = self.gap(last, lx + 1, x, y)
            {
                let ly = *ly;
                let from = lx + 1;
                for (i, c) in gap.into_iter().enumerate() {
                    out.push((from + i as u16, ly, c));
                }
            }
            self.note(x, y, &cell);
            out.push((x, y, cell));
        }
        out
    }
}

/// One column wide in every terminal: a terminal that drew it wider would
/// put the written gap a column off, where a cursor move puts it right.
fn unambiguously_narrow(symbol: &str) -> bool {
    symbol.width() == 1 && symbol.width_cjk() == 1 && !symbol.chars().any(char::is_control)
}

fn digits(n: u16) -> usize {
    n.to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Color;

    fn cell(s: &'static str, fg: Color) -> Cell {
        let mut c = Cell::new(s);
        c.fg = fg;
        c
    }

    #[test]
    fn a_one_space_gap_is_written_again_not_moved_over() {
        let mut shadow = Shadow::default();
        shadow.cleared();
        let first = shadow.fill(vec![
            (0, 0, cell("a", Color::Red)),
            (1, 0, cell(" ", Color::Red)),
            (2, 0, cell("b", Color::Red)),
        ]);
        assert_eq!(first.len(), 3);
        // Cells 0 and 2 change; 1 (a red space) stays and is written again.
        let out = shadow.fill(vec![
            (0, 0, cell("c", Color::Red)),
            (2, 0, cell("d", Color::Red)),
        ]);
        let xs: Vec<u16> = out.iter().map(|(x, _, _)| *x).collect();
        assert_eq!(xs, vec![0, 1, 2]);
        assert_eq!(out[1].2.symbol(), " ");
    }

    #[test]
    fn a_gap_in_other_colours_or_after_a_wide_character_is_moved_over() {
        let mut shadow = Shadow::default();
        shadow.cleared();
        shadow.fill(vec![(1, 0, cell(" ", Color::Blue))]);
        let out = shadow.fill(vec![
            (0, 0, cell("c", Color::Red)),
            (2, 0, cell("d", Color::Red)),
        ]);
        assert_eq!(out.len(), 2, "a blue gap would need a colour change");
        // A wide character at 4 covers 5: what shows there is unknown.
        shadow.fill(vec![(4, 1, cell("中", Color::Reset))]);
        let out = shadow.fill(vec![
            (3, 1, cell("x", Color::Reset)),
            (6, 1, cell("y", Color::Reset)),
        ]);
        assert_eq!(out.len(), 2, "the covered cell is never written over");
    }

    #[test]
    fn nothing_is_filled_once_the_screen_is_unknown() {
        let mut shadow = Shadow::default();
        shadow.forget();
        let out = shadow.fill(vec![
            (0, 0, cell("c", Color::Reset)),
            (2, 0, cell("d", Color::Reset)),
        ]);
        assert_eq!(out.len(), 2);
    }
}
