//! Is an opencode server there? `GET /global/health` says so (and its
//! version); `GET /path` says which project directory it serves. Each
//! request has a short timeout: a silent listener costs at most that.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::source::live::{Auth, Client};

/// What a server said about itself (untrusted text: sanitize to show).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub version: Option<String>,
    /// The project directory (`/path` → `directory`).
    pub directory: Option<String>,
    /// Its state directory: with the port and the project directory it
    /// tells one server reached at two addresses from two servers.
    pub state: Option<String>,
    /// It answered 401: a server started with a password, which ocview was
    /// not given (or was refused).
    pub needs_password: bool,
}

/// How long `/path` may take: unlike the health check it needs the
/// server's project instance, which a server just started builds on the
/// first such request (seconds on a busy machine).
pub const PATH_TIMEOUT: Duration = Duration::from_secs(6);

/// The server at `url`, or `None` when nothing healthy answers there
/// within `timeout`.
pub async fn confirm(url: &str, auth: Option<Auth>, timeout: Duration) -> Option<Identity> {
    let client = Client::new(url, auth);
    let (status, health) = get(&client, "/global/health", timeout).await?;
    if status == StatusCode::UNAUTHORIZED {
        return Some(Identity {
            needs_password: true,
            ..Identity::default()
        });
    }
    if !status.is_success() || health.get("healthy") != Some(&Value::Bool(true)) {
        return None;
    }
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let mut identity = Identity {
        version: text(&health, "version"),
        ..Identity::default()
    };
    if let Some((status, path)) = get(&client, "/path", PATH_TIMEOUT.max(timeout)).await
        && status.is_success()
    {
        identity.directory = text(&path, "directory");
        identity.state = text(&path, "state");
    }
    Some(identity)
}

/// A GET's status and JSON body (`Null` when not JSON); `None` when no
/// answer came in time.
async fn get(client: &Client, path: &str, timeout: Duration) -> Option<(StatusCode, Value)> {
    let response = client
        .request(Method::GET, path, Some(timeout))
        .send()
        .await
        .ok()?;
    let status = response.status();
    let mut response = response;
    let mut body = Vec::new();
    // A health or path answer is a few hundred bytes: read no more than
    // 64 KiB of anything else (the request's timeout bounds the time).
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > 64 * 1024 {
            return Some((status, Value::Null));
        }
        body.extend_from_slice(&chunk);
    }
    let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some((status, value))
}
