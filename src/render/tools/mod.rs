//! Tool cards. Each tool has a renderer in this folder, found by name in
//! `REGISTRY`; a new tool is one new file and one line there. The card's
//! frame (state glyph, name, subject, timing, error) is common to all.

mod bash;
pub mod body;
mod files;
mod generic;
mod search;
mod task;
mod todo;

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::model::entity::part::ToolPart;
use crate::model::wire::sanitize;
use crate::model::{Part, ToolStatus};
use crate::render::blocks::{MARGIN, RenderCtx};
use crate::render::format;
use crate::render::theme::Role;
use crate::render::wrap;
pub use body::Body;
pub use files::lang_of;

/// What a renderer sees of one tool part.
pub struct ToolView<'a> {
    pub part: &'a Part,
    pub tool: &'a ToolPart,
    pub input: Value,
    pub metadata: Value,
    pub ctx: &'a RenderCtx<'a>,
    /// Show everything, untrimmed.
    pub full: bool,
}

impl ToolView<'_> {
    pub fn input_str(&self, key: &str) -> Option<&str> {
        self.input.get(key).and_then(Value::as_str)
    }

    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    /// A path shown relative to the session directory.
    pub fn path(&self, p: &str) -> String {
        self.ctx.short(p)
    }

    pub fn output(&self) -> Option<&str> {
        self.tool.state.output.as_deref().filter(|o| !o.is_empty())
    }
}

pub trait ToolRenderer: Sync {
    fn names(&self) -> &'static [&'static str];
    /// The header's subject: a command, a path, a pattern.
    fn subject(&self, v: &ToolView) -> String;
    /// The card's body when unfolded.
    fn body(&self, v: &ToolView, out: &mut Body);
}

static REGISTRY: &[&dyn ToolRenderer] = &[
    &bash::Bash,
    &files::Read,
    &files::Write,
    &files::Edit,
    &files::ApplyPatch,
    &search::Glob,
    &search::Grep,
    &search::List,
    &search::WebFetch,
    &search::WebSearch,
    &task::Task,
    &todo::Todos,
    &todo::Question,
    &generic::Skill,
];

pub fn renderer_for(name: &str) -> &'static dyn ToolRenderer {
    REGISTRY
        .iter()
        .copied()
        .find(|r| r.names().contains(&name))
        .unwrap_or(&generic::Generic)
}

/// How a finished tool ended, beyond completed/error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Completed,
    Failed,
    /// The user said no to its permission or question.
    Rejected,
    /// The session was aborted while it ran.
    Aborted,
}

pub fn ending(tool: &ToolPart, metadata: &Value) -> Option<Ending> {
    match tool.state.status {
        ToolStatus::Completed => Some(Ending::Completed),
        ToolStatus::Error => {
            let err = tool.state.error.as_deref().unwrap_or("");
            Some(
                if err.starts_with("The user rejected") || err.starts_with("The user dismissed") {
                    Ending::Rejected
                } else if err.contains("aborted")
                    || metadata.get("interrupted") == Some(&Value::Bool(true))
                {
                    Ending::Aborted
                } else {
                    Ending::Failed
                },
            )
        }
        _ => None,
    }
}

/// The label of a tool left unfinished.
pub const UNFINISHED: &str = "unfinished";

/// Whether a tool card is of a tool still pending or running that will
/// never finish (`Session::left_unfinished`): drawn so, without a spinner.
pub fn left_unfinished(part: &Part, ctx: &RenderCtx) -> bool {
    if part.tool().is_none_or(|t| t.state.status.is_terminal()) {
        return false;
    }
    if ctx.ended {
        return true;
    }
    let Some(session) = ctx.store.and_then(|s| s.session(&part.session_id)) else {
        return false;
    };
    let Some(message) = session.message(&part.message_id) else {
        return false;
    };
    message
        .part_index(&part.id)
        .is_ok_and(|pi| session.left_unfinished(message, pi, false))
}

/// The card's lines: a header, and the body unless folded.
pub fn card(
    part: &Part,
    tool: &ToolPart,
    expanded: bool,
    full: bool,
    ctx: &RenderCtx,
) -> Vec<Line<'static>> {
    let input = part.tool_state_field("input").unwrap_or(Value::Null);
    let metadata = part.tool_state_field("metadata").unwrap_or(Value::Null);
    let end = ending(tool, &metadata);
    let view = ToolView {
        part,
        tool,
        input,
        metadata,
        ctx,
        full,
    };
    let renderer = renderer_for(&tool.tool);

    let awaiting = ctx.awaiting.contains(&tool.call_id);
    let unfinished = left_unfinished(part, ctx);
    let (glyph, role, label): (String, Role, String) = match (&tool.state.status, end) {
        (_, None) if unfinished => ("◌".into(), Role::Warning, UNFINISHED.into()),
        (_, Some(Ending::Completed)) => ("✓".into(), Role::Success, String::new()),
        (_, Some(Ending::Rejected)) => ("⊘".into(), Role::Warning, "rejected".into()),
        (_, Some(Ending::Aborted)) => ("◌".into(), Role::Muted, "aborted".into()),
        (_, Some(Ending::Failed)) => ("✗".into(), Role::Error, "failed".into()),
        (ToolStatus::Running, None) if awaiting => {
            ("?".into(), Role::Warning, "awaiting permission".into())
        }
        (ToolStatus::Running, None) => (
            format::spinner(ctx.now_ms).into(),
            Role::Running,
            "running".into(),
        ),
        (_, None) if awaiting => ("?".into(), Role::Warning, "awaiting permission".into()),
        _ => ("○".into(), Role::Muted, "pending".into()),
    };
    let timing = match (tool.state.time.start, tool.state.time.end) {
        (Some(a), Some(b)) if b >= a && a > 0 => format::duration(b - a),
        // A tool left unfinished is not timed on: it is not running.
        (Some(a), None) if a > 0 && ctx.now_ms > a && !unfinished => {
            format::duration(ctx.now_ms - a)
        }
        _ => String::new(),
    };
    let marker = if expanded { "▾" } else { "▸" };
    let mut spans = vec![
        Span::raw(MARGIN),
        Span::styled(format!("{glyph} "), ctx.theme.style(role)),
        Span::styled(
            format!("{marker} {}", sanitize::line(&tool.tool)),
            ctx.theme.style(Role::Tool),
        ),
    ];
    let mut tail = String::new();
    let subject = renderer.subject(&view);
    if !subject.is_empty() {
        tail.push_str("  ");
        tail.push_str(&ctx.short(&subject));
    }
    let mut status = Vec::new();
    if !label.is_empty() && label != "running" {
        status.push(label.clone());
    }
    if !timing.is_empty() {
        status.push(timing);
    }
    let status = if status.is_empty() {
        String::new()
    } else {
        format!("  {}", status.join(" · "))
    };
    let used: usize = spans.iter().map(|s| wrap::width(&s.content)).sum();
    let room = (ctx.width as usize).saturating_sub(used + wrap::width(&status));
    spans.push(Span::styled(
        wrap::truncate(&tail, room),
        ctx.theme.style(Role::Muted),
    ));
    spans.push(Span::styled(status, ctx.theme.style(role)));
    let mut out = vec![Line::from(spans)];
    if !expanded {
        return out;
    }
    let mut body = Body::new(ctx, full);
    renderer.body(&view, &mut body);
    if let Some(err) = tool.state.error.as_deref().filter(|e| !e.trim().is_empty()) {
        let r = match end {
            Some(Ending::Rejected) => Role::Warning,
            Some(Ending::Aborted) => Role::Muted,
            _ => Role::Error,
        };
        body.text(err.trim(), r);
    }
    out.extend(body.into_lines());
    out
}
