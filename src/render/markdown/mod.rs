//! Markdown to terminal lines, at a width: headings, emphasis, inline code,
//! fenced code (highlighted when the highlighter has it ready), nested and
//! task lists, block quotes, links with their target, tables and rules.
//! All text passes the sanitizer; absolute paths under the session's
//! directory are shown relative to it.
//!
//! This file parses and keeps the inline state (styles, links, the text
//! being collected); `layout` turns blocks into prefixed, wrapped lines and
//! `table` lays out tables.

use std::sync::Arc;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use crate::model::wire::sanitize;
use crate::render::theme::{Role, Theme};
use crate::render::wrap;

mod layout;
mod table;

use table::Table;

/// Code lines as styled pieces, from a highlighter.
pub type Highlighted = Vec<Vec<(String, Style)>>;

/// Where fenced code gets its colours. `None` means "not available (yet)":
/// the block is drawn plain and drawn again once highlighting is ready.
pub trait CodeHighlighter {
    fn highlight(&mut self, lang: &str, code: &str) -> Option<Arc<Highlighted>>;
}

/// No highlighting at all.
pub struct Plain;

impl CodeHighlighter for Plain {
    fn highlight(&mut self, _: &str, _: &str) -> Option<Arc<Highlighted>> {
        None
    }
}

/// Longest display line kept; longer ones are cut (a minified file must not
/// cost a frame).
pub const MAX_LINE_BYTES: usize = 16 * 1024;

pub struct MdCtx<'a> {
    pub theme: &'a Theme,
    pub width: usize,
    /// Absolute paths under this directory are shown relative to it.
    pub base_dir: Option<&'a str>,
    /// The style of plain text (muted for synthetic text).
    pub text_role: Role,
}

/// Quotes and list items nested deeper than this draw one `…` marker for
/// the rest: each level would add a prefix to every line, and a nesting
/// bomb (thousands of `>`) would grow without bound.
pub const MAX_NESTING: usize = 12;

/// The lines one text may render to; past it, one line says how many more
/// were cut.
pub const MAX_LINES: usize = 20_000;

enum Container {
    Quote,
    /// A list: the next item number for ordered lists.
    List(Option<u64>),
    /// An item: its marker, not yet printed.
    Item {
        marker: Option<String>,
        width: usize,
    },
}

struct Renderer<'a, 'h> {
    ctx: &'a MdCtx<'a>,
    hl: &'h mut dyn CodeHighlighter,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// Inline style stack (emphasis, strong, links…).
    styles: Vec<Style>,
    /// The paragraph being collected: logical lines of styled pieces.
    pieces: Vec<Vec<(String, Style)>>,
    heading: Option<HeadingLevel>,
    code: Option<(String, String)>,
    link_targets: Vec<String>,
    table: Option<Table>,
    /// A blank line is due before the next block.
    gap: bool,
    /// Lines dropped past `MAX_LINES`.
    cut: usize,
}

/// Render a whole markdown text.
pub fn render(src: &str, ctx: &MdCtx, hl: &mut dyn CodeHighlighter) -> Vec<Line<'static>> {
    let mut r = Renderer {
        ctx,
        hl,
        out: Vec::new(),
        containers: Vec::new(),
        styles: vec![ctx.theme.style(ctx.text_role)],
        pieces: vec![Vec::new()],
        heading: None,
        code: None,
        link_targets: Vec::new(),
        table: None,
        gap: false,
        cut: 0,
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(src, options) {
        r.event(event);
    }
    r.flush_paragraph();
    if r.cut > 0 {
        let note = format!(
            "… {} more lines cut (a part renders {MAX_LINES} at most)",
            r.cut
        );
        r.out.push(Line::styled(note, ctx.theme.style(Role::Muted)));
    }
    r.out
}

/// The byte length of the part of a streaming text that will not change how
/// it renders as more text arrives: everything before the start of the last
/// top-level block that follows a blank line outside fenced code. Rendering
/// that prefix once and only the rest again keeps each delta cheap.
pub fn stable_prefix_len(src: &str) -> usize {
    stable_prefix_len_from(src, 0)
}

/// The same, scanning only from `start`, a boundary found before (so the
/// cost of a delta does not grow with the text already settled).
pub fn stable_prefix_len_from(src: &str, start: usize) -> usize {
    let mut in_fence: Option<(u8, usize)> = None;
    let mut prev_blank = false;
    let mut stable = start;
    let mut pos = start;
    let Some(rest) = src.get(start..) else {
        return start.min(src.len());
    };
    for line in rest.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start_matches(' ');
        let indent = body.len() - trimmed.len();
        let fence = (indent < 4)
            .then(|| {
                let c = trimmed.bytes().next()?;
                let n = trimmed.bytes().take_while(|&b| b == c).count();
                ((c == b'`' || c == b'~') && n >= 3).then_some((c, n))
            })
            .flatten();
        match (in_fence, fence) {
            (None, Some(f)) => {
                if prev_blank {
                    stable = pos;
                }
                in_fence = Some(f);
            }
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && trimmed.trim_end().bytes().all(|b| b == c) =>
            {
                in_fence = None;
            }
            (None, None) if prev_blank && indent == 0 && !body.trim().is_empty() => stable = pos,
            _ => {}
        }
        prev_blank = in_fence.is_none() && body.trim().is_empty() && complete;
        pos += line.len();
    }
    stable
}

impl Renderer<'_, '_> {
    fn theme(&self) -> &Theme {
        self.ctx.theme
    }

    fn style(&self) -> Style {
        *self.styles.last().expect("the base style is never popped")
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, text: &str, style: Style) {
        let clean = self.clean(text);
        let mut first = true;
        for part in clean.split('\n') {
            if !first {
                self.pieces.push(Vec::new());
            }
            first = false;
            if !part.is_empty() {
                self.pieces
                    .last_mut()
                    .expect("one line at least")
                    .push((part.to_string(), style));
            }
        }
    }

    fn clean(&self, text: &str) -> String {
        let mut s = sanitize::block(text).into_owned();
        if let Some(dir) = self.ctx.base_dir.filter(|d| d.len() > 1) {
            let prefix = format!("{}/", dir.trim_end_matches('/'));
            if s.contains(&prefix) {
                s = s.replace(&prefix, "");
            }
        }
        s
    }

    fn event(&mut self, event: Event) {
        if self.table.is_some()
            && let Event::Text(t) | Event::Code(t) = &event
        {
            let clean = self.clean(t).replace('\n', " ");
            if let Some(table) = &mut self.table {
                table.cell.push_str(&clean);
            }
            return;
        }
        if let Some(table) = &mut self.table {
            match &event {
                Event::End(TagEnd::TableCell) => {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell);
                    return;
                }
                Event::End(TagEnd::TableHead) => {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.header_rows = table.rows.len();
                    return;
                }
                Event::End(TagEnd::TableRow) => {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    return;
                }
                Event::End(TagEnd::Table) => {}
                _ => return,
            }
        }
        if let Some((_, code)) = &mut self.code {
            match event {
                Event::Text(t) => code.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                let s = self.style();
                self.text(&t, s);
            }
            Event::Code(t) => {
                let s = self.theme().style(Role::Code);
                self.text(&t, s);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let s = self.theme().style(Role::Code);
                self.text(&t, s);
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let s = self.theme().style(Role::Muted);
                self.text(t.trim_end_matches('\n'), s);
            }
            Event::SoftBreak => {
                let s = self.style();
                self.text(" ", s);
            }
            Event::HardBreak => self.pieces.push(Vec::new()),
            Event::Rule => {
                self.block_start();
                let w = self.ctx.width.saturating_sub(self.prefix_width()).max(1);
                let line = Line::styled("─".repeat(w), self.theme().style(Role::Muted));
                self.emit(vec![line]);
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                if let Some(Container::Item { marker, width }) = self.containers.last_mut() {
                    let m = if done { "☑ " } else { "☐ " };
                    *marker = Some(m.to_string());
                    *width = 2;
                }
            }
            Event::FootnoteReference(name) => {
                let s = self.theme().style(Role::Muted);
                self.text(&format!("[^{name}]"), s);
            }
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                self.heading = Some(level);
                let mut s = self.theme().style(Role::Heading);
                if level == HeadingLevel::H1 {
                    s = s.add_modifier(Modifier::UNDERLINED);
                }
                self.styles.push(s);
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
                self.styles.push(self.theme().style(Role::Quote));
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split([' ', ',', '{']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.block_start();
                } else {
                    self.flush_paragraph();
                }
                self.containers.push(Container::List(start));
            }
            Tag::Item => {
                self.flush_paragraph();
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List(_)))
                    .count();
                let marker = match self.containers.last_mut() {
                    Some(Container::List(Some(n))) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => if depth <= 1 { "• " } else { "◦ " }.to_string(),
                };
                let width = wrap::width(&marker);
                self.containers.push(Container::Item {
                    marker: Some(marker),
                    width,
                });
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link_targets.push(dest_url.to_string());
                let link = self.theme().style(Role::Link);
                self.push_style(|s| s.patch(link));
            }
            Tag::Image { dest_url, .. } => {
                self.link_targets.push(dest_url.to_string());
                let s = self.theme().style(Role::Muted);
                self.text("[image: ", s);
                self.styles.push(s);
            }
            Tag::Table(_) => {
                self.block_start();
                self.table = Some(Table::default());
            }
            Tag::HtmlBlock | Tag::FootnoteDefinition(_) => self.block_start(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_paragraph();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush_paragraph();
                self.pop_style();
                self.heading = None;
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_paragraph();
                self.containers.pop();
                self.pop_style();
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush_paragraph();
                self.containers.pop();
                self.gap = !matches!(self.containers.last(), Some(Container::Item { .. }));
            }
            TagEnd::Item => {
                self.flush_paragraph();
                self.containers.pop();
                self.gap = false;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link_targets.pop()
                    && !url.is_empty()
                    && !url.starts_with('#')
                {
                    let shown: String = self
                        .pieces
                        .last()
                        .map(|p| p.iter().map(|(t, _)| t.as_str()).collect())
                        .unwrap_or_default();
                    if !shown.ends_with(url.as_str()) {
                        let s = self.theme().style(Role::Muted);
                        self.text(&format!(" ({url})"), s);
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                let url = self.link_targets.pop().unwrap_or_default();
                let s = self.theme().style(Role::Muted);
                self.text(&format!("]({url})"), s);
            }
            TagEnd::Table => self.end_table(),
            TagEnd::HtmlBlock | TagEnd::FootnoteDefinition => {
                self.flush_paragraph();
                self.gap = true;
            }
            _ => {}
        }
    }
}
