//! Sending answers to the server: one task receives the app's replies and
//! reports each result back as a message, so a slow or failing server never
//! blocks a frame.

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::client::{ApiError, Client};
use crate::source::msg::{ReplyOutcome, SourceMsg};

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `once`, `always` or `reject`, with an optional message for reject.
    Permission {
        request_id: String,
        reply: String,
        message: Option<String>,
    },
    /// One list of labels (or typed text) per question, in order.
    Answer {
        request_id: String,
        answers: Vec<Vec<String>>,
    },
    /// Dismiss a question.
    Dismiss { request_id: String },
    /// Stop a busy session (`POST /session/{id}/abort`), in its project's
    /// directory when known.
    Abort {
        session_id: String,
        directory: Option<String>,
    },
}

impl Reply {
    pub fn request_id(&self) -> &str {
        match self {
            Reply::Permission { request_id, .. }
            | Reply::Answer { request_id, .. }
            | Reply::Dismiss { request_id } => request_id,
            Reply::Abort { session_id, .. } => session_id,
        }
    }

    /// The route and body, as protocol.md gives them.
    pub fn route(&self) -> (String, Value) {
        match self {
            Reply::Permission {
                request_id,
                reply,
                message,
            } => {
                let mut body = json!({"reply": reply});
                if let Some(m) = message.as_ref().filter(|m| !m.trim().is_empty()) {
                    body["message"] = json!(m);
                }
                (format!("/permission/{request_id}/reply"), body)
            }
            Reply::Answer {
                request_id,
                answers,
            } => (
                format!("/question/{request_id}/reply"),
                json!({"answers": answers}),
            ),
            Reply::Dismiss { request_id } => (format!("/question/{request_id}/reject"), json!({})),
            Reply::Abort {
                session_id,
                directory,
            } => (
                super::url::with_dir(
                    &format!("/session/{session_id}/abort"),
                    directory.as_deref(),
                ),
                json!({}),
            ),
        }
    }
}

pub fn spawn(client: Client, tx: mpsc::Sender<SourceMsg>) -> mpsc::UnboundedSender<Reply> {
    let (reply_tx, mut rx) = mpsc::unbounded_channel::<Reply>();
    tokio::spawn(async move {
        while let Some(reply) = rx.recv().await {
            let (path, body) = reply.route();
            let outcome = match client.post(&path, &body).await {
                Ok(_) => ReplyOutcome::Sent,
                Err(ApiError::Status { status: 404, .. }) => ReplyOutcome::AlreadyGone,
                Err(e) => ReplyOutcome::Failed(e.to_string()),
            };
            let msg = match &reply {
                Reply::Abort { session_id, .. } => SourceMsg::Aborted {
                    session_id: session_id.clone(),
                    outcome,
                },
                _ => SourceMsg::Replied {
                    request_id: reply.request_id().to_string(),
                    outcome,
                },
            };
            if tx.send(msg).await.is_err() {
                return;
            }
        }
    });
    reply_tx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_bodies_follow_the_protocol() {
        let r = Reply::Permission {
            request_id: "per_1".into(),
            reply: "reject".into(),
            message: Some("no".into()),
        };
        assert_eq!(
            r.route(),
            (
                "/permission/per_1/reply".into(),
                json!({"reply": "reject", "message": "no"})
            )
        );
        let r = Reply::Permission {
            request_id: "per_1".into(),
            reply: "once".into(),
            message: Some(" ".into()),
        };
        assert_eq!(r.route().1, json!({"reply": "once"}));
        let r = Reply::Answer {
            request_id: "que_1".into(),
            answers: vec![vec!["A".into()], vec![]],
        };
        assert_eq!(
            r.route(),
            (
                "/question/que_1/reply".into(),
                json!({"answers": [["A"], []]})
            )
        );
        assert_eq!(
            Reply::Dismiss {
                request_id: "que_2".into()
            }
            .route()
            .0,
            "/question/que_2/reject"
        );
        let abort = Reply::Abort {
            session_id: "ses_1".into(),
            directory: Some("/home/a b".into()),
        };
        assert_eq!(
            abort.route(),
            (
                "/session/ses_1/abort?directory=/home/a%20b".into(),
                json!({})
            )
        );
    }
}
