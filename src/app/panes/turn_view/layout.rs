//! Laying out the turn view: which lines of which blocks are visible.
//!
//! The scroll position is an anchor (a block, by id, and a line offset into
//! it), not an absolute line number, so a frame lays out only the blocks it
//! shows: the cost of a frame depends on the viewport, not on the session's
//! length. Key handlers only record intent (lines to move, a jump); `prepare`
//! resolves it before the frame is drawn, and drawing reads the result.

use std::collections::HashSet;

use ratatui::text::Line;

use crate::model::entity::search::Query;

pub use super::positions::{Pos, find_pos, next_pos, prev_pos};
use super::positions::{last_pos, part_id_at};
use super::variant::variant;

pub use crate::app::view::Jump;
use crate::model::entity::shown::{self, Shown};
use crate::model::{PartBody, Session};
use crate::render::blocks::{self, RenderCtx};
use crate::render::render_cache::{Lines, RenderCache};
use crate::render::search_marks;

/// How far ahead of the reader older messages are loaded: when fewer
/// than this many screens of lines are above the view's top.
pub const AHEAD_SCREENS: usize = 2;

/// One visible row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Anchor {
    message_id: String,
    part_id: Option<String>,
    offset: usize,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub line: Line<'static>,
    pub pos: Pos,
}

/// Scroll, fold and selection state of one session's turn view.
#[derive(Debug, Clone)]
pub struct TurnState {
    /// Stick to the bottom as output streams.
    pub follow: bool,
    /// Stick to the first message (`g`) while older pages come in front.
    pub pinned_top: bool,
    anchor: Option<Anchor>,
    pending_lines: i64,
    pending_jump: Option<Jump>,
    /// The selected card: (message id, part id).
    pub selected: Option<(String, String)>,
    /// Parts whose fold differs from their default.
    pub(super) toggled: HashSet<String>,
    /// Parts shown whole (untrimmed output).
    pub(super) full: HashSet<String>,
    /// Result of the last `prepare`.
    pub rows: Vec<Row>,
    /// Index of the first visible message, and the message count.
    pub position: (usize, usize),
    /// Lines above the view's top, counted up to `AHEAD_SCREENS` screens.
    pub lines_above: usize,
}

impl Default for TurnState {
    fn default() -> Self {
        TurnState {
            follow: true,
            pinned_top: false,
            anchor: None,
            pending_lines: 0,
            pending_jump: None,
            selected: None,
            toggled: HashSet::new(),
            full: HashSet::new(),
            rows: Vec::new(),
            position: (0, 0),
            lines_above: 0,
        }
    }
}

/// What a layout needs to render blocks.
pub struct LayoutCtx<'a> {
    pub render: RenderCtx<'a>,
    pub collapse_reasoning: bool,
    /// Search matches to mark in the visible rows.
    pub search: Option<SearchMarks<'a>>,
}

/// The search being shown: every match marked, the current one apart.
pub struct SearchMarks<'a> {
    pub query: &'a Query,
    /// The current hit: part id and its rank within the part.
    pub current: Option<(&'a str, usize)>,
    pub style: ratatui::style::Style,
    pub current_style: ratatui::style::Style,
}

impl TurnState {
    /// Scroll by `n` lines (negative: up). Scrolling up leaves follow mode.
    pub fn scroll(&mut self, n: i64) {
        self.pending_lines += n;
    }

    pub fn jump(&mut self, jump: Jump) {
        if jump == Jump::Bottom {
            self.pending_lines = 0;
        }
        self.pending_jump = Some(jump);
    }

    pub fn toggle(&mut self, part_id: &str) {
        if !self.toggled.remove(part_id) {
            self.toggled.insert(part_id.to_string());
        }
    }

    pub fn toggle_full(&mut self, part_id: &str) {
        if !self.full.remove(part_id) {
            self.full.insert(part_id.to_string());
            self.toggled.remove(part_id);
        }
    }

    /// Fold every reasoning part (or unfold them all, when all are folded).
    pub fn toggle_all(
        &mut self,
        session: &Session,
        collapse_reasoning: bool,
        detail: blocks::Detail,
    ) {
        let reasoning: Vec<&crate::model::Part> = session
            .messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .filter(|p| matches!(p.body, crate::model::PartBody::Reasoning(_)))
            .collect();
        let all_folded = reasoning
            .iter()
            .all(|p| !self.is_expanded(p, collapse_reasoning, detail));
        for p in reasoning {
            let default = blocks::expanded_by_default(p, collapse_reasoning, detail);
            if default == all_folded {
                self.toggled.remove(&p.id);
            } else {
                self.toggled.insert(p.id.clone());
            }
        }
    }

    pub fn is_expanded(
        &self,
        part: &crate::model::Part,
        collapse_reasoning: bool,
        detail: blocks::Detail,
    ) -> bool {
        self.full.contains(&part.id)
            || blocks::expanded_by_default(part, collapse_reasoning, detail)
                != self.toggled.contains(&part.id)
    }

    pub fn is_full(&self, part_id: &str, detail: blocks::Detail) -> bool {
        detail == blocks::Detail::Full || self.full.contains(part_id)
    }

    /// The block under a visible row.
    pub fn pos_at_row(&self, row: usize) -> Option<Pos> {
        self.rows.get(row).map(|r| r.pos)
    }

    /// Whether a part is on screen now.
    pub fn is_visible(&self, session: &Session, message_id: &str, part_id: &str) -> bool {
        self.rows.iter().any(|r| {
            r.pos.part().is_some_and(|pi| {
                let m = &session.messages[r.pos.message];
                m.info.id == message_id && m.parts.get(pi).is_some_and(|p| p.id == part_id)
            })
        })
    }

    /// Resolve pending scrolls and jumps, then lay out `height` rows.
    pub fn prepare(
        &mut self,
        session: &Session,
        cache: &mut RenderCache,
        height: usize,
        ctx: &LayoutCtx,
    ) {
        self.rows.clear();
        self.position = (0, session.messages.len());
        self.lines_above = 0;
        let Some(last) = last_pos(session) else {
            self.pending_lines = 0;
            self.pending_jump = None;
            return;
        };
        let mut lay = Layout {
            session,
            cache,
            ctx,
            state: self,
        };
        let jump = lay.state.pending_jump.take();
        lay.state.pinned_top &= jump.is_none();
        let (mut top, mut offset) = lay.after_jump(jump, last, height);
        let delta = std::mem::take(&mut lay.state.pending_lines);
        lay.state.pinned_top &= delta <= 0;
        if delta != 0 {
            lay.state.follow = false;
            (top, offset) = lay.moved(top, offset, delta, last);
        }
        lay.fill(top, offset, height);
        // Past the end: align the last line with the bottom instead.
        if lay.state.rows.len() < height
            && (top, offset)
                != (
                    Pos {
                        message: 0,
                        slot: 0,
                    },
                    0,
                )
        {
            (top, offset) = lay.bottom_aligned(last, height);
            lay.state.rows.clear();
            lay.fill(top, offset, height);
        }
        lay.mark_search(top, offset);
        let above = lay.lines_above(top, offset, AHEAD_SCREENS * height.max(1));
        let state = lay.state;
        state.lines_above = above;
        state.position = (top.message, session.messages.len());
        state.anchor = Some(anchor_of(session, top, offset));
    }
}

struct Layout<'s, 'c, 'x, 'r> {
    session: &'s Session,
    cache: &'c mut RenderCache,
    ctx: &'x LayoutCtx<'x>,
    state: &'r mut TurnState,
}

impl Layout<'_, '_, '_, '_> {
    /// Where the view's top is after `jump` (none: where it was), and
    /// whether it follows the end from then on.
    fn after_jump(&mut self, jump: Option<Jump>, last: Pos, height: usize) -> (Pos, usize) {
        match jump {
            Some(Jump::Top) => {
                self.state.follow = false;
                self.state.pinned_top = true;
                (
                    Pos {
                        message: 0,
                        slot: 0,
                    },
                    0,
                )
            }
            Some(Jump::Bottom) => {
                self.state.follow = true;
                self.bottom_aligned(last, height)
            }
            Some(Jump::NextTurn) => {
                let (cur, _) = self.current_top(last, height);
                match (cur.message + 1..self.session.messages.len())
                    .find(|&i| self.session.messages[i].info.is_user())
                {
                    Some(mi) => {
                        self.state.follow = false;
                        (
                            Pos {
                                message: mi,
                                slot: 0,
                            },
                            0,
                        )
                    }
                    None => {
                        self.state.follow = true;
                        self.bottom_aligned(last, height)
                    }
                }
            }
            Some(Jump::PrevTurn) => {
                let (cur, off) = self.current_top(last, height);
                let end = if cur.slot == 0 && off == 0 {
                    cur.message
                } else {
                    cur.message + 1
                };
                let mi = (0..end)
                    .rev()
                    .find(|&i| self.session.messages[i].info.is_user())
                    .unwrap_or(0);
                self.state.follow = false;
                (
                    Pos {
                        message: mi,
                        slot: 0,
                    },
                    0,
                )
            }
            Some(Jump::Reveal(mid, pid)) => {
                let (cur, off) = self.current_top(last, height);
                match find_pos(self.session, &mid, Some(&pid)) {
                    Some(p) if !self.state.is_visible(self.session, &mid, &pid) => {
                        self.state.follow = false;
                        // Keep a little context above the card.
                        let mut p = (p, 0usize);
                        for _ in 0..2 {
                            if let Some(prev) = prev_pos(self.session, p.0) {
                                p = (prev, 0);
                            }
                        }
                        p
                    }
                    _ => (cur, off),
                }
            }
            Some(Jump::Match {
                message_id,
                part_id,
                query,
                ordinal,
            }) => match find_pos(self.session, &message_id, Some(&part_id)) {
                Some(p) => {
                    self.state.follow = false;
                    self.state.pinned_top = false;
                    let line = self.line_of_occurrence(p, &query, ordinal);
                    let (top, off) = (p, line);
                    self.moved(top, off, -((height / 3) as i64), last)
                }
                None => self.current_top(last, height),
            },
            Some(Jump::ToMessage(mid)) => {
                self.state.follow = false;
                (
                    find_pos(self.session, &mid, None).unwrap_or(Pos {
                        message: 0,
                        slot: 0,
                    }),
                    0,
                )
            }
            None => self.current_top(last, height),
        }
    }

    fn lines(&mut self, pos: Pos) -> Lines {
        let message = &self.session.messages[pos.message];
        let ctx = &self.ctx.render;
        match pos.part() {
            None => {
                let id = format!("{}#header", message.info.id);
                self.cache.get_or_render(
                    &id,
                    message.revision,
                    ctx.width,
                    ctx.wall_clock.is_some() as u64,
                    || (blocks::message_header(message, ctx), false),
                )
            }
            Some(pi) => {
                let part = &message.parts[pi];
                let shown = shown::shown(message, pi);
                if let Shown::Hidden = shown {
                    return Lines::default();
                }
                if let PartBody::Text(t) = &part.body {
                    let role = blocks::text_role(t);
                    return self.cache.markdown_stream(
                        &part.id,
                        part.revision,
                        ctx.width,
                        &t.text,
                        |src| {
                            ctx.pending_highlight.set(false);
                            let lines = if src.trim().is_empty() {
                                Vec::new()
                            } else {
                                ctx.markdown(src.trim_end(), role)
                            };
                            (lines, ctx.pending_highlight.get())
                        },
                    );
                }
                let expanded =
                    self.state
                        .is_expanded(part, self.ctx.collapse_reasoning, ctx.detail);
                let full = self.state.is_full(&part.id, ctx.detail);
                let variant =
                    variant(part, expanded, full, ctx) ^ shown.extra_revision().rotate_left(40);
                self.cache
                    .get_or_render(&part.id, part.revision, ctx.width, variant, || {
                        ctx.pending_highlight.set(false);
                        let lines = match shown.resolve(part) {
                            Some(part) => blocks::part_lines(&part, expanded, full, ctx),
                            None => Vec::new(),
                        };
                        (lines, ctx.pending_highlight.get())
                    })
            }
        }
    }

    /// The line of a block that holds occurrence `ordinal` of `query` (the
    /// last one with an occurrence when there are fewer; 0 with none).
    fn line_of_occurrence(&mut self, pos: Pos, query: &Query, ordinal: usize) -> usize {
        let lines = self.lines(pos);
        let mut seen = 0;
        let mut last_with = 0;
        for (i, line) in lines.iter_from(0).enumerate() {
            let n = search_marks::count_in_line(line, query);
            if n > 0 {
                last_with = i;
            }
            seen += n;
            if seen > ordinal {
                return i;
            }
        }
        last_with
    }

    /// Mark the search's matches in the laid-out rows; the current hit is
    /// the occurrence of its rank counted from the part's first line, lines
    /// above the view included.
    fn mark_search(&mut self, top: Pos, offset: usize) {
        let Some(marks) = &self.ctx.search else {
            return;
        };
        let mut seen_in_current = 0;
        if let Some((cur, _)) = marks.current
            && offset > 0
            && part_id_at(self.session, top) == Some(cur)
        {
            let lines = self.lines(top);
            seen_in_current = lines
                .iter_from(0)
                .take(offset)
                .map(|l| search_marks::count_in_line(l, marks.query))
                .sum();
        }
        for row in &mut self.state.rows {
            let in_current = marks
                .current
                .filter(|(cur, _)| part_id_at(self.session, row.pos) == Some(*cur));
            let current = in_current.and_then(|(_, ordinal)| ordinal.checked_sub(seen_in_current));
            let n = search_marks::mark_line(
                &mut row.line,
                marks.query,
                marks.style,
                current,
                marks.current_style,
            );
            if in_current.is_some() {
                seen_in_current += n;
            }
        }
    }

    fn height(&mut self, pos: Pos) -> usize {
        self.lines(pos).len()
    }

    /// Lines above `top` (and `offset` into it), counted up to `limit`.
    fn lines_above(&mut self, mut pos: Pos, offset: usize, limit: usize) -> usize {
        let mut total = offset;
        while total < limit
            && let Some(p) = prev_pos(self.session, pos)
        {
            total += self.height(p);
            pos = p;
        }
        total.min(limit)
    }

    /// The top of the view as the last frame left it (or bottom-aligned).
    fn current_top(&mut self, last: Pos, height: usize) -> (Pos, usize) {
        if self.state.follow {
            return self.bottom_aligned(last, height);
        }
        if self.state.pinned_top {
            return (Pos::default(), 0);
        }
        match &self.state.anchor {
            Some(a) => {
                let pos =
                    find_pos(self.session, &a.message_id, a.part_id.as_deref()).unwrap_or(Pos {
                        message: 0,
                        slot: 0,
                    });
                let offset = a.offset.min(self.height(pos).saturating_sub(1));
                (pos, offset)
            }
            None => self.bottom_aligned(last, height),
        }
    }

    /// The top position that puts the last line at the bottom.
    fn bottom_aligned(&mut self, last: Pos, height: usize) -> (Pos, usize) {
        let mut pos = last;
        let mut total = self.height(pos);
        while total < height {
            match prev_pos(self.session, pos) {
                Some(p) => {
                    pos = p;
                    total += self.height(p);
                }
                None => return (pos, 0),
            }
        }
        (pos, total - height)
    }

    fn moved(&mut self, mut pos: Pos, offset: usize, delta: i64, last: Pos) -> (Pos, usize) {
        let mut off = offset as i64 + delta;
        while off < 0 {
            match prev_pos(self.session, pos) {
                Some(p) => {
                    pos = p;
                    off += self.height(p) as i64;
                }
                None => return (pos, 0),
            }
        }
        loop {
            let h = self.height(pos) as i64;
            if off < h || pos == last {
                return (pos, off.min((h - 1).max(0)) as usize);
            }
            off -= h;
            match next_pos(self.session, pos) {
                Some(p) => pos = p,
                None => return (pos, 0),
            }
        }
    }

    fn fill(&mut self, top: Pos, offset: usize, height: usize) {
        let mut pos = Some(top);
        let mut skip = offset;
        while let Some(p) = pos {
            if self.state.rows.len() >= height {
                break;
            }
            let lines = self.lines(p);
            for line in lines.iter_from(skip) {
                if self.state.rows.len() >= height {
                    break;
                }
                self.state.rows.push(Row {
                    line: line.clone(),
                    pos: p,
                });
            }
            skip = 0;
            pos = next_pos(self.session, p);
        }
    }
}

fn anchor_of(session: &Session, pos: Pos, offset: usize) -> Anchor {
    let m = &session.messages[pos.message];
    Anchor {
        message_id: m.info.id.clone(),
        part_id: pos.part().map(|pi| m.parts[pi].id.clone()),
        offset,
    }
}
