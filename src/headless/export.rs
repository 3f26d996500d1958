//! `ocview export`: a session as readable Markdown (text, optional
//! reasoning, tool calls with their inputs and trimmed outputs, todos and
//! diffs) or as normalised JSON (the session, its messages and parts as the
//! server shapes them).

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::model::entity::totals::Totals;
use crate::model::wire::sanitize;
use crate::model::{FileDiff, Message, PartBody, Session, Store, ToolStatus};

/// Lines of tool output kept in Markdown before "… N more lines".
const OUTPUT_LINES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// The sessions to export: the one asked for, or every session in reading
/// order (oldest root first, each followed by its subagents' sessions).
pub fn pick<'a>(store: &'a Store, session: Option<&str>) -> Result<Vec<&'a Session>, String> {
    match session {
        Some(id) => store
            .session(id)
            .map(|s| vec![s])
            .ok_or_else(|| format!("no session {id} in this source")),
        None => Ok(reading_order(store)),
    }
}

fn reading_order(store: &Store) -> Vec<&Session> {
    let mut out: Vec<&Session> = Vec::with_capacity(store.sessions().len());
    let mut seen = std::collections::HashSet::new();
    // Depth first, oldest first (the store keeps newest first).
    let mut stack: Vec<&Session> = store.root_sessions().collect();
    while let Some(s) = stack.pop() {
        if !seen.insert(s.info.id.as_str()) {
            continue;
        }
        out.push(s);
        stack.extend(store.children(&s.info.id));
    }
    // Sessions whose parents form a loop (bad input) have no root: still
    // exported, after the rest.
    out.extend(
        store
            .sessions()
            .iter()
            .rev()
            .map(|s| &**s)
            .filter(|s| !seen.contains(s.info.id.as_str())),
    );
    out
}

pub fn render(sessions: &[&Session], format: ExportFormat, reasoning: bool) -> String {
    match format {
        ExportFormat::Markdown => sessions
            .iter()
            .map(|s| markdown(s, reasoning))
            .collect::<Vec<_>>()
            .join("\n---\n\n"),
        ExportFormat::Json => {
            let list: Vec<Value> = sessions.iter().map(|s| normalised(s)).collect();
            let v = if list.len() == 1 {
                list.into_iter().next().unwrap_or(Value::Null)
            } else {
                Value::Array(list)
            };
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            sanitize::json(&text).into_owned() + "\n"
        }
    }
}

/// `{info, messages: [{info, parts}]}`, the shape `opencode export` uses,
/// with streamed text folded into its parts and todos alongside.
pub fn normalised(s: &Session) -> Value {
    let mut out = session_value(s, &s.totals());
    out["messages"] = Value::Array(s.messages.iter().map(message_value).collect());
    out
}

/// One message of [`normalised`]'s `messages`: `{info, parts}`.
pub fn message_value(m: &Message) -> Value {
    let info = m
        .info
        .raw
        .as_ref()
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_else(|| json!({"id": m.info.id}));
    // Stream-only parts are ours, not the server's: the todos go alongside.
    let parts: Vec<Value> = m
        .parts
        .iter()
        .filter(|p| !p.is_stream_only())
        .map(|p| p.to_value())
        .collect();
    json!({"info": info, "parts": parts})
}

/// [`normalised`] without its `messages` (an empty list), with `totals`
/// as the session's totals: a page-by-page export writes the messages
/// itself.
pub fn session_value(s: &Session, totals: &Totals) -> Value {
    let info = s
        .info
        .raw
        .as_ref()
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_else(|| json!({"id": s.info.id, "title": s.info.title}));
    let todos: Vec<Value> = s
        .todos
        .iter()
        .map(|t| json!({"content": t.content, "status": t.status.label(), "priority": t.priority}))
        .collect();
    let mut out = json!({"info": info, "messages": [], "todos": todos});
    // The session's own errors (`session.error`), which no message holds.
    let errors: Vec<Value> = errors_of(s)
        .map(|e| {
            e.raw
                .as_ref()
                .and_then(|r| serde_json::from_str(r.get()).ok())
                .unwrap_or_else(|| json!({"name": e.name, "data": {"message": e.message}}))
        })
        .collect();
    if !errors.is_empty() {
        out["errors"] = Value::Array(errors);
    }
    // Figures the record lacks, summed from its messages and marked so.
    let t = totals;
    if t.cost_summed || t.tokens_summed {
        let tokens = &t.tokens;
        out["totals"] = json!({
            "cost": t.cost,
            "tokens": {
                "total": t.token_count(),
                "input": tokens.input,
                "output": tokens.output,
                "reasoning": tokens.reasoning,
                "cache": {"read": tokens.cache.read, "write": tokens.cache.write},
            },
            "summed": {"cost": t.cost_summed, "tokens": t.tokens_summed},
        });
    }
    out
}

/// A session's errors: every distinct one, or the latest when only that
/// is known.
fn errors_of(s: &Session) -> impl Iterator<Item = &crate::model::ErrorInfo> {
    let latest = s.error.as_ref().filter(|_| s.errors.is_empty());
    s.errors.iter().chain(latest)
}

fn fence(text: &str) -> &'static str {
    if text.contains("```") { "~~~~" } else { "```" }
}

pub fn markdown(s: &Session, reasoning: bool) -> String {
    let mut out = String::new();
    markdown_head(&mut out, s, &s.totals());
    for turn in s.turns() {
        markdown_turn(&mut out, s, turn.user, &turn.assistants, reasoning);
    }
    markdown_tail(&mut out, s, s.messages.iter().flat_map(|m| &m.info.diffs));
    out
}

/// The title and the figures, before the turns.
pub fn markdown_head(out: &mut String, s: &Session, totals: &Totals) {
    let _ = writeln!(out, "# {}\n", sanitize::line(s.title()));
    let _ = writeln!(out, "- session: `{}`", sanitize::line(&s.info.id));
    if let Some(d) = &s.info.directory {
        let _ = writeln!(out, "- directory: `{}`", sanitize::line(d));
    }
    let mark = |summed: bool| {
        if summed {
            crate::model::entity::totals::SUMMED_MARK
        } else {
            ""
        }
    };
    if totals.cost > 0.0 {
        let _ = writeln!(
            out,
            "- cost: {}${:.4}",
            mark(totals.cost_summed),
            totals.cost
        );
    }
    if totals.token_count() > 0 {
        let _ = writeln!(
            out,
            "- tokens: {}{}",
            mark(totals.tokens_summed),
            totals.token_count()
        );
    }
    if totals.cost_summed || totals.tokens_summed {
        let _ = writeln!(
            out,
            "- ({} summed from the messages: the record has no totals)",
            crate::model::entity::totals::SUMMED_MARK
        );
    }
    out.push('\n');
}

/// One turn: the user's message, then each assistant message answering it.
pub fn markdown_turn(
    out: &mut String,
    s: &Session,
    user: Option<&Message>,
    assistants: &[&Message],
    reasoning: bool,
) {
    if let Some(user) = user {
        // A message whose role is missing or unknown is named as it is.
        let who = match &user.info.role {
            crate::model::Role::User => "User".to_string(),
            _ if user.placeholder => "Message".to_string(),
            role => format!("Message ({})", sanitize::line(role.label())),
        };
        let _ = writeln!(out, "## {who}\n");
        for p in &user.parts {
            if let Some(t) = p.text().filter(|t| !t.trim().is_empty()) {
                let _ = writeln!(out, "{}\n", sanitize::block(t.trim_end()));
            }
        }
    }
    for m in assistants {
        let who = m.info.agent.clone().unwrap_or_else(|| "assistant".into());
        let _ = writeln!(out, "## Assistant ({})\n", sanitize::line(&who));
        if let Some(e) = &m.info.error {
            let _ = writeln!(out, "> **Error:** {}\n", sanitize::line(&e.summary()));
        }
        // As the viewer shows them: one card per todowrite call.
        for p in crate::model::entity::shown::shown_parts(m) {
            let unfinished = m
                .part_index(&p.id)
                .is_ok_and(|pi| s.left_unfinished(m, pi, true));
            match &p.body {
                PartBody::Text(t) if !t.text.trim().is_empty() => {
                    let _ = writeln!(out, "{}\n", sanitize::block(t.text.trim_end()));
                }
                PartBody::Reasoning(r) if reasoning && !r.text.trim().is_empty() => {
                    for l in sanitize::block(r.text.trim()).lines() {
                        let _ = writeln!(out, "> {l}");
                    }
                    out.push('\n');
                }
                PartBody::Tool(t) => markdown_tool(out, &p, t, unfinished),
                _ => {}
            }
        }
    }
}

/// A tool call: its status, its input (each field's first line), and its
/// output or error, at most `OUTPUT_LINES` lines.
fn markdown_tool(
    out: &mut String,
    p: &crate::model::Part,
    t: &crate::model::entity::part::ToolPart,
    unfinished: bool,
) {
    let status = match t.state.status {
        ToolStatus::Completed => "completed".to_string(),
        ToolStatus::Error => "error".to_string(),
        _ if unfinished => format!(
            "{}, {}",
            t.state.status.label(),
            crate::render::tools::UNFINISHED
        ),
        _ => t.state.status.label().to_string(),
    };
    let _ = writeln!(out, "**Tool `{}`** ({status})\n", sanitize::line(&t.tool));
    let input = p.tool_state_field("input").unwrap_or(Value::Null);
    if crate::render::blocks::is_empty_input(&input)
        && let Some(title) = t.state.title.as_deref().filter(|t| !t.trim().is_empty())
    {
        let _ = writeln!(out, "- title: `{}`\n", sanitize::line(title));
    }
    if let Value::Object(input) = input {
        for (k, v) in input {
            let v = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            let first = v.lines().next().unwrap_or("");
            let more = if v.lines().count() > 1 { " …" } else { "" };
            let _ = writeln!(
                out,
                "- {}: `{}`{more}",
                sanitize::line(k.as_str()),
                sanitize::line(first).replace('`', "'")
            );
        }
        out.push('\n');
    }
    let body = t
        .state
        .output
        .as_deref()
        .or(t.state.error.as_deref())
        .unwrap_or("");
    if !body.trim().is_empty() {
        let clean = sanitize::block(body.trim_end());
        let lines: Vec<&str> = clean.lines().collect();
        let f = fence(&clean);
        let _ = writeln!(out, "{f}");
        for l in lines.iter().take(OUTPUT_LINES) {
            let _ = writeln!(out, "{l}");
        }
        if lines.len() > OUTPUT_LINES {
            let _ = writeln!(out, "… {} more lines", lines.len() - OUTPUT_LINES);
        }
        let _ = writeln!(out, "{f}\n");
    }
}

/// Todos, the session's errors and its changes, after the turns;
/// `message_diffs` are its messages' diffs in order.
pub fn markdown_tail<'a>(
    out: &mut String,
    s: &'a Session,
    message_diffs: impl Iterator<Item = &'a FileDiff>,
) {
    if !s.todos.is_empty() {
        out.push_str("## Todos\n\n");
        for t in &s.todos {
            let mark = if t.status.label() == "completed" {
                "x"
            } else {
                " "
            };
            let _ = writeln!(
                out,
                "- [{mark}] {} ({})",
                sanitize::line(&t.content),
                t.status.label()
            );
        }
        out.push('\n');
    }
    for e in errors_of(s) {
        let _ = writeln!(
            out,
            "> **Session error:** {}\n",
            sanitize::line(&e.summary())
        );
    }
    // The session's diff, when the server sent one, is the whole change;
    // otherwise each turn's, once per file and patch.
    let sent: Vec<&FileDiff> = match s.diff.is_empty() {
        true => message_diffs.collect(),
        false => s.diff.iter().collect(),
    };
    let mut diffs: Vec<&FileDiff> = Vec::new();
    for d in sent {
        if !diffs.iter().any(|x| x.file == d.file && x.patch == d.patch) {
            diffs.push(d);
        }
    }
    if !diffs.is_empty() {
        out.push_str("## Changes\n\n");
        for d in diffs {
            let _ = writeln!(
                out,
                "### `{}` (+{} −{})\n",
                sanitize::line(&d.file),
                d.additions,
                d.deletions
            );
            if let Some(p) = &d.patch {
                let clean = sanitize::block(p);
                let _ = writeln!(out, "```diff\n{}\n```\n", clean.trim_end());
            }
        }
    }
}
