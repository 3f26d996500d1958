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
    /// When each session that went was last updated (ms).
    pub updated: std::collections::HashMap<String, i64>,
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

/// The titles of sessions about to go, as the archive lists them, and
/// when each was last updated.
fn note_gone(engine: &mut dyn Engine, gone: &[(String, i64)], out: &mut Pruned) {
    for (id, updated) in gone {
        out.titles.insert(id.clone(), title_of(engine, id));
        out.updated.insert(id.clone(), *updated);
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

/// What a prune would take now, without taking it (`ocview archive prune
/// --dry-run`): the prune itself, rehearsed (its deletes undone at the
/// end), so the real run that follows takes exactly this.
pub fn dry_run(
    engine: &mut dyn Engine,
    limits: &Limits,
    now_ms: i64,
) -> Result<Pruned, ArchiveError> {
    if *limits == Limits::NONE {
        let held = engine.size()?;
        return Ok(Pruned {
            bytes_before: held,
            bytes_after: held,
            ..Pruned::default()
        });
    }
    engine.rehearse(true)?;
    let rehearsed = prune(engine, limits, now_ms);
    let ended = engine.rehearse(false);
    let rehearsed = rehearsed?;
    ended?;
    Ok(rehearsed)
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

/// Prune `engine` to `limits` as of `now_ms`: every session past the age
/// limit, then the oldest until the size is under the cap. Pinned
/// sessions stay; the newest session is never pruned for size (a cap
/// below one session keeps that one).
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
    let pinned: std::collections::HashSet<String> = engine.pins()?.into_iter().collect();
    if let Some(before) = limits.age_floor(now_ms) {
        let aged = prunable(engine, &pinned, Some(before), u32::MAX)?;
        for round in aged.chunks(ROUND as usize) {
            note_gone(engine, round, &mut out);
            let ids: Vec<String> = round.iter().map(|(id, _)| id.clone()).collect();
            engine.delete_sessions(&ids)?;
            out.by_age.extend(ids);
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
            let old = prunable(engine, &pinned, None, take)?;
            if old.is_empty() {
                break;
            }
            note_gone(engine, &old, &mut out);
            let ids: Vec<String> = old.into_iter().map(|(id, _)| id).collect();
            engine.delete_sessions(&ids)?;
            out.by_size.extend(ids);
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
