//! The headless transcript: the store's final state as plain text, for tests,
//! scripts and bug reports. Every string from the data is sanitized.

use std::fmt::Write;

use crate::model::entity::part::PartBody;
use crate::model::entity::prompt::TodoStatus;
use crate::model::entity::totals::Totals;
use crate::model::wire::sanitize;
use crate::model::{FileDiff, Message, Part, PromptRequest, Resolution, Role, Session, Store};
use crate::source::IngestStats;

/// Render the whole store, then the ingest summary. Strings are sanitised
/// where they are written; a last pass catches the ids and names that were
/// not, so nothing from the data can reach a terminal as a sequence.
pub fn render(store: &Store, stats: &IngestStats) -> String {
    let out = render_text(store, stats, true);
    sanitize::block(&out).into_owned()
}

/// The dump of a live source, which may still go on: a tool is unfinished
/// only once its turn is over, not because the dump was taken.
pub fn render_live(store: &Store, stats: &IngestStats) -> String {
    let out = render_text(store, stats, false);
    sanitize::block(&out).into_owned()
}

fn render_text(store: &Store, stats: &IngestStats, ended: bool) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail.
    let _ = write_text(store, stats, ended, &mut |chunk: &str| {
        out.extend_from_slice(chunk.as_bytes());
        Ok(())
    });
    String::from_utf8(out).unwrap_or_default()
}

/// The dump of a live source written as it is made, one session at a
/// time, each piece sanitised as it goes: the whole transcript is never
/// held (issue 26: a dump held it twice, once sanitised).
pub fn write_live(
    store: &Store,
    stats: &IngestStats,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_text(store, stats, false, &mut |chunk: &str| {
        out.write_all(sanitize::block(chunk).as_bytes())
    })?;
    out.flush()
}

/// The transcript in pieces that each end a line, handed to `emit`.
fn write_text(
    store: &Store,
    stats: &IngestStats,
    ended: bool,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = String::new();
    head(&mut out, store, &|s| s.totals());
    for session in store.sessions() {
        emit(&out)?;
        out.clear();
        session_start(&mut out, session);
        for (n, turn) in session.turns().iter().enumerate() {
            turn_block(&mut out, session, n, turn.messages(), ended);
        }
        let diffs = session.messages.iter().flat_map(|m| &m.info.diffs);
        session_end(&mut out, store, session, diffs);
    }
    tail(&mut out, store, stats);
    emit(&out)
}

/// The count of sessions and their tree, each with `totals` of it.
pub(super) fn head(out: &mut String, store: &Store, totals: &dyn Fn(&Session) -> Totals) {
    let _ = writeln!(out, "sessions: {}", store.sessions().len());
    session_tree(out, store, totals);
}

/// After the sessions: pending prompts, errors, problems and the summary.
pub(super) fn tail(out: &mut String, store: &Store, stats: &IngestStats) {
    let pending: Vec<_> = store.pending_prompts().collect();
    let _ = writeln!(out, "\npending prompts: {}", pending.len());
    for p in pending {
        let _ = writeln!(out, "  {}", prompt_line(&p.request));
    }
    for e in store.global_errors() {
        let _ = writeln!(out, "error: {}", sanitize::line(&e.summary()));
    }
    for problem in stats.problems() {
        let _ = writeln!(out, "{}", sanitize::line(&problem.to_string()));
    }
    if stats.dropped_problems() > 0 {
        let _ = writeln!(out, "… {} more problems", stats.dropped_problems());
    }
    if !store.ignored_counts().is_empty() {
        let ignored: Vec<String> = store
            .ignored_counts()
            .iter()
            .map(|(k, n)| format!("{}×{n}", sanitize::line(k)))
            .collect();
        let _ = writeln!(out, "ignored types: {}", ignored.join(", "));
    }
    let _ = writeln!(out, "{}", stats.form_line());
    let _ = writeln!(out, "{}", stats.summary());
}

/// Indentation stops growing here; deeper sessions say their depth, so the
/// dump stays linear in the tree's size however deep it is.
const MAX_INDENT: usize = 16;

/// The session tree, depth first, without recursion (a chain of thousands
/// of nested sessions must not exhaust the stack) and with each session's
/// children found through one index rather than a scan per session.
fn session_tree(out: &mut String, store: &Store, totals: &dyn Fn(&Session) -> Totals) {
    let mut children: std::collections::HashMap<&str, Vec<&Session>> = Default::default();
    for s in store.sessions() {
        if let Some(parent) = s.info.parent_id.as_deref() {
            children.entry(parent).or_default().push(s);
        }
    }
    let mut stack: Vec<(&Session, usize)> = store.root_sessions().map(|s| (s, 1)).collect();
    stack.reverse();
    while let Some((session, depth)) = stack.pop() {
        tree_line(out, session, &totals(session), depth);
        if let Some(kids) = children.get(session.id()) {
            stack.extend(kids.iter().rev().map(|&c| (c, depth + 1)));
        }
    }
}

/// The mark of a figure ocview summed (the record had none).
fn mark(summed: bool) -> &'static str {
    if summed {
        crate::model::entity::totals::SUMMED_MARK
    } else {
        ""
    }
}

fn tree_line(out: &mut String, session: &Session, totals: &Totals, depth: usize) {
    let indent = "  ".repeat(depth.min(MAX_INDENT));
    let deeper = if depth > MAX_INDENT {
        format!("[depth {depth}] ")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{indent}{deeper}{} {:?} [{}]{} cost {}${:.4} tokens {}{}",
        session.id(),
        sanitize::line(session.title()),
        session.status.label(),
        if session.placeholder {
            " (placeholder)"
        } else {
            ""
        },
        mark(totals.cost_summed),
        totals.cost,
        mark(totals.tokens_summed),
        totals.token_count(),
    );
}

/// A session's heading: id, title, where, status and errors.
pub(super) fn session_start(out: &mut String, session: &Session) {
    let _ = writeln!(
        out,
        "\n== session {} {:?}",
        session.id(),
        sanitize::line(session.title())
    );
    if let Some(dir) = &session.info.directory {
        let _ = writeln!(out, "directory: {}", sanitize::line(dir));
    }
    if let Some(parent) = &session.info.parent_id {
        let _ = writeln!(out, "parent: {parent}");
    }
    let _ = writeln!(out, "status: {}", session.status.label());
    for e in errors_of(session) {
        let _ = writeln!(out, "error: {}", sanitize::line(&e.summary()));
    }
}

/// Turn `n` (from 0) of `session`: its messages in order.
pub(super) fn turn_block<'a>(
    out: &mut String,
    session: &Session,
    n: usize,
    messages: impl IntoIterator<Item = &'a Message>,
    ended: bool,
) {
    let _ = writeln!(out, "-- turn {}", n + 1);
    for message in messages {
        message_block(out, session, message, ended);
    }
}

/// After a session's turns: its todos, the files its turns changed
/// (`diffs`, the messages' own, in order) and its prompts.
pub(super) fn session_end<'a>(
    out: &mut String,
    store: &Store,
    session: &'a Session,
    diffs: impl Iterator<Item = &'a FileDiff>,
) {
    if !session.todos.is_empty() {
        let _ = writeln!(out, "todos:");
        for t in &session.todos {
            let mark = match t.status {
                TodoStatus::Completed => "[x]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Cancelled => "[-]",
                _ => "[ ]",
            };
            let _ = writeln!(
                out,
                "  {mark} ({}) {}",
                sanitize::line(&t.priority),
                sanitize::line(&t.content)
            );
        }
    }
    let diffs: Vec<_> = diffs.collect();
    if !diffs.is_empty() || !session.diff.is_empty() {
        let _ = writeln!(out, "files:");
        for d in diffs.iter().copied().chain(&session.diff) {
            let _ = writeln!(
                out,
                "  {} +{} -{}",
                sanitize::line(&d.file),
                d.additions,
                d.deletions
            );
        }
    }
    let prompts: Vec<_> = store
        .prompts()
        .iter()
        .filter(|p| p.request.session_id() == session.id())
        .collect();
    if !prompts.is_empty() {
        let _ = writeln!(out, "prompts:");
        for p in prompts {
            let answer = match &p.resolution {
                None => "pending".to_string(),
                Some(Resolution::Replied(r)) => format!("replied {}", sanitize::line(r)),
                Some(Resolution::Answered(a)) => {
                    format!("answered {}", sanitize::line(&format!("{a:?}")))
                }
                Some(Resolution::Rejected) => "rejected".to_string(),
            };
            let _ = writeln!(out, "  {} — {answer}", prompt_line(&p.request));
        }
    }
}

/// The session's errors: every distinct one, or the latest when only that
/// is known.
fn errors_of(session: &Session) -> impl Iterator<Item = &crate::model::ErrorInfo> {
    let latest = session.error.as_ref().filter(|_| session.errors.is_empty());
    session.errors.iter().chain(latest)
}

fn message_block(out: &mut String, session: &Session, message: &Message, ended: bool) {
    let info = &message.info;
    let role = match &info.role {
        Role::Unknown if message.placeholder => "message".into(),
        // A role this version does not know is named as the record claims it.
        Role::Other(claimed) => format!("role={:?}", sanitize::line(claimed)),
        role => role.label().to_string(),
    };
    let mut line = format!("{role} {}", info.id);
    if let Some(agent) = &info.agent {
        let _ = write!(line, " agent={}", sanitize::line(agent));
    }
    if let Some(model) = &info.model {
        let _ = write!(
            line,
            " model={}/{}",
            sanitize::line(&model.provider_id),
            sanitize::line(&model.model_id)
        );
    }
    if let Some(finish) = &info.finish {
        let _ = write!(line, " finish={}", sanitize::line(finish));
    }
    if message.placeholder {
        line.push_str(" (placeholder)");
    }
    let _ = writeln!(out, "{line}");
    if let Some(e) = &info.error {
        let _ = writeln!(out, "  error: {}", sanitize::line(&e.summary()));
    }
    for part in crate::model::entity::shown::shown_parts(message) {
        let unfinished = message
            .part_index(&part.id)
            .is_ok_and(|pi| session.left_unfinished(message, pi, ended));
        part_block(out, &part, unfinished);
    }
}

fn part_block(out: &mut String, part: &Part, unfinished: bool) {
    let stream_only = match part.source {
        Some(s) => format!(" [stream-only: {}]", s.name()),
        None => String::new(),
    };
    match &part.body {
        PartBody::Text(t) => {
            let flags = match (t.synthetic, t.ignored) {
                (true, _) => " (synthetic)",
                (_, true) => " (ignored)",
                _ => "",
            };
            text_lines(out, &format!("text{flags}"), &t.text);
        }
        PartBody::Reasoning(r) => text_lines(out, "reasoning", &r.text),
        PartBody::Tool(t) => {
            let mut line = format!(
                "  tool {} [{}{}]",
                sanitize::line(&t.tool),
                t.state.status.label(),
                if unfinished { ", unfinished" } else { "" }
            );
            if let Some(title) = t.state.title.as_deref().filter(|s| !s.is_empty()) {
                let _ = write!(line, " {:?}", sanitize::line(title));
            }
            if let Some(err) = &t.state.error {
                let _ = write!(line, " error: {}", sanitize::line(first_line(err)));
            }
            let _ = writeln!(out, "{line}{stream_only}");
        }
        PartBody::StepFinish(s) => {
            let _ = writeln!(
                out,
                "  step-finish reason={} tokens={} cost=${:.4}",
                sanitize::line(&s.reason),
                s.tokens.sum(),
                s.cost
            );
        }
        PartBody::Patch(p) => {
            let _ = writeln!(out, "  patch {} file(s)", p.files.len());
        }
        PartBody::File(f) => {
            let name = f.filename.as_deref().unwrap_or(&f.url);
            let _ = writeln!(
                out,
                "  file {} ({})",
                sanitize::line(name),
                sanitize::line(&f.mime)
            );
        }
        PartBody::Agent(a) => {
            let _ = writeln!(out, "  agent {}", sanitize::line(&a.name));
        }
        PartBody::Subtask(s) => {
            let _ = writeln!(
                out,
                "  subtask @{} {}",
                sanitize::line(&s.agent),
                sanitize::line(&s.description)
            );
        }
        PartBody::Retry(r) => {
            let err = r.error.as_ref().map(|e| e.summary()).unwrap_or_default();
            let _ = writeln!(
                out,
                "  retry attempt={} {}",
                r.attempt.unwrap_or(0),
                sanitize::line(&err)
            );
        }
        PartBody::Compaction(c) => {
            let _ = writeln!(out, "  compaction auto={} overflow={}", c.auto, c.overflow);
        }
        PartBody::StepStart(_) | PartBody::Snapshot(_) => {
            let _ = writeln!(out, "  {}", part.kind());
        }
        PartBody::Unknown { kind } => {
            let _ = writeln!(out, "  unknown part {:?}", sanitize::line(kind));
        }
    }
}

fn text_lines(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "  {label}:");
    for line in sanitize::block(text).lines() {
        let _ = writeln!(out, "    | {line}");
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn prompt_line(request: &PromptRequest) -> String {
    match request {
        PromptRequest::Permission(p) => format!(
            "permission {} {} {} session={}",
            p.id,
            sanitize::line(&p.permission),
            sanitize::line(&p.patterns.join(" ")),
            p.session_id
        ),
        PromptRequest::Question(q) => {
            let headers: Vec<String> = q
                .questions
                .iter()
                .map(|x| sanitize::line(&x.header).into_owned())
                .collect();
            format!(
                "question {} [{}] session={}",
                q.id,
                headers.join(", "),
                q.session_id
            )
        }
    }
}
