//! Where the money went (#41, point 3): what the archive's assistant
//! messages cost and the tokens they took, by model and day; the costliest
//! sessions; what the steps that made a failed tool call cost; and every
//! retry a session waited through (`session.status` of type `retry`: its
//! attempt, when it was said, and when the next attempt was due).
//!
//! Since schema 18 a message's row keeps its cost and tokens (OpenCode's
//! `cost` and `tokens`), so both engines sum columns, whether the message's
//! JSON is in its row or only in the event log; rows written before are
//! filled from their JSON the first time the figures are asked for.

use serde::Serialize;

use crate::archive::tool_calls::{FAILED_SQL, OUTCOME_SQL};
use crate::source::opencode_db::usage::Figures;

/// The schema that keeps retries.
pub const SINCE: i64 = 18;

/// Migration 18's SQL (both engines): the retries, and each message's
/// cost and tokens in its row, with the few rows still to be read from
/// their JSON (those written before).
pub const SQL: &str = "CREATE TABLE retries (
        session_id TEXT NOT NULL,
        next BIGINT NOT NULL,
        attempt BIGINT NOT NULL,
        at BIGINT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (session_id, next)
    );
    CREATE INDEX retries_by_at ON retries (at);
    ALTER TABLE messages ADD COLUMN cost DOUBLE PRECISION;
    ALTER TABLE messages ADD COLUMN tokens_input BIGINT;
    ALTER TABLE messages ADD COLUMN tokens_output BIGINT;
    ALTER TABLE messages ADD COLUMN tokens_reasoning BIGINT;
    ALTER TABLE messages ADD COLUMN tokens_cache_read BIGINT;
    ALTER TABLE messages ADD COLUMN tokens_cache_write BIGINT;
    CREATE INDEX messages_spend_unread ON messages (role)
        WHERE role = 'assistant' AND cost IS NULL;
    CREATE TABLE prices (
        model TEXT PRIMARY KEY,
        input DOUBLE PRECISION NOT NULL,
        output DOUBLE PRECISION NOT NULL,
        cache_read DOUBLE PRECISION NOT NULL,
        cache_write DOUBLE PRECISION NOT NULL,
        seen BIGINT NOT NULL
    );";

/// A model's prices as a server last said them (dollars a million
/// tokens): what the cache saved is counted at them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PriceRow {
    /// `provider/model`, as messages name it.
    pub model: String,
    pub prices: crate::model::entity::context::Prices,
    /// When it was said (ms).
    pub seen: i64,
}

/// The upsert of a price (both engines' placeholders): the latest said.
pub fn price_upsert_sql(param: fn(usize) -> String) -> String {
    let p: Vec<String> = (1..=6).map(param).collect();
    format!(
        "INSERT INTO prices (model, input, output, cache_read, cache_write, seen)
         VALUES ({}, {}, {}, {}, {}, {})
         ON CONFLICT (model) DO UPDATE SET input = excluded.input, output = excluded.output,
           cache_read = excluded.cache_read, cache_write = excluded.cache_write,
           seen = excluded.seen
         WHERE excluded.seen >= prices.seen",
        p[0], p[1], p[2], p[3], p[4], p[5]
    )
}

/// Every model's prices: model, input, output, cache read, cache write.
pub const PRICES_SQL: &str =
    "SELECT model, input, output, cache_read, cache_write FROM prices ORDER BY model";

/// The columns that keep a message's figures, in `Figures`' order.
pub const COLUMNS: [&str; 6] = [
    "cost",
    "tokens_input",
    "tokens_output",
    "tokens_reasoning",
    "tokens_cache_read",
    "tokens_cache_write",
];

/// A message's figures from its JSON (what OpenCode says: `cost`,
/// `tokens.input`, `tokens.output`, `tokens.reasoning`,
/// `tokens.cache.read`, `tokens.cache.write`); nothing where it is not
/// JSON or says none.
pub fn spend_of(json: &str) -> Figures {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return Figures::default();
    };
    let n = |path: &str| {
        v.pointer(path)
            .and_then(|x| x.as_f64())
            .filter(|x| x.is_finite())
            .unwrap_or(0.0)
    };
    let t = |path: &str| n(path).max(0.0) as u64;
    Figures {
        cost: n("/cost"),
        input: t("/tokens/input"),
        output: t("/tokens/output"),
        reasoning: t("/tokens/reasoning"),
        cache_read: t("/tokens/cache/read"),
        cache_write: t("/tokens/cache/write"),
    }
}

/// The upsert (both engines' placeholders): a retry said twice is kept once,
/// at the first time it was said.
pub fn upsert_sql(param: fn(usize) -> String) -> String {
    let p: Vec<String> = (1..=5).map(param).collect();
    format!(
        "INSERT INTO retries (session_id, next, attempt, at, message)
         VALUES ({}, {}, {}, {}, {})
         ON CONFLICT (session_id, next) DO UPDATE SET at = excluded.at
         WHERE excluded.at < retries.at",
        p[0], p[1], p[2], p[3], p[4]
    )
}

/// One retry as a batch carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RetryRow {
    pub session_id: String,
    /// When the next attempt was due (ms): with the session, its key.
    pub next: i64,
    pub attempt: i64,
    /// When the retry was said (ms).
    pub at: i64,
    /// Why (the provider's error, as OpenCode says it).
    pub message: String,
}

impl RetryRow {
    /// A retry said of `session_id` at `at` (ms); where the server gave no
    /// time for the next attempt, the time it was said keys it.
    pub fn said(
        session_id: &str,
        at: i64,
        attempt: Option<u64>,
        message: &str,
        next: Option<i64>,
    ) -> RetryRow {
        RetryRow {
            session_id: session_id.to_string(),
            next: next.unwrap_or(at),
            attempt: attempt.map_or(0, |a| a.min(i64::MAX as u64) as i64),
            at,
            message: message.to_string(),
        }
    }
}

/// The retries one block of a session's log holds: logs written before
/// schema 18, whose retries no table kept, are read for them once. The
/// log dates a block by its first event, not each event: a retry that is
/// its block's first is dated exactly; any other is dated a millisecond
/// after its next attempt was due, so it counts, in its day, with its
/// wait unknown (`Retry::waited`) rather than guessed. `events`: the
/// block's, unpacked.
pub fn logged_retries(session_id: &str, block_time: i64, events: &[String]) -> Vec<RetryRow> {
    let mut found = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if !e.contains("\"session.status\"") || !e.contains("\"retry\"") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(e) else {
            continue;
        };
        let event = v.get("payload").unwrap_or(&v);
        let Some(status) = event.pointer("/properties/status") else {
            continue;
        };
        if text_at(event, "type") != Some("session.status")
            || text_at(status, "type") != Some("retry")
        {
            continue;
        }
        let next = status
            .get("next")
            .and_then(|n| n.as_f64())
            .filter(|n| n.is_finite())
            .map(|n| n as i64);
        let at = match next {
            Some(next) if i > 0 => next.saturating_add(1),
            _ => block_time,
        };
        found.push(RetryRow::said(
            session_id,
            at,
            status.get("attempt").and_then(|a| a.as_u64()),
            text_at(status, "message").unwrap_or(""),
            next,
        ));
    }
    found
}

/// The text at `key` of a JSON object, if it is text.
fn text_at<'a>(of: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    of.get(key).and_then(|k| k.as_str())
}

/// Cost and tokens of one model's messages on one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DaySpend {
    /// `provider/model`, or `?` when the message does not say.
    pub model: String,
    /// Days since 1970 on the asker's clock (`Spending::day_offset_ms`).
    pub day: i64,
    pub messages: u64,
    #[serde(flatten)]
    pub figures: Figures,
}

/// One of the costliest sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSpend {
    pub session_id: String,
    pub title: String,
    pub project: Option<String>,
    pub messages: u64,
    #[serde(flatten)]
    pub figures: Figures,
    /// Where it was archived from (to open it).
    pub server: Option<String>,
    pub host: Option<String>,
    pub file: Option<String>,
}

impl SessionSpend {
    /// The session as a search hit: what opens it.
    pub fn hit(&self) -> crate::archive::query::Hit {
        crate::archive::query::Hit {
            session_id: self.session_id.clone(),
            title: self.title.clone(),
            time: 0,
            project: self.project.clone(),
            server: self.server.clone(),
            host: self.host.clone(),
            file: self.file.clone(),
            message_id: None,
            part_id: None,
            kind: "title".into(),
            snippet: String::new(),
        }
    }
}

/// The steps (assistant messages) of one model that made a failed tool
/// call (`tool_calls::Outcome::failed`), and what they cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedSteps {
    pub model: String,
    pub steps: u64,
    pub cost: f64,
}

/// One retry, with the model the session was answering with then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Retry {
    pub session_id: String,
    pub project: Option<String>,
    pub model: Option<String>,
    pub attempt: i64,
    pub at: i64,
    pub next: i64,
    pub message: String,
}

impl Retry {
    /// The provider (the model's first half), or `?`.
    pub fn provider(&self) -> &str {
        self.model
            .as_deref()
            .and_then(|m| m.split_once('/').map(|(p, _)| p))
            .unwrap_or("?")
    }

    /// The time it cost: from when it was said to the next attempt; `None`
    /// where the two clocks disagree (said after it was due, or more than
    /// a day before: a machine's clock far from the server's).
    pub fn waited(&self) -> Option<i64> {
        let ms = self.next.checked_sub(self.at)?;
        (0..=crate::source::opencode_db::usage::DAY_MS)
            .contains(&ms)
            .then_some(ms)
    }
}

/// Everything `Engine::spending` reads for a filter.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Spending {
    pub by_model_day: Vec<DaySpend>,
    pub costliest: Vec<SessionSpend>,
    pub failed_steps: Vec<FailedSteps>,
    pub retries: Vec<Retry>,
    /// Models' prices, where a server said them.
    pub prices: Vec<(String, crate::model::entity::context::Prices)>,
}

/// How many costliest sessions are read.
pub const COSTLIEST: i64 = 50;
/// The most retries read at once.
pub const RETRIES_MAX: i64 = 100_000;

/// What a reader says when messages written before schema 18 are still
/// to be read (it may not write them): figures short of them would mislead.
pub fn unread_message(unread: i64) -> String {
    format!(
        "{unread} assistant messages written before cost figures were kept are not read yet: open the archive once with a writable ocview"
    )
}

/// How an engine spells its placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Placeholder `i`, typed where PostgreSQL must know its type.
    fn param(self, i: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{i}"),
            Dialect::Postgres => {
                let t = if i <= 2 || i == 6 { "bigint" } else { "text" };
                format!("${i}::{t}")
            }
        }
    }

    /// The sums every query reports, in `Figures`' order.
    fn sums() -> String {
        COLUMNS
            .iter()
            // A double on both engines (PostgreSQL sums a BIGINT as NUMERIC).
            .map(|c| format!("CAST(sum(coalesce(m.{c}, 0)) AS DOUBLE PRECISION)"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The assistant messages a filter admits: range (`1`, `2`) by when
    /// they were made, project (`3`), machine (`4`), model (`5`).
    fn messages(self) -> String {
        let p = |i| self.param(i);
        format!(
            "FROM messages m LEFT JOIN sessions s ON s.id = m.session_id
             WHERE m.role = 'assistant'
               AND ({0} IS NULL OR m.created >= {0}) AND ({1} IS NULL OR m.created < {1})
               AND ({2} IS NULL OR s.directory = {2}) AND ({3} IS NULL OR s.host = {3})
               AND ({4} IS NULL OR coalesce(m.model, '?') = {4})",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5)
        )
    }

    /// By model and day (`6`: the offset added before a time is cut into
    /// days): model, day, messages, then the sums.
    pub fn by_model_day_sql(self) -> String {
        format!(
            "SELECT coalesce(m.model, '?'), (m.created + {}) / 86400000, count(*), {}
             {} GROUP BY 1, 2 ORDER BY 1, 2",
            self.param(6),
            Dialect::sums(),
            self.messages()
        )
    }

    /// The costliest sessions: id, title, project, messages, the sums, then
    /// where each was archived from.
    pub fn costliest_sql(self) -> String {
        format!(
            "SELECT m.session_id, coalesce(max(s.title), ''), max(s.directory), count(*), {},
                    max(s.server), max(s.host), max(s.file)
             {} GROUP BY m.session_id ORDER BY 5 DESC, 1 LIMIT {COSTLIEST}",
            Dialect::sums(),
            self.messages()
        )
    }

    /// By model, the steps that made a failed call (by the outcomes' own
    /// rule, `tool_calls`): model, steps, cost.
    pub fn failed_steps_sql(self) -> String {
        format!(
            "SELECT coalesce(m.model, '?'), count(*),
                    CAST(sum(coalesce(m.cost, 0)) AS DOUBLE PRECISION)
             {} AND m.id IN (SELECT p.message_id FROM parts p
                             WHERE p.kind = 'tool' AND ({OUTCOME_SQL}) IN {FAILED_SQL})
             GROUP BY 1 ORDER BY 1",
            self.messages()
        )
    }

    /// Retries said in the range, with the model of the session's latest
    /// assistant message made before the next attempt (both on the server's
    /// clock) and its project; newest first.
    pub fn retries_sql(self) -> String {
        let p = |i| self.param(i);
        format!(
            "SELECT r.session_id, s.directory,
                    (SELECT m.model FROM messages m WHERE m.session_id = r.session_id
                       AND m.role = 'assistant' AND m.created <= r.next
                     ORDER BY m.created DESC, m.id DESC LIMIT 1),
                    r.attempt, r.at, r.next, r.message
             FROM retries r LEFT JOIN sessions s ON s.id = r.session_id
             WHERE ({0} IS NULL OR r.at >= {0}) AND ({1} IS NULL OR r.at < {1})
               AND ({2} IS NULL OR s.directory = {2}) AND ({3} IS NULL OR s.host = {3})
             ORDER BY r.at DESC LIMIT {RETRIES_MAX}",
            p(1),
            p(2),
            p(3),
            p(4)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_from_before_schema_18_gives_its_retries_dated_only_where_known() {
        let retry = |attempt: u64, next: i64| {
            format!(
                r#"{{"type":"session.status","properties":{{"sessionID":"ses_1","status":{{"type":"retry","attempt":{attempt},"message":"Overloaded","next":{next}}}}}}}"#
            )
        };
        let busy = r#"{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}"#;
        let wrapped = format!(r#"{{"directory":"/w","payload":{}}}"#, retry(3, 9_000));
        let first = retry(1, 3_000);
        let second = retry(2, 7_000);
        let block = [first, busy.to_string(), second, wrapped];
        let found = logged_retries("ses_1", 1_000, &block);
        let waits: Vec<(i64, Option<i64>)> = found
            .iter()
            .map(|r| {
                let r = Retry {
                    session_id: r.session_id.clone(),
                    project: None,
                    model: None,
                    attempt: r.attempt,
                    at: r.at,
                    next: r.next,
                    message: r.message.clone(),
                };
                (r.attempt, r.waited())
            })
            .collect();
        // The block's first event is dated by it; the others' waits are not
        // guessed.
        assert_eq!(waits, vec![(1, Some(2_000)), (2, None), (3, None)]);
        assert!(
            found
                .iter()
                .all(|r| r.session_id == "ses_1" && r.message == "Overloaded")
        );
        assert_eq!((found[1].next, found[2].next), (7_000, 9_000));
    }

    #[test]
    fn a_retry_waits_until_its_next_attempt_and_names_its_provider() {
        let r = Retry {
            session_id: "ses_1".into(),
            project: None,
            model: Some("anthropic/claude".into()),
            attempt: 1,
            at: 1_000,
            next: 3_500,
            message: "Overloaded".into(),
        };
        assert_eq!((r.waited(), r.provider()), (Some(2_500), "anthropic"));
        let skewed = Retry {
            at: 5_000,
            ..r.clone()
        };
        assert_eq!(skewed.waited(), None);
        let unknown = Retry { model: None, ..r };
        assert_eq!(unknown.provider(), "?");
    }

    #[test]
    fn a_messages_figures_are_read_from_its_json_leniently() {
        let f = spend_of(
            r#"{"cost": 0.25, "tokens": {"input": 10, "output": 2, "reasoning": 1,
                "cache": {"read": 30, "write": "x"}}}"#,
        );
        assert_eq!(
            (
                f.cost,
                f.input,
                f.output,
                f.reasoning,
                f.cache_read,
                f.cache_write
            ),
            (0.25, 10, 2, 1, 30, 0)
        );
        assert_eq!(spend_of("not json"), Figures::default());
        let pg = Dialect::Postgres.by_model_day_sql();
        assert!(pg.contains("$6::bigint") && pg.contains("$5::text"));
        assert!(pg.contains("sum(coalesce(m.tokens_cache_read, 0)) AS DOUBLE PRECISION"));
        assert!(upsert_sql(|i| format!("${i}")).contains("VALUES ($1, $2, $3, $4, $5)"));
    }
}
