//! What the agent asks of the user (permissions, questions) and its todo list.

use serde::Deserialize;
use serde_json::Value;

/// The tool call a request belongs to.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolRef {
    #[serde(rename = "messageID", default)]
    pub message_id: String,
    #[serde(rename = "callID", default)]
    pub call_id: String,
}

/// `permission.asked`: a tool waits for once / always / reject.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PermissionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub permission: String,
    pub patterns: Vec<String>,
    pub metadata: Value,
    pub always: Vec<String>,
    pub tool: Option<ToolRef>,
    /// What the request is about, in words: OpenCode 0.x sent a `title`
    /// (its `permission.updated`); newer versions none.
    pub title: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QuestionOption {
    pub label: String,
    pub description: String,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Question {
    pub question: String,
    pub header: String,
    pub options: Vec<QuestionOption>,
    pub multiple: bool,
    /// Whether a typed answer is allowed; opencode's default is yes.
    pub custom: Option<bool>,
}

/// `question.asked`: the question tool waits for answers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QuestionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub questions: Vec<Question>,
    pub tool: Option<ToolRef>,
}

/// How a prompt was settled.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// A permission reply: "once", "always" or "reject".
    Replied(String),
    /// A question's answers, one list per question.
    Answered(Vec<Vec<String>>),
    /// A question dismissed.
    Rejected,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptRequest {
    Permission(PermissionRequest),
    Question(QuestionRequest),
}

impl PromptRequest {
    pub fn id(&self) -> &str {
        match self {
            PromptRequest::Permission(p) => &p.id,
            PromptRequest::Question(q) => &q.id,
        }
    }

    pub fn session_id(&self) -> &str {
        match self {
            PromptRequest::Permission(p) => &p.session_id,
            PromptRequest::Question(q) => &q.session_id,
        }
    }

    pub fn tool(&self) -> Option<&ToolRef> {
        match self {
            PromptRequest::Permission(p) => p.tool.as_ref(),
            PromptRequest::Question(q) => q.tool.as_ref(),
        }
    }
}

/// A prompt the store has seen, pending or settled (kept so a replay can show
/// what was answered and when).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub request: PromptRequest,
    /// Receive time of the ask, in ms, when the source knows it.
    pub asked_at: Option<i64>,
    pub resolution: Option<Resolution>,
    pub resolved_at: Option<i64>,
}

impl Prompt {
    pub fn is_pending(&self) -> bool {
        self.resolution.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TodoStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Cancelled,
    Other(String),
}

impl<'de> Deserialize<'de> for TodoStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "pending" => TodoStatus::Pending,
            "in_progress" => TodoStatus::InProgress,
            "completed" => TodoStatus::Completed,
            "cancelled" => TodoStatus::Cancelled,
            _ => TodoStatus::Other(s),
        })
    }
}

impl TodoStatus {
    pub fn label(&self) -> &str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
            TodoStatus::Cancelled => "cancelled",
            TodoStatus::Other(s) => s,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Todo {
    pub id: Option<String>,
    pub content: String,
    pub status: TodoStatus,
    pub priority: String,
}

/// One line saying what a prompt is about.
pub fn describe(request: &PromptRequest) -> (String, String) {
    match request {
        PromptRequest::Permission(p) => (format!("permission · {}", p.permission), subject(p)),
        PromptRequest::Question(q) => {
            let first = q
                .questions
                .first()
                .map(|q| q.question.clone())
                .unwrap_or_default();
            let n = q.questions.len();
            (
                format!(
                    "question{}",
                    if n > 1 {
                        format!(" · {n} questions")
                    } else {
                        String::new()
                    }
                ),
                first,
            )
        }
    }
}

pub fn meta<'a>(p: &'a PermissionRequest, key: &str) -> Option<&'a str> {
    p.metadata.get(key).and_then(Value::as_str)
}

/// What a permission is about: the command, the path, pattern or url.
pub fn subject(p: &PermissionRequest) -> String {
    let s = match p.permission.as_str() {
        "bash" => meta(p, "command").map(str::to_string),
        "edit" | "write" => meta(p, "filepath")
            .or_else(|| meta(p, "filePath"))
            .map(str::to_string),
        "read" | "list" | "glob" | "grep" => meta(p, "filePath")
            .or_else(|| meta(p, "path"))
            .or_else(|| meta(p, "pattern"))
            .map(str::to_string),
        "webfetch" => meta(p, "url").map(str::to_string),
        _ => None,
    };
    s.or_else(|| p.title.clone())
        .unwrap_or_else(|| p.patterns.join(", "))
}
