//! A server of a fleet: where it stands, and the report a source sends
//! when that changes (ocview's own `ocview.server` event).

use serde::{Deserialize, Serialize};

/// Where one server of a fleet stands.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum ServerState {
    Connecting,
    Live,
    Reconnecting {
        #[serde(default)]
        attempt: u32,
        #[serde(default)]
        reason: String,
    },
    /// The password was refused or is missing: retrying cannot help.
    AuthFailed {
        #[serde(default)]
        reason: String,
    },
    /// Failed for good for another reason.
    Failed {
        #[serde(default)]
        reason: String,
    },
    /// Not found any more: its sessions stay, marked, until dismissed.
    Gone,
}

impl ServerState {
    /// A few words for the list and the status line.
    pub fn label(&self) -> String {
        match self {
            ServerState::Connecting => "connecting".into(),
            ServerState::Live => "live".into(),
            ServerState::Reconnecting { attempt, .. } => format!("reconnecting {attempt}"),
            ServerState::AuthFailed { .. } => "auth failed".into(),
            ServerState::Failed { .. } => "failed".into(),
            ServerState::Gone => "gone".into(),
        }
    }

    /// The reason behind a state that is not well, if one was given.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ServerState::Reconnecting { reason, .. }
            | ServerState::AuthFailed { reason }
            | ServerState::Failed { reason } => Some(reason).filter(|r| !r.is_empty()),
            _ => None,
        }
        .map(String::as_str)
    }

    pub fn is_live(&self) -> bool {
        matches!(self, ServerState::Live)
    }
}

/// `ocview.server`: a server of the fleet changed state (or joined).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ServerReport {
    /// Filled in by the fleet (`store::fleet::scope_event`) from the line that names the server;
    /// a report without one is ignored.
    #[serde(skip)]
    pub key: String,
    #[serde(default)]
    pub url: String,
    /// The server's project directory, when known.
    #[serde(default)]
    pub directory: Option<String>,
    #[serde(flatten)]
    pub state: ServerState,
}

impl ServerReport {
    /// The report's properties, as a source writes them.
    pub fn properties(
        url: &str,
        directory: Option<&str>,
        state: &ServerState,
    ) -> serde_json::Value {
        let mut props = serde_json::to_value(state).unwrap_or_default();
        props["url"] = url.into();
        if let Some(dir) = directory {
            props["directory"] = dir.into();
        }
        props
    }
}
