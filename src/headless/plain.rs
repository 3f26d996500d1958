//! Plain mode: a line-oriented transcript printed as events happen, for CI
//! logs and pipes (seed 002's renderer in spirit). One line per step, tool
//! call, text block, prompt and error; colour only on a terminal. It is a
//! `ReplyObserver`: the reducer tells it what happened.

use std::collections::HashSet;
use std::io::Write;

use crate::model::store::observer::ReplyObserver;
use crate::model::wire::sanitize;
use crate::model::{
    ErrorInfo, Part, PartBody, PermissionRequest, QuestionRequest, Tokens, ToolStatus,
};

pub struct PlainPrinter<W: Write> {
    out: W,
    color: bool,
    /// Parts already printed (text blocks and finished tools print once).
    printed: HashSet<String>,
    session: Option<String>,
    /// User messages: their text is the prompt, printed whole at once.
    user_messages: HashSet<String>,
    /// Messages whose role is missing or unknown, with the role they
    /// claim: their text is labelled so, never as the assistant's.
    odd_roles: std::collections::HashMap<String, String>,
    /// The first write error (a closed pipe): printing stops.
    pub error: Option<std::io::Error>,
    todo_pairing: crate::model::entity::shown::TodoPairing,
}

const DIM: &str = "\u{1b}[2m";
const BOLD: &str = "\u{1b}[1m";
const RED: &str = "\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const YELLOW: &str = "\u{1b}[33m";
const RESET: &str = "\u{1b}[0m";

impl<W: Write> PlainPrinter<W> {
    pub fn new(out: W, color: bool) -> Self {
        PlainPrinter {
            out,
            color,
            printed: HashSet::new(),
            session: None,
            user_messages: HashSet::new(),
            odd_roles: Default::default(),
            error: None,
            todo_pairing: Default::default(),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    /// One line, styled when colour is on; text from the data is made inert.
    fn line(&mut self, style: &str, text: &str) {
        if self.error.is_some() {
            return;
        }
        let clean = sanitize::line(text);
        let r = if self.color && !style.is_empty() {
            writeln!(self.out, "{style}{clean}{RESET}")
        } else {
            writeln!(self.out, "{clean}")
        };
        if let Err(e) = r.and_then(|_| self.out.flush()) {
            self.error = Some(e);
        }
    }

    fn enter_session(&mut self, session_id: &str) {
        if self.session.as_deref() != Some(session_id) {
            self.session = Some(session_id.to_string());
            self.line(BOLD, &format!("== session {session_id}"));
        }
    }

    fn part(&mut self, part: &Part) {
        // A todo list materialised from `todo.updated` is told by the
        // todowrite call that caused it (model::shown decides).
        if self.printed.contains(&part.id) || !self.todo_pairing.observe(part) {
            return;
        }
        let from_user = self.user_messages.contains(&part.message_id);
        match &part.body {
            PartBody::Text(t) if (part.is_final() || from_user) && !t.text.trim().is_empty() => {
                self.enter_session(&part.session_id);
                self.printed.insert(part.id.clone());
                let odd = self.odd_roles.get(&part.message_id);
                let prefix = match (from_user, odd, t.synthetic) {
                    (true, _, _) => "user".to_string(),
                    (false, Some(role), _) => format!("{role} message"),
                    (false, None, true) => "text (synthetic)".to_string(),
                    (false, None, false) => "text".to_string(),
                };
                let mut first = true;
                for l in t.text.trim_end().lines() {
                    let lead = if first {
                        format!("{prefix}: ")
                    } else {
                        "  ".repeat(3)
                    };
                    first = false;
                    self.line("", &format!("{lead}{l}"));
                }
            }
            PartBody::Reasoning(r) if part.is_final() && !r.text.trim().is_empty() => {
                self.enter_session(&part.session_id);
                self.printed.insert(part.id.clone());
                let first = r.text.trim().lines().next().unwrap_or("");
                self.line(DIM, &format!("reasoning: {first}"));
            }
            PartBody::Tool(t) if t.state.status.is_terminal() => {
                self.enter_session(&part.session_id);
                self.printed.insert(part.id.clone());
                let subject = crate::render::blocks::input_summary(part);
                let took = match (t.state.time.start, t.state.time.end) {
                    (Some(a), Some(b)) if b >= a && a > 0 => {
                        format!(" ({:.1}s)", (b - a) as f64 / 1000.0)
                    }
                    _ => String::new(),
                };
                match t.state.status {
                    ToolStatus::Completed => self.line(
                        GREEN,
                        &format!("tool {} {subject} → completed{took}", t.tool),
                    ),
                    _ => {
                        let err = t
                            .state
                            .error
                            .as_deref()
                            .unwrap_or("")
                            .lines()
                            .next()
                            .unwrap_or("");
                        self.line(
                            RED,
                            &format!("tool {} {subject} → error{took}: {err}", t.tool),
                        );
                    }
                }
            }
            PartBody::StepStart(_) => {
                self.enter_session(&part.session_id);
                self.printed.insert(part.id.clone());
                self.line(DIM, "step");
            }
            _ => {}
        }
    }
}

impl<W: Write> PlainPrinter<W> {
    /// The input ended: every tool still pending or running was left
    /// unfinished, and says so (it printed nothing while it ran).
    pub fn finish(&mut self, store: &crate::model::Store) {
        for session in store.sessions().iter().rev() {
            for message in &session.messages {
                for (pi, part) in message.parts.iter().enumerate() {
                    let PartBody::Tool(t) = &part.body else {
                        continue;
                    };
                    if self.printed.contains(&part.id)
                        || !session.left_unfinished(message, pi, true)
                    {
                        continue;
                    }
                    self.enter_session(&part.session_id);
                    self.printed.insert(part.id.clone());
                    let subject = crate::render::blocks::input_summary(part);
                    self.line(
                        YELLOW,
                        &format!(
                            "tool {} {subject} → {}, {}",
                            t.tool,
                            t.state.status.label(),
                            crate::render::tools::UNFINISHED
                        ),
                    );
                }
            }
        }
    }
}

impl<W: Write> ReplyObserver for PlainPrinter<W> {
    fn message_updated(&mut self, info: &crate::model::MessageInfo) {
        if info.is_user() {
            self.user_messages.insert(info.id.clone());
        } else if !info.is_assistant() {
            self.odd_roles
                .insert(info.id.clone(), info.role.label().to_string());
        }
    }

    fn part_added(&mut self, part: &Part, _index: usize) {
        self.part(part);
    }

    fn part_finalized(&mut self, part: &Part, _index: usize) {
        self.part(part);
    }

    fn tool_progressed(&mut self, part: &Part, _index: usize, _status: &ToolStatus) {
        self.part(part);
    }

    fn step_finished(&mut self, session_id: &str, cost: f64, tokens: &Tokens) {
        self.enter_session(session_id);
        let cost = if cost > 0.0 {
            format!(", ${cost:.4}")
        } else {
            String::new()
        };
        self.line(DIM, &format!("step done: {} tokens{cost}", tokens.sum()));
    }

    fn permission_asked(&mut self, request: &PermissionRequest) {
        self.enter_session(&request.session_id);
        let subject = crate::model::entity::prompt::subject(request);
        self.line(
            YELLOW,
            &format!("? permission {}: {subject}", request.permission),
        );
    }

    fn permission_replied(
        &mut self,
        session_id: &str,
        _request_id: &str,
        reply: &str,
        _asked_at: Option<i64>,
    ) {
        self.enter_session(session_id);
        self.line(YELLOW, &format!("  → {reply}"));
    }

    fn question_asked(&mut self, request: &QuestionRequest) {
        self.enter_session(&request.session_id);
        for q in &request.questions {
            self.line(YELLOW, &format!("? question: {}", q.question));
        }
    }

    fn question_replied(
        &mut self,
        session_id: &str,
        _request_id: &str,
        answers: &[Vec<String>],
        _asked_at: Option<i64>,
    ) {
        self.enter_session(session_id);
        let text: Vec<String> = answers.iter().map(|a| a.join(", ")).collect();
        self.line(YELLOW, &format!("  → {}", text.join(" | ")));
    }

    fn question_rejected(&mut self, session_id: &str, _request_id: &str, _asked_at: Option<i64>) {
        self.enter_session(session_id);
        self.line(YELLOW, "  → dismissed");
    }

    fn session_errored(&mut self, session_id: Option<&str>, text: &str, _error: &ErrorInfo) {
        if let Some(s) = session_id {
            self.enter_session(s);
        }
        self.line(RED, &format!("error: {text}"));
    }

    fn session_retried(&mut self, session_id: &str, attempt: Option<u64>, message: &str) {
        self.enter_session(session_id);
        let n = attempt.map(|a| format!(" #{a}")).unwrap_or_default();
        self.line(YELLOW, &format!("retry{n}: {message}"));
    }
}
