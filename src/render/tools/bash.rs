//! `bash`: description, `$ command`, output (ANSI colours kept), exit code.

use ratatui::text::Line;

use crate::render::theme::Role;
use crate::render::tools::{Body, ToolRenderer, ToolView};

pub struct Bash;

impl ToolRenderer for Bash {
    fn names(&self) -> &'static [&'static str] {
        &["bash"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let cmd = v.input_str("command").unwrap_or("");
        let first = cmd.lines().next().unwrap_or("");
        v.input_str("description")
            .filter(|d| !d.is_empty() && cmd.is_empty())
            .unwrap_or(first)
            .to_string()
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(d) = v.input_str("description") {
            out.text(d, Role::Muted);
        }
        if let Some(cmd) = v.input_str("command") {
            out.command(cmd);
        }
        // Streamed while running (metadata.output), final when done.
        let output = v.output().or_else(|| v.meta_str("output")).unwrap_or("");
        out.output(output);
        if let Some(code) = v.metadata.get("exit").and_then(|e| e.as_i64()) {
            let role = if code == 0 { Role::Muted } else { Role::Error };
            out.line(Line::styled(
                format!("exit {code}"),
                v.ctx.theme.style(role),
            ));
        }
    }
}
