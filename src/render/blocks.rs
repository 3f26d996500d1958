//! Blocks of the turn view: a message header or one part, rendered to lines
//! at a width. Every string from the data goes through the sanitizer here.

use std::cell::Cell;
use std::collections::HashSet;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::model::entity::part::PartBody;
use crate::model::wire::sanitize;
use crate::model::{Message, Part, Store};
use crate::render::format;
use crate::render::highlight::{Highlighter, Recording};
use crate::render::markdown::{self, MdCtx};
use crate::render::theme::{Role, Theme};
use crate::render::wrap;

/// How much of each card shows by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Headers only.
    Compact,
    /// Headers and trimmed bodies.
    #[default]
    Normal,
    /// Everything, untrimmed, hidden parts too.
    Full,
}

impl Detail {
    pub fn next(self) -> Detail {
        match self {
            Detail::Compact => Detail::Normal,
            Detail::Normal => Detail::Full,
            Detail::Full => Detail::Compact,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Detail::Compact => "compact",
            Detail::Normal => "normal",
            Detail::Full => "full",
        }
    }

    /// The level and what it shows, for the status line.
    pub fn describe(self) -> &'static str {
        match self {
            Detail::Compact => "compact (cards folded to their headers)",
            Detail::Normal => "normal (cards with trimmed bodies)",
            Detail::Full => "full (everything, untrimmed)",
        }
    }
}

/// What rendering needs besides the part itself.
pub struct RenderCtx<'a> {
    pub theme: &'a Theme,
    pub width: u16,
    /// The session's directory: absolute paths under it are shown relative.
    pub directory: Option<&'a str>,
    pub highlighter: &'a Highlighter,
    /// Tool call ids a pending permission or question names.
    pub awaiting: &'a HashSet<String>,
    /// The clock for running tools' elapsed time and spinners.
    pub now_ms: i64,
    pub detail: Detail,
    /// For cards that show another session (a task's subagent).
    pub store: Option<&'a Store>,
    /// Set while rendering when a code block's colours were not ready.
    pub pending_highlight: Cell<bool>,
    /// Show each message's wall-clock time; the moment that counts as
    /// today (the clock of the source).
    pub wall_clock: Option<i64>,
    /// The source will tell nothing more (a replay that ended): a tool
    /// still running is left unfinished.
    pub ended: bool,
}

/// Left margin of message content.
pub const MARGIN: &str = "  ";

impl RenderCtx<'_> {
    fn style(&self, role: Role) -> Style {
        self.theme.style(role)
    }

    fn inner_width(&self) -> usize {
        (self.width as usize).saturating_sub(MARGIN.len()).max(1)
    }

    /// Wrap untrusted text in one style, with the content margin.
    fn paragraph(&self, text: &str, role: Role) -> Vec<Line<'static>> {
        let clean = sanitize::block(text);
        let style = self.style(role);
        let mut out = Vec::new();
        for line in wrap::wrap_text(&clean, style, self.inner_width(), "") {
            out.push(indent(line));
        }
        out
    }

    /// One line of untrusted text, paths under the session directory shortened.
    pub fn short(&self, text: &str) -> String {
        self.relative(&sanitize::line(text))
    }

    /// Paths under the session directory shown relative to it.
    pub fn relative(&self, text: &str) -> String {
        match self.directory.filter(|d| d.len() > 1) {
            Some(dir) => text.replace(&format!("{}/", dir.trim_end_matches('/')), ""),
            None => text.to_string(),
        }
    }

    /// Markdown at the content width, with the content margin.
    pub fn markdown(&self, src: &str, role: Role) -> Vec<Line<'static>> {
        let md = MdCtx {
            theme: self.theme,
            width: self.inner_width(),
            base_dir: self.directory,
            text_role: role,
        };
        let mut hl = Recording {
            highlighter: self.highlighter,
            pending: false,
        };
        let lines = markdown::render(src, &md, &mut hl);
        if hl.pending {
            self.pending_highlight.set(true);
        }
        lines.into_iter().map(indent).collect()
    }
}

fn indent(mut line: Line<'static>) -> Line<'static> {
    line.spans.insert(0, Span::raw(MARGIN));
    line
}

/// The header line(s) of a message.
pub fn message_header(message: &Message, ctx: &RenderCtx) -> Vec<Line<'static>> {
    let info = &message.info;
    let mut out = Vec::new();
    if info.is_user() {
        out.push(Line::default());
        let mut spans = vec![Span::styled("▌ You", ctx.style(Role::User))];
        if let Some(agent) = &info.agent {
            spans.push(Span::styled(
                format!("  → {}", sanitize::line(agent)),
                ctx.style(Role::Muted),
            ));
        }
        spans.extend(wall_clock_span(ctx, info.created));
        out.push(Line::from(spans));
    } else if !info.is_assistant() && !message.placeholder {
        // A role missing or unknown to this version: neutral, named as the
        // record claims it, never in the assistant's look.
        out.push(Line::default());
        let mut spans = vec![Span::styled(
            format!("▌ {}", sanitize::line(info.role.label())),
            ctx.style(Role::Muted),
        )];
        spans.extend(wall_clock_span(ctx, info.created));
        out.push(Line::from(spans));
    } else {
        let mut label = info
            .agent
            .clone()
            .or_else(|| info.mode.clone())
            .unwrap_or_else(|| "assistant".into());
        if let Some(model) = &info.model {
            label = format!("{label} · {}", model.model_id);
        }
        let mut spans = vec![Span::styled(
            format!("◆ {}", sanitize::line(&label)),
            ctx.style(Role::Assistant),
        )];
        let mut meta = Vec::new();
        if let (Some(a), Some(b)) = (info.created, info.completed) {
            meta.push(format::duration(b - a));
        }
        if let (Some(today), Some(at)) = (ctx.wall_clock, info.created) {
            meta.push(crate::render::clock::wall_clock(at, today));
        }
        let c = format::cost(info.cost);
        if !c.is_empty() {
            meta.push(c);
        }
        if !meta.is_empty() {
            spans.push(Span::styled(
                format!("  {}", meta.join(" · ")),
                ctx.style(Role::Muted),
            ));
        }
        out.push(Line::from(spans));
    }
    if let Some(err) = &info.error {
        out.extend(error_box(&err.summary(), ctx));
    }
    out
}

/// An error in a box, so it cannot be mistaken for output.
/// "  14:02:11" after a message's label, when wall-clock times are on.
fn wall_clock_span(ctx: &RenderCtx, created: Option<i64>) -> Option<Span<'static>> {
    let (today, at) = (ctx.wall_clock?, created?);
    Some(Span::styled(
        format!("  {}", crate::render::clock::wall_clock(at, today)),
        ctx.style(Role::Muted),
    ))
}

fn error_box(text: &str, ctx: &RenderCtx) -> Vec<Line<'static>> {
    let style = ctx.style(Role::Error);
    let inner = ctx.inner_width().saturating_sub(4).max(4);
    let lines = wrap::wrap_text(&sanitize::block(text), style, inner, "");
    let w = lines.iter().map(|l| l.width()).max().unwrap_or(0);
    let mut out = vec![Line::styled(
        format!("{MARGIN}╭─ error {}╮", "─".repeat(w.saturating_sub(6))),
        style,
    )];
    for l in lines {
        let pad = w.saturating_sub(l.width());
        let mut spans = vec![Span::styled(format!("{MARGIN}│ "), style)];
        spans.extend(l.spans);
        spans.push(Span::styled(format!("{} │", " ".repeat(pad)), style));
        out.push(Line::from(spans));
    }
    out.push(Line::styled(
        format!("{MARGIN}╰{}╯", "─".repeat(w + 2)),
        style,
    ));
    out
}

/// Whether a part is a card that folds (tools and reasoning).
pub fn is_card(part: &Part) -> bool {
    matches!(part.body, PartBody::Tool(_) | PartBody::Reasoning(_))
}

/// Whether a card starts unfolded at a detail level.
pub fn expanded_by_default(part: &Part, collapse_reasoning: bool, detail: Detail) -> bool {
    match (&part.body, detail) {
        (_, Detail::Full) => true,
        (_, Detail::Compact) => false,
        (PartBody::Reasoning(_), _) => !collapse_reasoning,
        _ => true,
    }
}

/// Lines for one part. Hidden parts render to no lines at all.
pub fn part_lines(part: &Part, expanded: bool, full: bool, ctx: &RenderCtx) -> Vec<Line<'static>> {
    match &part.body {
        PartBody::Text(t) => {
            if t.text.trim().is_empty() {
                return Vec::new();
            }
            ctx.markdown(t.text.trim_end(), text_role(t))
        }
        PartBody::Reasoning(r) => reasoning(&r.text, expanded, ctx),
        PartBody::Tool(tool) => crate::render::tools::card(part, tool, expanded, full, ctx),
        PartBody::StepStart(_) => Vec::new(),
        PartBody::Snapshot(s) => {
            if ctx.detail != Detail::Full {
                return Vec::new();
            }
            let id = s.snapshot.as_deref().unwrap_or("");
            vec![one_line(
                format!("  ◇ snapshot {}", sanitize::line(id)),
                ctx.style(Role::Muted),
                ctx,
            )]
        }
        PartBody::StepFinish(s) => {
            let mut bits = vec![format!("{} tokens", format::tokens(s.tokens.sum()))];
            let c = format::cost(s.cost);
            if !c.is_empty() {
                bits.push(c);
            }
            if !s.reason.is_empty() {
                bits.push(sanitize::line(&s.reason).into_owned());
            }
            vec![one_line(
                format!("  ─ {}", bits.join(" · ")),
                ctx.style(Role::Muted),
                ctx,
            )]
        }
        PartBody::File(f) => {
            let name = f.filename.clone().unwrap_or_else(|| f.url.clone());
            vec![one_line(
                format!("  📎 {} ({})", ctx.short(&name), sanitize::line(&f.mime)),
                ctx.style(Role::Accent),
                ctx,
            )]
        }
        PartBody::Agent(a) => vec![one_line(
            format!("  @{}", sanitize::line(&a.name)),
            ctx.style(Role::Accent),
            ctx,
        )],
        PartBody::Subtask(s) => {
            let text = format!("  ↳ subtask for @{}: {}", s.agent, s.description);
            vec![one_line(
                sanitize::line(&text).into_owned(),
                ctx.style(Role::Tool),
                ctx,
            )]
        }
        PartBody::Patch(p) => {
            let files: Vec<String> = p.files.iter().map(|f| ctx.short(f)).collect();
            let text = format!(
                "  ± {} file{} changed: {}",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                files.join(", ")
            );
            ctx.paragraph(text.trim_start(), Role::Muted)
        }
        PartBody::Retry(r) => {
            let attempt = r
                .attempt
                .map(|a| format!(" attempt {a}"))
                .unwrap_or_default();
            let err = r.error.as_ref().map(|e| e.summary()).unwrap_or_default();
            ctx.paragraph(&format!("↻ retry{attempt}: {err}"), Role::Warning)
        }
        PartBody::Compaction(c) => {
            let label = if c.auto {
                " context compacted (auto) "
            } else {
                " context compacted "
            };
            let w = ctx.width as usize;
            let side = w.saturating_sub(label.len()) / 2;
            vec![Line::styled(
                format!("{}{label}{}", "─".repeat(side), "─".repeat(side)),
                ctx.style(Role::Muted),
            )]
        }
        PartBody::Unknown { kind } => {
            let preview = wrap::truncate(part.raw.get(), 200);
            ctx.paragraph(&format!("? {kind} part: {preview}"), Role::Muted)
        }
    }
}

fn one_line(text: String, style: Style, ctx: &RenderCtx) -> Line<'static> {
    Line::styled(wrap::truncate(&text, ctx.width as usize), style)
}

/// The one-line summary of reasoning: its first bold title, else its first line.
pub fn reasoning_summary(text: &str) -> String {
    let bold = text
        .split("**")
        .nth(1)
        .filter(|t| !t.trim().is_empty() && !t.contains('\n'));
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    sanitize::line(bold.unwrap_or(first).trim()).into_owned()
}

/// The style of a text part: synthetic and ignored text is muted.
pub fn text_role(t: &crate::model::entity::part::TextPart) -> Role {
    if t.synthetic || t.ignored {
        Role::Muted
    } else {
        Role::Text
    }
}

fn reasoning(text: &str, expanded: bool, ctx: &RenderCtx) -> Vec<Line<'static>> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let marker = if expanded { "▾" } else { "▸" };
    let head = format!("{MARGIN}{marker} Thinking: {}", reasoning_summary(text));
    let mut out = vec![one_line(head, ctx.style(Role::Reasoning), ctx)];
    if expanded {
        out.extend(ctx.markdown(text.trim(), Role::Reasoning));
    }
    out
}

/// A one-line summary of a tool's input: its most telling field.
pub fn input_summary(part: &Part) -> String {
    let input = part
        .tool_state_field("input")
        .unwrap_or(serde_json::Value::Null);
    for key in [
        "command",
        "filePath",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ] {
        if let Some(v) = input.get(key).and_then(|v| v.as_str()) {
            return v.lines().next().unwrap_or("").to_string();
        }
    }
    // An input with nothing to show (a task stored with its input empty):
    // the part's title says what the call was.
    match part.tool() {
        Some(t) if is_empty_input(&input) => t.state.title.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// An input that holds nothing: missing, null, `{}`, or only empty strings.
pub fn is_empty_input(input: &serde_json::Value) -> bool {
    match input {
        serde_json::Value::Null => true,
        serde_json::Value::Object(map) => map.values().all(|v| match v {
            serde_json::Value::String(s) => s.trim().is_empty(),
            serde_json::Value::Null => true,
            _ => false,
        }),
        _ => false,
    }
}
