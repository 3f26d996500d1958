//! Where a part came from (seed 000).
//!
//! Wire parts come from opencode's message-part pipeline and are replaced by
//! the authoritative `GET /session/{id}/message` result at finalisation.
//! Stream-only parts are materialised from bus events opencode never stores
//! as parts; finalisation keeps them. Adding a source is one variant here.

use super::part::Part;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartSource {
    /// The todo list from `todo.updated`, shown through the todo tool's card.
    TodoUpdated,
}

/// Every source that is stream-only; finalisation keeps these parts.
pub const STREAM_ONLY: &[PartSource] = &[PartSource::TodoUpdated];

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unknown stream-only source {0:?}; register it in PartSource first")]
pub struct UnknownSource(pub String);

impl PartSource {
    pub fn name(self) -> &'static str {
        match self {
            PartSource::TodoUpdated => "todo.updated",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        STREAM_ONLY.iter().copied().find(|s| s.name() == name)
    }

    pub fn is_stream_only(self) -> bool {
        STREAM_ONLY.contains(&self)
    }
}

/// Stamp a part with its source, by name. An unregistered name is an error at
/// write time, so a typo cannot silently make a part look like a wire part.
pub fn stamp(part: &mut Part, source: &str) -> Result<(), UnknownSource> {
    let source = PartSource::from_name(source).ok_or_else(|| UnknownSource(source.to_string()))?;
    part.source = Some(source);
    Ok(())
}
