//! `task`: a subagent's work. While it runs, the child session's current
//! tool; when done, how many tools it used and how long it took. Enter on
//! the card opens the child session.

use ratatui::text::Line;

use crate::model::{PartBody, Session, ToolStatus};
use crate::render::format;
use crate::render::theme::Role;
use crate::render::tools::{Body, ToolRenderer, ToolView};

pub struct Task;

/// What a child session is doing, for its task card.
pub fn child_activity(child: &Session) -> (usize, Option<String>) {
    let mut tools = 0;
    let mut current = None;
    for m in &child.messages {
        for p in &m.parts {
            if let PartBody::Tool(t) = &p.body {
                tools += 1;
                if matches!(t.state.status, ToolStatus::Running | ToolStatus::Pending) {
                    let subject = crate::render::blocks::input_summary(p);
                    current = Some(format!("{} {subject}", t.tool).trim().to_string());
                }
            }
        }
    }
    (tools, current)
}

impl ToolRenderer for Task {
    fn names(&self) -> &'static [&'static str] {
        &["task"]
    }

    fn subject(&self, v: &ToolView) -> String {
        if crate::render::blocks::is_empty_input(&v.input) {
            // Stored with its input empty: the part's title says what it was.
            return v.tool.state.title.clone().unwrap_or_default();
        }
        let agent = v.input_str("subagent_type").unwrap_or("agent");
        let desc = v.input_str("description").unwrap_or("");
        format!("@{agent}: {desc}")
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        let child = v
            .meta_str("sessionId")
            .map(|id| crate::model::store::fleet::like(&v.part.session_id, id))
            .and_then(|id| v.ctx.store.and_then(|s| s.session(&id)));
        if let Some(child) = child {
            let (tools, current) = child_activity(child);
            let muted = v.ctx.theme.style(Role::Muted);
            let unfinished = crate::render::tools::left_unfinished(v.part, v.ctx);
            match (&v.tool.state.status, current) {
                (ToolStatus::Running, Some(cur)) if !unfinished => out.line(Line::styled(
                    format!("now: {cur}"),
                    v.ctx.theme.style(Role::Running),
                )),
                _ => {
                    let took = match (v.tool.state.time.start, v.tool.state.time.end) {
                        (Some(a), Some(b)) if b >= a => format!(" in {}", format::duration(b - a)),
                        _ => String::new(),
                    };
                    out.line(Line::styled(
                        format!(
                            "{tools} tool call{}{took}",
                            if tools == 1 { "" } else { "s" }
                        ),
                        muted,
                    ));
                }
            }
            out.line(Line::styled("enter opens the subagent's session", muted));
        }
        if let Some(o) = v.output() {
            let result = o
                .split_once("<task_result>")
                .and_then(|(_, r)| r.split_once("</task_result>"))
                .map(|(r, _)| r.trim())
                .unwrap_or(o);
            out.text(result, Role::Text);
        }
    }
}
