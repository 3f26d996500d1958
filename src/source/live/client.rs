//! The opencode server's REST API, as far as a viewer needs it. Every
//! request has a timeout; a failure says which request, the HTTP status and
//! the server's own message. The password never appears in a message or in
//! `Debug` output.

use std::fmt;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::url::{enc, next_cursor, query_value, with_dir};

/// How long one REST request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Clone, PartialEq, Eq)]
pub struct Auth {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Auth {{ username: {:?}, password: <hidden> }}",
            self.username
        )
    }
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The server wants a password and none was given.
    #[error(
        "the server wants a password (HTTP 401 on {path}): put it in $OPENCODE_SERVER_PASSWORD or a file given with --password-file (user {user:?}, or set --username)"
    )]
    PasswordMissing { path: String, user: String },
    /// The password given was refused.
    #[error(
        "authentication failed (HTTP 401 on {path}): the server refused the password for user {user:?}"
    )]
    Unauthorized { path: String, user: String },
    #[error("HTTP {status} on {path}: {message}")]
    Status {
        path: String,
        status: u16,
        message: String,
    },
    #[error("{path}: {message}")]
    Transport { path: String, message: String },
    /// The server took the request and sent nothing back in `secs`.
    #[error("{path}: no answer in {secs} s")]
    Unanswered { path: String, secs: u64 },
    /// Nothing answers at the server's address: says which, and how to
    /// start one.
    #[error("{message}")]
    NoServer { message: String },
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Unauthorized { .. } | ApiError::PasswordMissing { .. } => Some(401),
            ApiError::Status { status, .. } => Some(*status),
            ApiError::Transport { .. }
            | ApiError::Unanswered { .. }
            | ApiError::NoServer { .. } => None,
        }
    }
}

/// One page of a session's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Oldest first.
    pub messages: Vec<Value>,
    /// The cursor of the page before this one; `None`: this page holds the
    /// session's first message.
    pub older: Option<String>,
}

/// A page whose headers are in and whose body is not read yet.
pub struct PageHead {
    /// The cursor of the page before this one (`None`: the first page).
    pub older: Option<String>,
    path: String,
    resp: reqwest::Response,
}

impl PageHead {
    /// The body, undecoded, with the request's path (for errors).
    pub async fn body(self) -> Result<(String, bytes::Bytes), ApiError> {
        let bytes = self
            .resp
            .bytes()
            .await
            .map_err(|e| Client::transport_error(&self.path, &e))?;
        Ok((self.path, bytes))
    }
}

/// A page's body as its list of messages.
pub fn decode_list(path: &str, body: &[u8]) -> Result<Vec<Value>, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| ApiError::Transport {
        path: path.to_string(),
        message: format!("invalid JSON: {e}"),
    })?;
    array(value)
}

#[derive(Clone)]
pub struct Client {
    base: String,
    http: reqwest::Client,
    auth: Option<Auth>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("auth", &self.auth)
            .finish()
    }
}

impl Client {
    pub fn new(base: &str, auth: Option<Auth>) -> Client {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("an HTTP client with default TLS settings");
        Client {
            base: base.trim_end_matches('/').to_string(),
            http,
            auth,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The credentials sent with every request.
    pub fn auth(&self) -> Option<&Auth> {
        self.auth.as_ref()
    }

    /// A request builder with auth; `timeout` is `None` for streams.
    pub fn request(
        &self,
        method: Method,
        path: &str,
        timeout: Option<Duration>,
    ) -> reqwest::RequestBuilder {
        let mut rb = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = timeout {
            rb = rb.timeout(t);
        }
        if let Some(a) = &self.auth {
            rb = rb.basic_auth(&a.username, Some(&a.password));
        }
        rb
    }

    pub fn error_for(&self, path: &str, status: StatusCode, body: &str) -> ApiError {
        if status == StatusCode::UNAUTHORIZED {
            let path = path.to_string();
            return match &self.auth {
                Some(a) => ApiError::Unauthorized {
                    path,
                    user: a.username.clone(),
                },
                None => ApiError::PasswordMissing {
                    path,
                    user: std::env::var("OPENCODE_SERVER_USERNAME")
                        .ok()
                        .filter(|u| !u.is_empty())
                        .unwrap_or_else(|| "opencode".into()),
                },
            };
        }
        ApiError::Status {
            path: path.to_string(),
            status: status.as_u16(),
            message: server_message(body),
        }
    }

    pub fn transport_error(path: &str, e: &reqwest::Error) -> ApiError {
        if e.is_connect() {
            return ApiError::NoServer {
                message: no_server(e),
            };
        }
        let message = if e.is_timeout() {
            "timed out".to_string()
        } else {
            // reqwest's message carries the URL, never the credentials.
            e.to_string()
        };
        ApiError::Transport {
            path: path.to_string(),
            message,
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<String, ApiError> {
        Ok(self.send_full(method, path, body).await?.1)
    }

    /// A request's answer with its headers (an error when not a success).
    async fn send_full(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(HeaderMap, String), ApiError> {
        let mut rb = self.request(method, path, Some(REQUEST_TIMEOUT));
        if let Some(b) = body {
            rb = rb.json(b);
        }
        let resp = rb
            .send()
            .await
            .map_err(|e| Client::transport_error(path, &e))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp
            .text()
            .await
            .map_err(|e| Client::transport_error(path, &e))?;
        if !status.is_success() {
            return Err(self.error_for(path, status, &text));
        }
        Ok((headers, text))
    }

    pub async fn get(&self, path: &str) -> Result<Value, ApiError> {
        let text = self.send(Method::GET, path, None).await?;
        serde_json::from_str(&text).map_err(|e| ApiError::Transport {
            path: path.to_string(),
            message: format!("invalid JSON: {e}"),
        })
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        let text = self.send(Method::POST, path, Some(body)).await?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn health(&self) -> Result<Value, ApiError> {
        self.get("/global/health").await
    }

    pub async fn sessions(&self, dir: Option<&str>) -> Result<Vec<Value>, ApiError> {
        array(self.get(&with_dir("/session", dir)).await?)
    }

    /// `{sessionID: status}` for sessions that are not idle.
    pub async fn statuses(&self, dir: Option<&str>) -> Result<Value, ApiError> {
        self.get(&with_dir("/session/status", dir)).await
    }

    /// The configured providers and their models (`limit.context`).
    pub async fn providers(&self) -> Result<Value, ApiError> {
        self.get("/config/providers").await
    }

    /// The server's projects (for `--all`).
    pub async fn projects(&self) -> Result<Vec<Value>, ApiError> {
        array(self.get("/project").await?)
    }

    /// The newest `limit` messages (before the page whose `X-Next-Cursor`
    /// is `cursor`, when given; never a message id), oldest first. To page
    /// back, [`Client::page`] also gives the next cursor.
    pub async fn messages(
        &self,
        session: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<Vec<Value>, ApiError> {
        Ok(self.page(session, limit, cursor).await?.messages)
    }

    /// One page of a session's messages, oldest first: the newest `limit`,
    /// or the `limit` before the page whose cursor is `cursor`. The server
    /// answers a bare message id in `before=` with HTTP 400: only its own
    /// opaque cursors go there.
    pub async fn page(
        &self,
        session: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<Page, ApiError> {
        let head = self.page_head(session, limit, cursor).await?;
        let older = head.older.clone();
        let (path, body) = head.body().await?;
        Ok(Page {
            messages: decode_list(&path, &body)?,
            older,
        })
    }

    /// A page's request, answered as far as its headers: the cursor of the
    /// page before it is known before its body is read, so the next
    /// request can go out while this one's body is read and decoded.
    pub async fn page_head(
        &self,
        session: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<PageHead, ApiError> {
        let mut path = format!("/session/{}/message?limit={limit}", enc(session));
        if let Some(c) = cursor {
            path.push_str("&before=");
            path.push_str(&query_value(c));
        }
        let resp = self
            .request(Method::GET, &path, Some(REQUEST_TIMEOUT))
            .send()
            .await
            .map_err(|e| Client::transport_error(&path, &e))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            return Err(self.error_for(&path, status, &text));
        }
        Ok(PageHead {
            older: next_cursor(resp.headers()),
            path,
            resp,
        })
    }

    /// The files a turn changed: `GET /session/{id}/diff?messageID=<user message>`.
    pub async fn message_diff(&self, session: &str, message: &str) -> Result<Vec<Value>, ApiError> {
        array(
            self.get(&format!(
                "/session/{}/diff?messageID={}",
                enc(session),
                enc(message)
            ))
            .await?,
        )
    }

    /// The server's working directories (`GET /path`).
    pub async fn path(&self) -> Result<Value, ApiError> {
        self.get("/path").await
    }

    pub async fn todos(&self, session: &str) -> Result<Value, ApiError> {
        self.get(&format!("/session/{}/todo", enc(session))).await
    }

    pub async fn permissions(&self, dir: Option<&str>) -> Result<Vec<Value>, ApiError> {
        array(self.get(&with_dir("/permission", dir)).await?)
    }

    pub async fn questions(&self, dir: Option<&str>) -> Result<Vec<Value>, ApiError> {
        array(self.get(&with_dir("/question", dir)).await?)
    }
}

/// A connection that failed: which server and why; when nothing listens
/// there, how to start one.
fn no_server(e: &reqwest::Error) -> String {
    // The innermost cause says why ("Connection refused", a failed lookup).
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let refused = cause
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
    let (server, port) = match e.url() {
        Some(url) => (
            format!(
                "{}://{}:{}",
                url.scheme(),
                url.host_str().unwrap_or("?"),
                url.port_or_known_default().unwrap_or(4096)
            ),
            url.port_or_known_default().unwrap_or(4096),
        ),
        None => ("the server".to_string(), 4096),
    };
    if refused {
        format!("no server at {server} (start one: opencode serve --port {port})")
    } else if e.is_timeout() {
        format!("cannot reach {server}: the connection timed out")
    } else {
        format!("cannot reach {server}: {cause}")
    }
}

fn array(v: Value) -> Result<Vec<Value>, ApiError> {
    match v {
        Value::Array(a) => Ok(a),
        Value::Null => Ok(Vec::new()),
        other => Err(ApiError::Transport {
            path: String::new(),
            message: format!("expected a list, got {}", cut(&other.to_string(), 80)),
        }),
    }
}

/// The readable part of an error body: `message`, `data.message`, `_tag`,
/// or the body itself, cut short.
fn server_message(body: &str) -> String {
    let text = match serde_json::from_str::<Value>(body) {
        Ok(v) => v
            .get("message")
            .or_else(|| v.get("data").and_then(|d| d.get("message")))
            .or_else(|| v.get("error"))
            .or_else(|| v.get("_tag"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| body.to_string()),
        Err(_) => body.to_string(),
    };
    cut(&crate::model::wire::sanitize::line(text.trim()), 200)
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_password() {
        let c = Client::new(
            "http://x",
            Some(Auth {
                username: "u".into(),
                password: "hunter2".into(),
            }),
        );
        assert!(!format!("{c:?}").contains("hunter2"));
        let e = c.error_for("/session", StatusCode::UNAUTHORIZED, "");
        assert!(!e.to_string().contains("hunter2"));
        assert!(e.to_string().contains("401"));
    }

    #[test]
    fn server_messages_are_short_and_inert() {
        assert_eq!(
            server_message(r#"{"_tag":"PermissionNotFoundError"}"#),
            "PermissionNotFoundError"
        );
        assert_eq!(server_message(r#"{"data":{"message":"bad"}}"#), "bad");
        assert_eq!(server_message("plain \u{1b}[2J"), "plain ␛[2J");
    }
}
