//! How full a session's context is: the tokens of its last assistant
//! message against its model's context limit. The limits come from the
//! server's provider list (`GET /config/providers`), which ocview turns
//! into an event of its own, `ocview.model-limits`, so a recording keeps
//! them and a replay shows the same percentage.

use std::collections::HashMap;

use serde::Deserialize;

use super::part::PartBody;
use super::session::Session;
use crate::model::lenient;

/// The event type ocview writes for the provider list.
pub const MODEL_LIMITS_EVENT: &str = "ocview.model-limits";

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelLimit {
    #[serde(rename = "providerID")]
    pub provider_id: String,
    #[serde(rename = "modelID")]
    pub model_id: String,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub context: u64,
    #[serde(deserialize_with = "lenient::u64_or_zero")]
    pub output: u64,
    /// Its prices (dollars a million tokens), when the server says them.
    pub cost: Option<Prices>,
}

/// A model's prices, dollars a million tokens, as OpenCode's provider
/// list gives them (`cost.input`, `cost.output`, `cost.cache.read`,
/// `cost.cache.write`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(default)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// Limits by (provider, model).
pub type ModelLimits = HashMap<(String, String), ModelLimit>;

/// The limits in a `GET /config/providers` answer, as the event's
/// `models` list.
pub fn limits_of_providers(answer: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let providers = answer
        .get("providers")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten();
    for provider in providers {
        let Some(pid) = provider.get("id").and_then(|v| v.as_str()) else {
            continue;
        };
        let models = provider.get("models").and_then(|m| m.as_object());
        for (mid, model) in models.into_iter().flatten() {
            let limit = &model["limit"];
            let Some(context) = limit.get("context").and_then(|v| v.as_f64()) else {
                continue;
            };
            let mut entry = serde_json::json!({
                "providerID": pid,
                "modelID": model.get("id").and_then(|v| v.as_str()).unwrap_or(mid),
                "context": context.max(0.0) as u64,
                "output": limit.get("output").and_then(|v| v.as_f64()).unwrap_or(0.0).max(0.0) as u64,
            });
            // Its prices, for what the cache saved (`insights cost`).
            let price = |path: &str| {
                model
                    .pointer(path)
                    .and_then(|v| v.as_f64())
                    .filter(|p| p.is_finite() && *p >= 0.0)
            };
            if let Some(input) = price("/cost/input") {
                entry["cost"] = serde_json::json!({
                    "input": input,
                    "output": price("/cost/output").unwrap_or(0.0),
                    "cache_read": price("/cost/cache/read").unwrap_or(0.0),
                    "cache_write": price("/cost/cache/write").unwrap_or(0.0),
                });
            }
            out.push(entry);
        }
    }
    out
}

/// A session's context use.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextUse {
    /// Tokens of the last assistant message that reported any.
    pub used: u64,
    /// Its model's context window, when known.
    pub limit: Option<u64>,
}

impl ContextUse {
    pub fn percent(&self) -> Option<u64> {
        let limit = self.limit.filter(|&l| l > 0)?;
        Some((self.used.saturating_mul(100) / limit).min(999))
    }
}

/// From the newest message back to the first assistant message with
/// tokens: a few steps, whatever the session's length. A message that
/// reported none (a run stream's) tells them by its last step.
pub fn context_use(session: &Session, limits: &ModelLimits) -> Option<ContextUse> {
    let (message, t) = session
        .messages
        .iter()
        .rev()
        .filter(|m| m.info.is_assistant())
        .find_map(|m| {
            if m.info.tokens.sum() > 0 {
                return Some((m, &m.info.tokens));
            }
            m.parts.iter().rev().find_map(|p| match &p.body {
                PartBody::StepFinish(step) if step.tokens.sum() > 0 => Some((m, &step.tokens)),
                _ => None,
            })
        })?;
    let info = &message.info;
    let used = t.input + t.output + t.reasoning + t.cache.read + t.cache.write;
    let limit = info.model.as_ref().and_then(|m| {
        limits
            .get(&(m.provider_id.clone(), m.model_id.clone()))
            .map(|l| l.context)
    });
    Some(ContextUse {
        used: if used > 0 { used } else { t.sum() },
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn providers_answer_becomes_limits() {
        let answer = json!({"providers": [
            {"id": "mock", "models": {"mock-1": {"id": "mock-1", "limit": {"context": 200000, "output": 32000}}}},
            {"id": "paid", "models": {"p-1": {"id": "p-1", "limit": {"context": 1000, "output": 10},
                "cost": {"input": 3, "output": 15, "cache": {"read": 0.3, "write": 3.75}}}}},
            {"id": "odd", "models": {"m": {"limit": {}}}},
            {"models": {}}
        ], "default": {}});
        let limits = limits_of_providers(&answer);
        assert_eq!(
            limits,
            vec![
                json!({"providerID": "mock", "modelID": "mock-1", "context": 200000, "output": 32000}),
                json!({"providerID": "paid", "modelID": "p-1", "context": 1000, "output": 10,
                       "cost": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}})
            ]
        );
        let read: ModelLimit = serde_json::from_value(limits[1].clone()).unwrap();
        assert_eq!(read.cost.map(|c| c.cache_read), Some(0.3));
    }

    #[test]
    fn percent_is_bounded() {
        let c = ContextUse {
            used: 50_000,
            limit: Some(200_000),
        };
        assert_eq!(c.percent(), Some(25));
        let c = ContextUse {
            used: 5,
            limit: Some(0),
        };
        assert_eq!(c.percent(), None);
        let c = ContextUse {
            used: u64::MAX,
            limit: Some(1),
        };
        assert_eq!(c.percent(), Some(999));
    }
}
