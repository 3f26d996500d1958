//! The archive, bounded: an age limit and a size cap, each pruning the
//! least recently updated sessions whole. Run by the background writer
//! (at start and every so many writes) and by `ocview archive prune`,
//! never on the UI's thread.

use crate::archive::engine::{ArchiveError, Engine};

pub use crate::archive::limits::{DEFAULT_MAX_AGE_DAYS, DEFAULT_MAX_MB, Limits};

/// Sessions deleted in one transaction at most (a writer's turn stays short).
const ROUND: u32 = 500;

/// What one pruning took away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Sessions older than the age limit.
    pub by_age: Vec<String>,
    /// Sessions deleted, oldest first, to come under the size cap.
    pub by_size: Vec<String>,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// The title of each session that went, as last kept (for the log).
    pub titles: std::collections::HashMap<String, String>,
}

impl Pruned {
    pub fn sessions(&self) -> usize {
        self.by_age.len() + self.by_size.len()
    }

    /// One line for the status line or the terminal, or `None` when
    /// nothing went: "pruned 12 oldest sessions (size cap 2 GB)".
    pub fn summary(&self, limits: &Limits) -> Option<String> {
        if self.sessions() == 0 {
            return None;
        }
        let mut why = Vec::new();
        if let (false, Some(days)) = (self.by_age.is_empty(), limits.max_age_days) {
            why.push(format!("older than {days} days"));
        }
        if let (false, Some(cap)) = (self.by_size.is_empty(), limits.max_bytes) {
            why.push(format!("size cap {}", bytes(cap)));
        }
        let n = self.sessions();
        Some(format!(
            "pruned {n} oldest session{} ({})",
            if n == 1 { "" } else { "s" },
            why.join(", ")
        ))
    }
}

/// "2 GB", "512 MB", "40 KB": how a size is said.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value >= 10.0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The titles of sessions about to go, as the archive lists them.
fn note_titles(
    engine: &mut dyn Engine,
    ids: &[String],
    titles: &mut std::collections::HashMap<String, String>,
) {
    for id in ids {
        titles.insert(id.clone(), title_of(engine, id));
    }
}

/// A session's title as the archive lists it (empty when it has none).
pub fn title_of(engine: &mut dyn Engine, id: &str) -> String {
    engine
        .listed(id)
        .ok()
        .flatten()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(&l.raw).ok())
        .and_then(|v| v.get("title")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// What a prune would take now, without taking it (`ocview archive prune
/// --dry-run`): every session past the age limit, exactly; then the
/// oldest the size cap would take, estimated from the archive's size and
/// number of sessions (sessions differ in size: a prune checks the size
/// again after each round). Each as (id, last updated ms).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub by_age: Vec<(String, i64)>,
    pub by_size: Vec<(String, i64)>,
    /// The archive's size now.
    pub bytes: u64,
}

/// The limits an archive is pruned to: a team archive's own policy, one
/// for every writer; a file's, its machine's (`local`).
pub fn limits_for(engine: &mut dyn Engine, local: &Limits) -> Result<Limits, ArchiveError> {
    Ok(engine.policy()?.unwrap_or(*local))
}

/// The sessions a prune may take: the oldest (`limit` of them, updated
/// before `before` when given), the pinned left out.
fn prunable(
    engine: &mut dyn Engine,
    pinned: &std::collections::HashSet<String>,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<(String, i64)>, ArchiveError> {
    let asked = limit.saturating_add(pinned.len().min(u32::MAX as usize) as u32);
    let mut out = engine.oldest_sessions(before, asked)?;
    out.retain(|(id, _)| !pinned.contains(id));
    out.truncate(limit as usize);
    Ok(out)
}

pub fn plan(engine: &mut dyn Engine, limits: &Limits, now_ms: i64) -> Result<Plan, ArchiveError> {
    let mut out = Plan {
        bytes: engine.size()?,
        ..Plan::default()
    };
    let pinned: std::collections::HashSet<String> = engine.pins()?.into_iter().collect();
    if let Some(before) = limits.age_floor(now_ms) {
        out.by_age = prunable(engine, &pinned, Some(before), u32::MAX)?;
    }
    let held = engine
        .counts()?
        .sessions
        .saturating_sub(pinned.len() as u64);
    if let (Some(cap), true) = (limits.max_bytes, held > 0) {
        // What the age limit takes, at the average session's size.
        let aged = out.by_age.len() as u64;
        let left = held.saturating_sub(aged);
        let size = out.bytes.saturating_sub(out.bytes / held * aged);
        if size > cap && left > 1 {
            let share = ((size - cap) as f64 / size as f64 * left as f64).ceil() as u64;
            let take = share.clamp(1, left - 1);
            let oldest = prunable(
                engine,
                &pinned,
                None,
                (aged + take).min(u64::from(u32::MAX)) as u32,
            )?;
            out.by_size = oldest.into_iter().skip(aged as usize).collect();
        }
    }
    Ok(out)
}

/// The share of the size cap past which the status line warns, before
/// anything is pruned for size.
pub const WARN_AT: f64 = 0.9;

/// A warning when the archive holds `WARN_AT` of its size cap or more.
pub fn nearly_full(bytes_held: u64, limits: &Limits) -> Option<String> {
    let cap = limits.max_bytes?;
    ((bytes_held as f64) >= cap as f64 * WARN_AT).then(|| {
        format!(
            "archive: {} of its {} cap; past it the oldest sessions are pruned (archive_max_mb; \
             `ocview archive prune --dry-run` lists them)",
            bytes(bytes_held),
            bytes(cap)
        )
    })
}

/// Prune `engine` to `limits` as of `now_ms`. The newest session is never
/// pruned for size: a cap below one session keeps that one.
pub fn prune(
    engine: &mut dyn Engine,
    limits: &Limits,
    now_ms: i64,
) -> Result<Pruned, ArchiveError> {
    let mut out = Pruned::default();
    if engine.read_only().is_some() || *limits == Limits::NONE {
        return Ok(out);
    }
    out.bytes_before = engine.size()?;
    // What a dry run lists now goes first, as it listed it; then, if
    // sessions were larger than their share, the size is checked again.
    let planned = plan(engine, limits, now_ms)?;
    let pinned: std::collections::HashSet<String> = engine.pins()?.into_iter().collect();
    for (list, into) in [
        (planned.by_age, &mut out.by_age),
        (planned.by_size, &mut out.by_size),
    ] {
        let ids: Vec<String> = list.into_iter().map(|(id, _)| id).collect();
        for round in ids.chunks(ROUND as usize) {
            note_titles(engine, round, &mut out.titles);
            engine.delete_sessions(round)?;
            into.extend(round.iter().cloned());
        }
    }
    let mut size = engine.size()?;
    if let Some(cap) = limits.max_bytes {
        while size > cap {
            let held = engine
                .counts()?
                .sessions
                .saturating_sub(pinned.len() as u64);
            if held <= 1 {
                break;
            }
            // The share of sessions the excess is of the whole, at least
            // one: sessions differ in size, so the loop checks again.
            let share = ((size - cap) as f64 / size as f64 * held as f64).ceil() as u64;
            let take = share.clamp(1, held - 1).min(u64::from(ROUND)) as u32;
            let old: Vec<String> = prunable(engine, &pinned, None, take)?
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            if old.is_empty() {
                break;
            }
            note_titles(engine, &old, &mut out.titles);
            engine.delete_sessions(&old)?;
            out.by_size.extend(old);
            size = engine.size()?;
        }
    }
    out.bytes_after = size;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_zero_is_none_and_sizes_are_said_short() {
        assert_eq!(
            Limits::default(),
            Limits {
                max_bytes: Some(2048 * 1024 * 1024),
                max_age_days: Some(365)
            }
        );
        assert_eq!(Limits::from_settings(Some(0), Some(0)), Limits::NONE);
        assert_eq!(bytes(2048 * 1024 * 1024), "2 GB");
        assert_eq!(bytes(1536 * 1024), "1.5 MB");
        assert_eq!(bytes(300), "300 B");
        let p = Pruned {
            by_size: vec!["a".into(); 12],
            ..Pruned::default()
        };
        assert_eq!(
            p.summary(&Limits::default()).unwrap(),
            "pruned 12 oldest sessions (size cap 2 GB)"
        );
        assert_eq!(Pruned::default().summary(&Limits::default()), None);
    }
}
