//! Where the money went: what the archive's spending (`archive::spend`)
//! adds up to: cost and tokens in all, by model and by day, each with its
//! cache-read share (cache reads ÷ (input + cache reads): how much of what
//! the model read came from the provider's cache); what the steps that
//! made a failed tool call cost; retries by provider and the time they
//! cost; the costliest sessions.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::archive::spend::{SessionSpend, Spending};
use crate::source::opencode_db::usage::{DAY_MS, Figures};

/// Cache reads ÷ (input + cache reads); `None` when nothing was read.
pub fn cache_share(f: &Figures) -> Option<f64> {
    let read = f.input + f.cache_read;
    (read > 0).then(|| f.cache_read as f64 / read as f64)
}

/// One model's spending.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelCost {
    pub model: String,
    pub messages: u64,
    #[serde(flatten)]
    pub figures: Figures,
    pub cache_share: Option<f64>,
    /// What reading from the cache saved against reading as input, at the
    /// model's prices (`None`: no server said them).
    pub saved: Option<f64>,
    /// Its steps that made a failed tool call, and what they cost.
    pub failed_steps: u64,
    pub failed_cost: f64,
}

/// One day's spending.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayCost {
    /// `YYYY-MM-DD`, on the clock the days were cut by.
    pub day: String,
    pub messages: u64,
    #[serde(flatten)]
    pub figures: Figures,
    pub cache_share: Option<f64>,
}

/// One provider's retries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderRetries {
    pub provider: String,
    pub retries: u64,
    pub sessions: u64,
    /// Waited in all until the next attempts (ms), and the longest wait,
    /// of the retries whose wait is known (`Retry::waited`).
    pub waited_ms: i64,
    pub longest_ms: i64,
}

/// Every figure of the cost view and `ocview insights cost`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cost {
    pub messages: u64,
    pub total: Figures,
    pub cache_share: Option<f64>,
    /// What the cache saved, over the models whose prices are known.
    pub saved: Option<f64>,
    /// Costliest first.
    pub by_model: Vec<ModelCost>,
    /// Oldest first; only days that had messages.
    pub by_day: Vec<DayCost>,
    pub failed_steps: u64,
    pub failed_cost: f64,
    /// Most retries first.
    pub retries: Vec<ProviderRetries>,
    pub costliest: Vec<SessionSpend>,
}

impl Cost {
    pub fn retry_count(&self) -> u64 {
        self.retries.iter().map(|r| r.retries).sum()
    }

    pub fn retry_wait_ms(&self) -> i64 {
        self.retries.iter().map(|r| r.waited_ms).sum()
    }
}

/// The figures of `s`; `model`: only that model's retries (the engine
/// filtered the rest by model already).
pub fn figures(s: &Spending, model: Option<&str>) -> Cost {
    let mut out = Cost::default();
    let mut models: BTreeMap<&str, ModelCost> = BTreeMap::new();
    let mut days: BTreeMap<i64, (u64, Figures)> = BTreeMap::new();
    for d in &s.by_model_day {
        out.messages += d.messages;
        out.total.add(&d.figures);
        let m = models.entry(&d.model).or_insert_with(|| ModelCost {
            model: d.model.clone(),
            messages: 0,
            figures: Figures::default(),
            cache_share: None,
            saved: None,
            failed_steps: 0,
            failed_cost: 0.0,
        });
        m.messages += d.messages;
        m.figures.add(&d.figures);
        let day = days.entry(d.day).or_default();
        day.0 += d.messages;
        day.1.add(&d.figures);
    }
    for f in &s.failed_steps {
        out.failed_steps += f.steps;
        out.failed_cost += f.cost;
        if let Some(m) = models.get_mut(f.model.as_str()) {
            m.failed_steps += f.steps;
            m.failed_cost += f.cost;
        }
    }
    out.cache_share = cache_share(&out.total);
    let prices: BTreeMap<&str, &crate::model::entity::context::Prices> =
        s.prices.iter().map(|(m, p)| (m.as_str(), p)).collect();
    out.by_model = models
        .into_values()
        .map(|mut m| {
            m.cache_share = cache_share(&m.figures);
            m.saved = prices
                .get(m.model.as_str())
                .map(|p| m.figures.cache_read as f64 * (p.input - p.cache_read).max(0.0) / 1e6);
            m
        })
        .collect();
    out.saved = out
        .by_model
        .iter()
        .filter_map(|m| m.saved)
        .reduce(|a, b| a + b);
    out.by_model.sort_by(|a, b| {
        b.figures
            .cost
            .total_cmp(&a.figures.cost)
            .then(b.messages.cmp(&a.messages))
            .then(a.model.cmp(&b.model))
    });
    out.by_day = days
        .into_iter()
        .map(|(day, (messages, figures))| DayCost {
            day: date(day),
            messages,
            cache_share: cache_share(&figures),
            figures,
        })
        .collect();
    let mut providers: BTreeMap<&str, (ProviderRetries, BTreeSet<&str>)> = BTreeMap::new();
    for r in &s.retries {
        if model.is_some_and(|m| r.model.as_deref() != Some(m)) {
            continue;
        }
        let (p, sessions) = providers.entry(r.provider()).or_insert_with(|| {
            (
                ProviderRetries {
                    provider: r.provider().to_string(),
                    retries: 0,
                    sessions: 0,
                    waited_ms: 0,
                    longest_ms: 0,
                },
                BTreeSet::new(),
            )
        });
        p.retries += 1;
        let waited = r.waited().unwrap_or(0);
        p.waited_ms += waited;
        p.longest_ms = p.longest_ms.max(waited);
        sessions.insert(&r.session_id);
    }
    out.retries = providers
        .into_values()
        .map(|(mut p, sessions)| {
            p.sessions = sessions.len() as u64;
            p
        })
        .collect();
    out.retries
        .sort_by(|a, b| b.retries.cmp(&a.retries).then(a.provider.cmp(&b.provider)));
    out.costliest = s.costliest.clone();
    out
}

/// Dollars as the views say them: `$0.00` for nothing (a figure, not a
/// blank), `<$0.01`, `$1.23`.
pub fn money(usd: f64) -> String {
    match crate::render::format::cost(usd) {
        s if s.is_empty() => "$0.00".into(),
        s => s,
    }
}

/// A day number (days since 1970) as `YYYY-MM-DD`.
pub fn date(day: i64) -> String {
    let Some(d) = i32::try_from(day + 2_440_588)
        .ok()
        .and_then(|j| time::Date::from_julian_day(j).ok())
    else {
        return day.to_string();
    };
    format!("{}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// The local offset the days are cut by, as of `now_ms`.
pub fn day_offset_ms(now_ms: i64) -> i64 {
    crate::source::opencode_db::usage::local_offset_ms(now_ms)
}

/// The day number of a time (ms) on a clock `offset_ms` from UTC.
pub fn day_of(ms: i64, offset_ms: i64) -> i64 {
    (ms + offset_ms).div_euclid(DAY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::spend::{DaySpend, FailedSteps, Retry};

    fn spent(model: &str, day: i64, cost: f64, input: u64, cache_read: u64) -> DaySpend {
        DaySpend {
            model: model.into(),
            day,
            messages: 2,
            figures: Figures {
                cost,
                input,
                cache_read,
                ..Figures::default()
            },
        }
    }

    #[test]
    fn spending_adds_up_by_model_day_and_provider() {
        let retry = |session: &str, model: &str, at: i64, next: i64| Retry {
            session_id: session.into(),
            project: None,
            model: Some(model.into()),
            attempt: 1,
            at,
            next,
            message: "Overloaded".into(),
        };
        let s = Spending {
            by_model_day: vec![
                spent("a/x", 20_000, 1.0, 300, 100),
                spent("a/x", 20_001, 2.0, 100, 500),
                spent("b/y", 20_001, 4.0, 1000, 0),
            ],
            costliest: Vec::new(),
            failed_steps: vec![FailedSteps {
                model: "a/x".into(),
                steps: 1,
                cost: 0.5,
            }],
            prices: vec![(
                "a/x".into(),
                crate::model::entity::context::Prices {
                    input: 3.0,
                    cache_read: 0.3,
                    ..Default::default()
                },
            )],
            retries: vec![
                retry("s1", "a/x", 0, 2_000),
                retry("s1", "a/x", 5_000, 9_000),
                retry("s2", "b/y", 0, 1_000),
            ],
        };
        let c = figures(&s, None);
        assert_eq!((c.messages, c.total.cost), (6, 7.0));
        assert_eq!(c.cache_share, Some(600.0 / 2000.0));
        assert_eq!(c.by_model[0].model, "b/y");
        assert_eq!(c.by_model[0].cache_share, Some(0.0));
        let x = &c.by_model[1];
        assert_eq!(
            (x.cache_share, x.failed_steps, x.failed_cost),
            (Some(0.6), 1, 0.5)
        );
        assert_eq!(
            c.by_day.iter().map(|d| d.day.as_str()).collect::<Vec<_>>(),
            ["2024-10-04", "2024-10-05"]
        );
        assert_eq!(c.by_day[1].figures.cost, 6.0);
        assert_eq!((c.retry_count(), c.retry_wait_ms()), (3, 7_000));
        assert_eq!(
            (c.retries[0].provider.as_str(), c.retries[0].sessions),
            ("a", 1)
        );
        assert_eq!(c.retries[0].longest_ms, 4_000);
        assert_eq!(figures(&s, Some("b/y")).retry_count(), 1);
        // 600 cache reads at $3 less $0.30 a million: priced for a/x only.
        let saved = 600.0 * 2.7 / 1e6;
        assert_eq!((x.saved, c.by_model[0].saved), (Some(saved), None));
        assert_eq!(c.saved, Some(saved));
        assert_eq!(cache_share(&Figures::default()), None);
    }
}
