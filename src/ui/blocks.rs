//! Blocks of the turn view: a message header or one part, rendered to lines
//! at a width. Every string from the data goes through the sanitizer here.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::format;
use super::theme::{Role, Theme};
use super::wrap;
use crate::model::part::{PartBody, ToolPart};
use crate::model::{Message, Part, ToolStatus};
use crate::sanitize;

/// What rendering needs besides the part itself.
pub struct RenderCtx<'a> {
    pub theme: &'a Theme,
    pub width: u16,
    /// The session's directory: absolute paths under it are shown relative.
    pub directory: Option<&'a str>,
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

    fn short(&self, text: &str) -> String {
        let mut s = sanitize::line(text).into_owned();
        if let Some(dir) = self.directory.filter(|d| !d.is_empty()) {
            let prefix = format!("{}/", dir.trim_end_matches('/'));
            s = s.replace(&prefix, "");
        }
        s
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
        let text = format!("✗ {}", err.summary());
        out.extend(ctx.paragraph(&text, Role::Error));
    }
    out
}

/// Whether a part is a card that folds (tools and reasoning).
pub fn is_card(part: &Part) -> bool {
    matches!(part.body, PartBody::Tool(_) | PartBody::Reasoning(_))
}

/// Whether a card starts unfolded.
pub fn expanded_by_default(part: &Part, collapse_reasoning: bool) -> bool {
    match &part.body {
        PartBody::Reasoning(_) => !collapse_reasoning,
        _ => true,
    }
}

/// Lines for one part. Hidden parts render to no lines at all.
pub fn part_lines(part: &Part, expanded: bool, ctx: &RenderCtx) -> Vec<Line<'static>> {
    match &part.body {
        PartBody::Text(t) => {
            if t.text.trim().is_empty() {
                return Vec::new();
            }
            let role = if t.synthetic || t.ignored {
                Role::Muted
            } else {
                Role::Text
            };
            ctx.paragraph(t.text.trim_end(), role)
        }
        PartBody::Reasoning(r) => reasoning(&r.text, expanded, ctx),
        PartBody::Tool(tool) => tool_card(part, tool, expanded, ctx),
        PartBody::StepStart(_) | PartBody::Snapshot(_) => Vec::new(),
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

fn reasoning(text: &str, expanded: bool, ctx: &RenderCtx) -> Vec<Line<'static>> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let marker = if expanded { "▾" } else { "▸" };
    let head = format!("{MARGIN}{marker} Thinking: {}", reasoning_summary(text));
    let mut out = vec![one_line(head, ctx.style(Role::Reasoning), ctx)];
    if expanded {
        out.extend(ctx.paragraph(text.trim(), Role::Reasoning));
    }
    out
}

/// Glyph and role of a tool state.
pub fn tool_status_look(status: &ToolStatus) -> (&'static str, Role) {
    match status {
        ToolStatus::Pending | ToolStatus::Other(_) => ("○", Role::Muted),
        ToolStatus::Running => ("◐", Role::Running),
        ToolStatus::Completed => ("✓", Role::Success),
        ToolStatus::Error => ("✗", Role::Error),
    }
}

/// Most lines of tool output shown before "… N more lines".
const OUTPUT_HEAD: usize = 6;
const OUTPUT_TAIL: usize = 3;

fn tool_card(part: &Part, tool: &ToolPart, expanded: bool, ctx: &RenderCtx) -> Vec<Line<'static>> {
    let (glyph, role) = tool_status_look(&tool.state.status);
    let marker = if expanded { "▾" } else { "▸" };
    let subject = tool
        .state
        .title
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| input_summary(part));
    let mut spans = vec![
        Span::raw(MARGIN),
        Span::styled(format!("{glyph} "), ctx.style(role)),
        Span::styled(
            format!("{marker} {}", sanitize::line(&tool.tool)),
            ctx.style(Role::Tool),
        ),
    ];
    let mut tail = String::new();
    if !subject.is_empty() {
        tail.push_str("  ");
        tail.push_str(&ctx.short(&subject));
    }
    if let (Some(a), Some(b)) = (tool.state.time.start, tool.state.time.end)
        && b >= a
        && a > 0
    {
        tail.push_str(&format!("  {}", format::duration(b - a)));
    }
    let used: usize = spans.iter().map(|s| wrap::width(&s.content)).sum();
    spans.push(Span::styled(
        wrap::truncate(&tail, (ctx.width as usize).saturating_sub(used)),
        ctx.style(Role::Muted),
    ));
    let mut out = vec![Line::from(spans)];
    if !expanded {
        return out;
    }
    if tool.state.status == ToolStatus::Error
        && let Some(err) = &tool.state.error
    {
        out.extend(ctx.paragraph(&format!("  {}", err.trim()), Role::Error));
    }
    if let Some(output) = tool
        .state
        .output
        .as_deref()
        .filter(|o| !o.trim().is_empty())
    {
        let clean = sanitize::block(output.trim_end());
        let lines: Vec<&str> = clean.lines().collect();
        let total = lines.len();
        let row = |l: &str| {
            let text = format!("{MARGIN}  │ {}", ctx.short(l));
            Line::styled(
                wrap::truncate(&text, ctx.width as usize),
                ctx.style(Role::Muted),
            )
        };
        if total > OUTPUT_HEAD + OUTPUT_TAIL + 1 {
            out.extend(lines[..OUTPUT_HEAD].iter().map(|l| row(l)));
            let hidden = total - OUTPUT_HEAD - OUTPUT_TAIL;
            out.push(Line::styled(
                format!("{MARGIN}  … {hidden} more lines"),
                ctx.style(Role::Muted),
            ));
            out.extend(lines[total - OUTPUT_TAIL..].iter().map(|l| row(l)));
        } else {
            out.extend(lines.iter().map(|l| row(l)));
        }
    }
    out
}

/// A one-line summary of a tool's input: its most telling field.
pub fn input_summary(part: &Part) -> String {
    let Some(input) = part.tool_state_field("input") else {
        return String::new();
    };
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
    String::new()
}
