//! What it cost: cost and tokens over a range of days, by day, by model,
//! by project and by agent, the sessions and messages counted, and the
//! costliest sessions. The same choice of sessions and the same figures as
//! `opencode stats` (1.18.33): a session counts when it was updated in the
//! range (and is of the chosen project); its totals are the ones opencode
//! stored, or, where this schema has none (older versions), the sum of its
//! assistant messages and, for a message that reported nothing, its
//! `step-finish` parts. Models, agents and days come from the assistant
//! messages of the chosen sessions. A few short statements, aggregated by
//! SQLite; the caller runs them off the UI thread.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Row;

use super::schema::{TOTALS_COLUMNS, quote};
use super::sessions::{lenient_f64 as real, lenient_int as int, lenient_text as text};
use super::usage_groups::{Grouper, MessageGroup, ModelCost, model_costs_in_order};
use super::{Db, DbError};

pub const DAY_MS: i64 = 86_400_000;

/// Which sessions count.
#[derive(Debug, Clone, Default)]
pub struct UsageQuery {
    /// Sessions updated at or after this time (ms); `None`: all time.
    pub since_ms: Option<i64>,
    /// Only this project's sessions (its id).
    pub project: Option<String>,
    /// How many of the costliest sessions to keep.
    pub costliest: usize,
    /// Count tool calls too (a pass over every part: `ocview stats` only).
    pub tools: bool,
    /// Added to a time before it is cut into days: the local offset from
    /// UTC, so a day is the viewer's day.
    pub day_offset_ms: i64,
}

/// Cost and the five kinds of tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Figures {
    pub cost: f64,
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Figures {
    pub fn add(&mut self, o: &Figures) {
        self.cost += o.cost;
        self.input += o.input;
        self.output += o.output;
        self.reasoning += o.reasoning;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
    }

    /// Every token, of all five kinds.
    pub fn tokens(&self) -> u64 {
        self.input + self.output + self.reasoning + self.cache_read + self.cache_write
    }

    fn is_empty(&self) -> bool {
        self.cost == 0.0 && self.tokens() == 0
    }
}

/// One group's figures (a day, a model, a project, an agent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    pub name: String,
    /// Sessions (projects) or assistant messages (days, models, agents).
    pub count: u64,
    pub figures: Figures,
}

/// A session, for the costliest list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostlySession {
    pub id: String,
    pub title: String,
    pub directory: String,
    pub time_updated: i64,
    pub figures: Figures,
    /// Its totals were summed by ocview (no stored totals).
    pub summed: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub sessions: u64,
    pub messages: u64,
    pub totals: Figures,
    /// Sessions whose totals ocview summed (their figures are marked Σ).
    pub summed_sessions: u64,
    /// Earliest and latest session time, as opencode stats takes them
    /// (created, or updated when a range is chosen; latest updated).
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// Each session's tokens, ascending (for the median).
    pub session_tokens: Vec<u64>,
    /// Day number (days since the epoch, local) → figures of that day's
    /// assistant messages; only days that had any.
    pub by_day: BTreeMap<i64, Group>,
    /// `provider/model`, most messages first.
    pub by_model: Vec<Group>,
    /// `provider/model` → day → tokens (for a sparkline per model).
    pub model_days: HashMap<String, BTreeMap<i64, u64>>,
    /// Costliest first.
    pub by_project: Vec<Group>,
    pub by_agent: Vec<Group>,
    pub costliest: Vec<CostlySession>,
    /// Tool name → calls, most first (when asked for).
    pub tools: Vec<(String, u64)>,
    /// Rows whose JSON could not be read (messages; parts when tools are
    /// counted): skipped, the rest counted.
    pub malformed: u64,
}

/// A row's JSON, or NULL when it is not JSON: `json_extract` fails the
/// whole query on one malformed row.
const MESSAGE_JSON: &str = "(CASE WHEN json_valid(m.data) THEN m.data END)";
pub(super) const PART_JSON: &str = "(CASE WHEN json_valid(p.data) THEN p.data END)";

/// The figures `opencode stats` derives from the totals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Derived {
    pub days: u64,
    pub cost_per_day: f64,
    pub tokens_per_session: f64,
    pub median_tokens_per_session: f64,
}

impl Usage {
    /// What `opencode stats` derives, over `days` asked (`None`: the
    /// sessions' own span) as of `now_ms`: the days, cost a day, tokens a
    /// session and their median.
    pub fn derived(&self, days: Option<u32>, now_ms: i64) -> Derived {
        let asked = days.map(|d| u64::from(d.max(1)));
        let days = if self.sessions == 0 {
            asked.unwrap_or(0)
        } else {
            let first = self.first_ms.unwrap_or(now_ms).min(now_ms);
            let last = self.last_ms.unwrap_or(0).max(0);
            let span = ((last - first) as f64 / DAY_MS as f64).ceil().max(1.0) as u64;
            asked.unwrap_or(span)
        };
        let per = |total: f64, n: u64| if n == 0 { 0.0 } else { total / n as f64 };
        Derived {
            days,
            cost_per_day: per(self.totals.cost, days),
            tokens_per_session: per(self.totals.tokens() as f64, self.sessions),
            median_tokens_per_session: self.median_tokens(),
        }
    }

    /// The median of the sessions' token totals (opencode's rule: the mean
    /// of the middle two for an even count).
    pub fn median_tokens(&self) -> f64 {
        let t = &self.session_tokens;
        match t.len() {
            0 => 0.0,
            n if n % 2 == 0 => (t[n / 2 - 1] as f64 + t[n / 2] as f64) / 2.0,
            n => t[n / 2] as f64,
        }
    }
}

/// Where a tool was first met: the session's place, the part's rowid.
pub(super) type FirstMet = (usize, i64);

struct SessionFacts {
    project: String,
    title: String,
    directory: String,
    time_updated: i64,
    stored: Option<Figures>,
}

impl Db {
    /// Everything the usage view and `ocview stats` show, for `q`.
    pub fn usage(&self, q: &UsageQuery) -> Result<Usage, DbError> {
        let s = &self.schema;
        if !s.has("session", "id") {
            return Err(DbError::Unsupported("session table".into()));
        }
        let (filter, params) = self.session_filter(q);
        let stored = s.has_totals();
        let mut cols: Vec<String> = [
            "id",
            "project_id",
            "title",
            "directory",
            "time_created",
            "time_updated",
        ]
        .iter()
        .map(|c| s.column_or_null("session", c))
        .collect();
        if stored {
            cols.extend(TOTALS_COLUMNS.iter().map(|c| quote(c)));
        }
        // In the table's order, as opencode reads it: its sums are added
        // in that order, and a sum at a rounding tie depends on it.
        let sql = format!(
            "SELECT {} FROM session WHERE {filter} ORDER BY rowid",
            cols.join(", ")
        );
        let mut usage = Usage::default();
        let (sessions, first, last) =
            self.chosen_sessions(&sql, &params, q.since_ms.is_some(), stored)?;
        (usage.first_ms, usage.last_ms) = (first, last);
        usage.sessions = sessions.len() as u64;
        if s.has("message", "session_id") {
            let bad = if s.has("message", "data") {
                "NOT json_valid(data)"
            } else {
                "0"
            };
            let (messages, malformed) = self.read(|conn| {
                let sql = format!(
                    "SELECT count(*), coalesce(sum({bad}), 0) FROM message WHERE session_id IN \
                     (SELECT id FROM session WHERE {filter})"
                );
                conn.query_row(&sql, rusqlite::params_from_iter(params.iter()), |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })
            })?;
            usage.messages = messages.max(0) as u64;
            usage.malformed = malformed.max(0) as u64;
        }
        // The assistant messages, grouped: the days, models and agents, and
        // each session's sum where opencode stored none.
        let (rows, model_costs) = self.message_groups(q, &filter, &params)?;
        let (summed, mut models, agents) = add_message_groups(&mut usage, rows);
        let order: Vec<String> = sessions.iter().map(|(id, _)| id.clone()).collect();
        let (projects, mut costly) =
            add_sessions(&mut usage, sessions, &summed, &self.project_names());
        usage.session_tokens.sort_unstable();
        costly.sort_by(|a, b| {
            b.figures
                .cost
                .total_cmp(&a.figures.cost)
                .then(b.figures.tokens().cmp(&a.figures.tokens()))
                .then(a.id.cmp(&b.id))
        });
        costly.truncate(q.costliest);
        usage.costliest = costly;
        // Models as opencode lists them: most messages first, then in the
        // order they first appear; each one's cost added in its order.
        let ordered = model_costs_in_order(&model_costs, order.iter().map(String::as_str));
        usage.by_model = ordered
            .into_iter()
            .filter_map(|(name, cost)| {
                let mut g = models.remove(&name)?;
                g.figures.cost = cost;
                Some(Group { name, ..g })
            })
            .collect();
        // Any model without a session in the list (none, in practice).
        usage
            .by_model
            .extend(ranked(models, |a, b| b.count.cmp(&a.count)));
        usage.by_model.sort_by_key(|g| std::cmp::Reverse(g.count));
        usage.by_agent = ranked(agents, |a, b| b.figures.cost.total_cmp(&a.figures.cost));
        usage.by_project = ranked(projects, |a, b| b.figures.cost.total_cmp(&a.figures.cost));
        for (day, g) in usage.by_day.iter_mut() {
            g.name = day.to_string();
        }
        if q.tools {
            let at: HashMap<&str, usize> = order
                .iter()
                .enumerate()
                .map(|(i, id)| (id.as_str(), i))
                .collect();
            let (tools, malformed) = self.tool_counts(&filter, &params, &at)?;
            usage.tools = tools;
            usage.malformed += malformed;
        }
        Ok(usage)
    }

    /// The chosen sessions in the table's order, and the first and last
    /// moment they span (`ranged`: by last update, not creation).
    #[allow(clippy::type_complexity)]
    fn chosen_sessions(
        &self,
        sql: &str,
        params: &[rusqlite::types::Value],
        ranged: bool,
        stored: bool,
    ) -> Result<(Vec<(String, SessionFacts)>, Option<i64>, Option<i64>), DbError> {
        let mut sessions: Vec<(String, SessionFacts)> = Vec::new();
        let (first, last) = self.read(|conn| {
            let mut st = conn.prepare(sql)?;
            let mut rows = st.query(rusqlite::params_from_iter(params.iter()))?;
            sessions.clear();
            let (mut first, mut last) = (None::<i64>, None::<i64>);
            while let Some(r) = rows.next()? {
                let id = text(r, 0).unwrap_or_default();
                let created = int(r, 4).unwrap_or(0);
                let updated = int(r, 5).unwrap_or(created);
                let early = if ranged { updated } else { created };
                first = Some(first.map_or(early, |f| f.min(early)));
                last = Some(last.map_or(updated, |l| l.max(updated)));
                let facts = SessionFacts {
                    project: text(r, 1).unwrap_or_default(),
                    title: text(r, 2).unwrap_or_default(),
                    directory: text(r, 3).unwrap_or_default(),
                    time_updated: updated,
                    stored: stored.then(|| figures_at(r, 6)),
                };
                sessions.push((id, facts));
            }
            Ok((first, last))
        })?;
        Ok((sessions, first, last))
    }

    /// The `WHERE` of the chosen sessions, and its parameters.
    fn session_filter(&self, q: &UsageQuery) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value;
        let s = &self.schema;
        let mut filter = vec!["1".to_string()];
        let mut params = Vec::new();
        if let Some(since) = q.since_ms {
            let updated = s.column_or_null("session", "time_updated");
            params.push(Value::Integer(since));
            filter.push(format!("{updated} >= ?{}", params.len()));
        }
        if let Some(project) = &q.project {
            let column = s.column_or_null("session", "project_id");
            params.push(Value::Text(project.clone()));
            filter.push(format!("{column} = ?{}", params.len()));
        }
        (filter.join(" AND "), params)
    }

    /// Assistant messages of the chosen sessions, grouped by session, day,
    /// model and agent; where a session has no stored totals, a message
    /// that reported nothing adds its `step-finish` parts instead.
    ///
    /// One narrow scan (each message's JSON parsed once, its fields read
    /// from that parse), grouped here rather than by SQLite: its GROUP BY
    /// sorted every message on four keys, most of the view's time. The
    /// session is a key only where opencode stored no totals (its sum is
    /// then needed).
    fn message_groups(
        &self,
        q: &UsageQuery,
        filter: &str,
        params: &[rusqlite::types::Value],
    ) -> Result<(Vec<MessageGroup>, Vec<ModelCost>), DbError> {
        let s = &self.schema;
        if !s.has("message", "data") || !s.has("message", "session_id") {
            return Ok((Vec::new(), Vec::new()));
        }
        let time = if s.has("message", "time_created") {
            "m.time_created".to_string()
        } else {
            format!("json_extract({MESSAGE_JSON}, '$.time.created')")
        };
        // The day, floored (SQLite may lack floor()).
        let x = format!("CAST(coalesce({time}, 0) AS INTEGER) + {}", q.day_offset_ms);
        let day = format!("(({x}) - ((({x}) % {DAY_MS}) + {DAY_MS}) % {DAY_MS}) / {DAY_MS}");
        let per_session = !s.has_totals();
        let chosen = format!("m.session_id IN (SELECT id FROM session WHERE {filter})");
        let assistant = format!("json_extract({MESSAGE_JSON}, '$.role') = 'assistant'");
        // One parse of the message (SQLite keeps the last parsed JSON for
        // the calls that follow on the same value).
        let scan = format!(
            "SELECT m.session_id, {day}, \
             json_extract({MESSAGE_JSON}, '$.providerID'), json_extract({MESSAGE_JSON}, '$.modelID'), \
             coalesce(json_extract({MESSAGE_JSON}, '$.agent'), json_extract({MESSAGE_JSON}, '$.mode')), \
             json_extract({MESSAGE_JSON}, '$.cost'), json_extract({MESSAGE_JSON}, '$.tokens.input'), \
             json_extract({MESSAGE_JSON}, '$.tokens.output'), json_extract({MESSAGE_JSON}, '$.tokens.reasoning'), \
             json_extract({MESSAGE_JSON}, '$.tokens.cache.read'), json_extract({MESSAGE_JSON}, '$.tokens.cache.write') \
             FROM message m WHERE {chosen} AND {assistant}"
        );
        let mut groups = Grouper::new(per_session);
        self.read(|conn| {
            groups = Grouper::new(per_session);
            let mut st = conn.prepare(&scan)?;
            let mut rows = st.query(rusqlite::params_from_iter(params.iter()))?;
            while let Some(r) = rows.next()? {
                groups.add(r, 1);
            }
            Ok(())
        })?;
        let (mut out, mut model_costs) = groups.into_groups();
        let can_step = s.has("part", "data") && s.has("part", "message_id");
        if per_session && can_step {
            // Steps of messages that reported no figures; those messages
            // are already counted above.
            let silent = format!(
                "coalesce(json_extract({MESSAGE_JSON}, '$.cost'), 0) = 0 \
                 AND coalesce(json_extract({MESSAGE_JSON}, '$.tokens.input'), 0) = 0 \
                 AND coalesce(json_extract({MESSAGE_JSON}, '$.tokens.output'), 0) = 0 \
                 AND coalesce(json_extract({MESSAGE_JSON}, '$.tokens.reasoning'), 0) = 0 \
                 AND coalesce(json_extract({MESSAGE_JSON}, '$.tokens.cache.read'), 0) = 0 \
                 AND coalesce(json_extract({MESSAGE_JSON}, '$.tokens.cache.write'), 0) = 0"
            );
            let steps = format!(
                "SELECT m.session_id, {day}, \
                 json_extract({MESSAGE_JSON}, '$.providerID'), json_extract({MESSAGE_JSON}, '$.modelID'), \
                 coalesce(json_extract({MESSAGE_JSON}, '$.agent'), json_extract({MESSAGE_JSON}, '$.mode')), \
                 json_extract({PART_JSON}, '$.cost'), json_extract({PART_JSON}, '$.tokens.input'), \
                 json_extract({PART_JSON}, '$.tokens.output'), json_extract({PART_JSON}, '$.tokens.reasoning'), \
                 json_extract({PART_JSON}, '$.tokens.cache.read'), json_extract({PART_JSON}, '$.tokens.cache.write') \
                 FROM message m JOIN part p ON p.message_id = m.id \
                 WHERE {chosen} AND {assistant} AND {silent} \
                 AND json_extract({PART_JSON}, '$.type') = 'step-finish'"
            );
            let mut groups = Grouper::new(true);
            self.read(|conn| {
                groups = Grouper::new(true);
                let mut st = conn.prepare(&steps)?;
                let mut rows = st.query(rusqlite::params_from_iter(params.iter()))?;
                while let Some(r) = rows.next()? {
                    // A step adds figures, not another message.
                    groups.add(r, 0);
                }
                Ok(())
            })?;
            let (steps, step_costs) = groups.into_groups();
            out.extend(steps);
            model_costs.extend(step_costs);
        }
        Ok((out, model_costs))
    }
}

impl Db {
    /// Project id → a name people know: its name, else its folder.
    fn project_names(&self) -> HashMap<String, String> {
        let s = &self.schema;
        if !s.has("project", "id") {
            return HashMap::new();
        }
        let name = s.column_or_null("project", "name");
        let worktree = s.column_or_null("project", "worktree");
        let sql = format!("SELECT id, coalesce(nullif({name}, ''), {worktree}) FROM project");
        self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            let rows = st.query([])?;
            rows.mapped(|r| {
                Ok((
                    text(r, 0).unwrap_or_default(),
                    text(r, 1).unwrap_or_default(),
                ))
            })
            .collect()
        })
        .unwrap_or_default()
    }
}

/// The assistant messages, grouped, into the days, models and agents; and
/// each session's sum, for where opencode stored none.
#[allow(clippy::type_complexity)]
fn add_message_groups(
    usage: &mut Usage,
    rows: Vec<MessageGroup>,
) -> (
    HashMap<String, Figures>,
    HashMap<String, Group>,
    HashMap<String, Group>,
) {
    let mut summed: HashMap<String, Figures> = HashMap::new();
    let mut models: HashMap<String, Group> = HashMap::new();
    let mut agents: HashMap<String, Group> = HashMap::new();
    for row in rows {
        let day = usage.by_day.entry(row.day).or_default();
        day.count += row.messages;
        day.figures.add(&row.figures);
        *usage
            .model_days
            .entry(row.model.clone())
            .or_default()
            .entry(row.day)
            .or_default() += row.figures.tokens();
        let model = models.entry(row.model.clone()).or_default();
        model.count += row.messages;
        model.figures.add(&row.figures);
        let agent = agents.entry(row.agent.clone()).or_default();
        agent.count += row.messages;
        agent.figures.add(&row.figures);
        summed.entry(row.session).or_default().add(&row.figures);
    }
    (summed, models, agents)
}

/// Each session's figures (stored, or summed from its messages) into the
/// totals and its project; the sessions, for the costliest.
fn add_sessions(
    usage: &mut Usage,
    sessions: Vec<(String, SessionFacts)>,
    summed: &HashMap<String, Figures>,
    names: &HashMap<String, String>,
) -> (HashMap<String, Group>, Vec<CostlySession>) {
    let mut projects: HashMap<String, Group> = HashMap::new();
    let mut costly = Vec::with_capacity(sessions.len());
    for (id, facts) in sessions {
        let (figures, was_summed) = match facts.stored {
            Some(f) => (f, false),
            None => (summed.get(&id).copied().unwrap_or_default(), true),
        };
        if was_summed && !figures.is_empty() {
            usage.summed_sessions += 1;
        }
        usage.totals.add(&figures);
        usage.session_tokens.push(figures.tokens());
        let name = names
            .get(&facts.project)
            .cloned()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                if facts.project.is_empty() {
                    "(no project)".into()
                } else {
                    facts.project.clone()
                }
            });
        let p = projects.entry(name).or_default();
        p.count += 1;
        p.figures.add(&figures);
        costly.push(CostlySession {
            id,
            title: facts.title,
            directory: facts.directory,
            time_updated: facts.time_updated,
            figures,
            summed: was_summed,
        });
    }
    (projects, costly)
}

fn ranked(
    groups: HashMap<String, Group>,
    by: impl Fn(&Group, &Group) -> std::cmp::Ordering,
) -> Vec<Group> {
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|(name, g)| Group { name, ..g })
        .collect();
    out.sort_by(|a, b| by(a, b).then(a.name.cmp(&b.name)));
    out
}

/// Cost and tokens in six columns from `at`.
fn figures_at(r: &Row<'_>, at: usize) -> Figures {
    Figures {
        cost: real(r, at).unwrap_or(0.0),
        input: count(r, at + 1),
        output: count(r, at + 2),
        reasoning: count(r, at + 3),
        cache_read: count(r, at + 4),
        cache_write: count(r, at + 5),
    }
}

/// A count: negative, absent or not a number reads as zero.
pub(super) fn count(r: &Row<'_>, i: usize) -> u64 {
    real(r, i)
        .filter(|f| *f > 0.0)
        .map_or(0, |f| f.round() as u64)
}

/// The start of a range of `days` as `opencode stats --days` takes it:
/// `days` × 24 h back from `now_ms`, or with 0 today's local midnight.
pub fn since_for_days(days: u32, now_ms: i64) -> i64 {
    if days == 0 {
        let off = local_offset_ms(now_ms);
        ((now_ms + off).div_euclid(DAY_MS)) * DAY_MS - off
    } else {
        now_ms - i64::from(days) * DAY_MS
    }
}

/// The local time zone's offset from UTC at `at_ms`, in ms (0 when the
/// system cannot say).
pub fn local_offset_ms(at_ms: i64) -> i64 {
    let secs = at_ms.div_euclid(1000) as libc::time_t;
    // SAFETY: localtime_r writes only into `tm`, which lives here.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff * 1000
    }
}
