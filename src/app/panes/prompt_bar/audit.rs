//! Every answer on record (`crate::archive::rows::AnswerRow`): what this
//! ocview sent (once the server said what became of it), and what another
//! client was seen to answer. Kept by the archive's writer, so a team
//! archive holds everyone's, through its spool when PostgreSQL is away.

use crate::app::App;
use crate::archive::rows::AnswerRow;
use crate::model::store::fleet;
use crate::model::{Event, PromptRequest};
use crate::source::live::reply::Reply;
use crate::source::msg::ReplyOutcome;

/// Who answers on this side: `ocview` on this machine as this OS user.
pub const BY_OCVIEW: &str = "ocview";
/// An answer seen given elsewhere (OpenCode's TUI, another ocview).
pub const BY_ANOTHER: &str = "another client";

impl App {
    /// An answer this ocview sent, once the server said what became of it.
    pub(crate) fn keep_answer(&mut self, reply: &Reply, outcome: &ReplyOutcome) {
        let (answer, always, message) = match reply {
            Reply::Permission { reply, message, .. } => {
                (reply.clone(), reply == "always", message.clone())
            }
            Reply::Answer { answers, .. } => (joined(answers), false, None),
            Reply::Dismiss { .. } => ("dismissed".into(), false, None),
            Reply::Abort { .. } => return,
        };
        let outcome = match outcome {
            ReplyOutcome::Sent => "sent".to_string(),
            ReplyOutcome::AlreadyGone => "already answered".to_string(),
            ReplyOutcome::Failed(e) => format!("failed: {e}"),
        };
        if let Some(row) = self.answer_row(
            reply.request_id(),
            answer,
            always,
            message,
            BY_OCVIEW,
            outcome,
        ) {
            self.keep(row);
        }
    }

    /// An answer another client gave (its event came, and it was not ours).
    pub(crate) fn keep_answer_seen(&mut self, event: &Event) {
        let (request_id, answer) = match event {
            Event::PermissionReplied {
                request_id, reply, ..
            } => (request_id, reply.clone()),
            Event::QuestionReplied {
                request_id,
                answers,
                ..
            } => (request_id, joined(answers)),
            Event::QuestionRejected { request_id, .. } => (request_id, "dismissed".into()),
            _ => return,
        };
        let always = answer == "always";
        if let Some(row) =
            self.answer_row(request_id, answer, always, None, BY_ANOTHER, "seen".into())
        {
            self.keep(row);
        }
    }

    fn keep(&self, row: AnswerRow) {
        if let Some(tap) = &self.archive.tap {
            tap.answer(row);
        }
    }

    /// The record of an answer to the prompt `request_id` (as the store
    /// knows it: what it showed, its session, its server).
    fn answer_row(
        &self,
        request_id: &str,
        answer: String,
        always: bool,
        message: Option<String>,
        by: &str,
        outcome: String,
    ) -> Option<AnswerRow> {
        let prompt = self.store.prompt(request_id)?;
        let (what, subject) = crate::model::entity::prompt::describe(&prompt.request);
        let (kind, shown, patterns) = match &prompt.request {
            PromptRequest::Permission(p) => {
                let mut shown = subject;
                if let Some(diff) = crate::model::entity::prompt::meta(p, "diff") {
                    shown.push('\n');
                    shown.push_str(diff);
                }
                let patterns = if always { p.always.clone() } else { Vec::new() };
                ("permission", shown, patterns)
            }
            PromptRequest::Question(q) => {
                let shown: Vec<&str> = q.questions.iter().map(|q| q.question.as_str()).collect();
                ("question", shown.join("\n"), Vec::new())
            }
        };
        let mut shown = shown;
        crate::archive::cap_indexed(&mut shown);
        let server = fleet::server_of(request_id)
            .and_then(|key| self.store.server(key))
            .map(|s| crate::archive::origin::origin_url(&s.url));
        Some(AnswerRow {
            request_id: fleet::bare(request_id).to_string(),
            session_id: fleet::bare(prompt.request.session_id()).to_string(),
            kind: kind.into(),
            prompt: what,
            shown,
            answer,
            patterns,
            message,
            by: by.into(),
            machine: crate::archive::origin::hostname(),
            user: if by == BY_OCVIEW {
                os_user()
            } else {
                String::new()
            },
            server,
            time: crate::archive::now_ms(),
            outcome,
        })
    }
}

/// The OS user ocview runs as.
fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_default()
}

/// A question's answers: each question's labels joined by `+`, the
/// questions by `, ` (as the audit keeps them and a replay says them).
pub(crate) fn joined(answers: &[Vec<String>]) -> String {
    answers
        .iter()
        .map(|a| a.join("+"))
        .collect::<Vec<_>>()
        .join(", ")
}
