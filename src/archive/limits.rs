//! An archive's limits: a size cap and an age limit (`super::prune` keeps
//! an archive within them; a team archive's are its own, `Engine::policy`).

/// The defaults: 2 GB, a year.
pub const DEFAULT_MAX_MB: u64 = 2048;
pub const DEFAULT_MAX_AGE_DAYS: u64 = 365;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// The limits; `None` is no limit (a setting of 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: Option<u64>,
    pub max_age_days: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_settings(None, None)
    }
}

impl Limits {
    /// No limit at all.
    pub const NONE: Limits = Limits {
        max_bytes: None,
        max_age_days: None,
    };

    /// From the config's `archive_max_mb` and `archive_max_age_days`
    /// (unset: the defaults; 0: no limit).
    pub fn from_settings(max_mb: Option<u64>, max_age_days: Option<u64>) -> Limits {
        let mb = max_mb.unwrap_or(DEFAULT_MAX_MB);
        let days = max_age_days.unwrap_or(DEFAULT_MAX_AGE_DAYS);
        Limits {
            max_bytes: (mb > 0).then(|| mb.saturating_mul(1024 * 1024)),
            max_age_days: (days > 0).then_some(days),
        }
    }

    /// As of `now_ms`, the oldest last update the age limit keeps: what
    /// is older is pruned, and an importer leaves it out.
    pub fn age_floor(&self, now_ms: i64) -> Option<i64> {
        self.max_age_days
            .map(|days| now_ms.saturating_sub((days as i64).saturating_mul(DAY_MS)))
    }
}
