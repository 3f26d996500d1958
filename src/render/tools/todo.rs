//! `todowrite`/`todoread` as a checklist; `question` with its answers.

use serde_json::Value;

use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::tools::{Body, ToolRenderer, ToolView};

pub struct Todos;

pub fn checklist(todos: &[Value], v: &ToolView, out: &mut Body) {
    for t in todos {
        let status = t.get("status").and_then(Value::as_str).unwrap_or("pending");
        let (mark, role) = match status {
            "completed" => ("[x]", Role::Success),
            "in_progress" => ("[>]", Role::Running),
            "cancelled" => ("[-]", Role::Muted),
            _ => ("[ ]", Role::Text),
        };
        let prio = match t.get("priority").and_then(Value::as_str) {
            Some("high") => "!",
            _ => " ",
        };
        let content =
            sanitize::line(t.get("content").and_then(Value::as_str).unwrap_or("")).into_owned();
        let text_role = if status == "cancelled" {
            Role::Muted
        } else {
            Role::Text
        };
        // A long todo wraps under its text, never cut at the edge.
        out.spans(
            &[
                (format!("{prio}{mark} "), v.ctx.theme.style(role)),
                (content, v.ctx.theme.style(text_role)),
            ],
            "     ",
        );
    }
}

fn todos<'a>(v: &'a ToolView) -> &'a [Value] {
    v.input
        .get("todos")
        .or_else(|| v.metadata.get("todos"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

impl ToolRenderer for Todos {
    fn names(&self) -> &'static [&'static str] {
        &["todowrite", "todoread"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let list = todos(v);
        let done = list
            .iter()
            .filter(|t| t.get("status").and_then(Value::as_str) == Some("completed"))
            .count();
        format!("{done}/{} done", list.len())
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        checklist(todos(v), v, out);
    }
}

pub struct Question;

impl ToolRenderer for Question {
    fn names(&self) -> &'static [&'static str] {
        &["question"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let n = v
            .input
            .get("questions")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        format!("{n} question{}", if n == 1 { "" } else { "s" })
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        let questions = v
            .input
            .get("questions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let answers = v
            .metadata
            .get("answers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, q) in questions.iter().enumerate() {
            let header = q.get("header").and_then(Value::as_str).unwrap_or("");
            let text = q.get("question").and_then(Value::as_str).unwrap_or("");
            let head = if header.is_empty() {
                text.to_string()
            } else {
                format!("{header}: {text}")
            };
            out.text(&head, Role::Text);
            let given: Vec<String> = answers
                .get(i)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            if given.is_empty() {
                out.text("  (no answer)", Role::Muted);
            } else {
                out.text(&format!("  → {}", given.join(", ")), Role::Success);
            }
        }
    }
}
