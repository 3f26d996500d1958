//! The assistant messages of `usage`, grouped as they are read: by day,
//! model and agent (and session, where opencode stored no totals), and each
//! model's cost per session, kept apart so that the model's total is added
//! up in opencode's order (floating-point sums depend on it, and a total at
//! a rounding tie must round as `opencode stats` rounds it).

use std::collections::HashMap;
use std::fmt::Write;

use rusqlite::Row;

use super::DbError;
use super::sessions::{lenient_f64 as real, lenient_int as int, lenient_text as text};
use super::usage::Figures;
use super::usage::{FirstMet, PART_JSON, count};

pub(super) struct MessageGroup {
    pub session: String,
    pub day: i64,
    pub model: String,
    pub agent: String,
    pub messages: u64,
    pub figures: Figures,
}

/// Rows of (session, day, provider, model, agent, cost, five tokens)
/// summed by day, model and agent (and session when `per_session`):
/// values that are not numbers add nothing, counts are rounded once summed.
#[derive(Default)]
pub(super) struct Grouper {
    per_session: bool,
    /// The key's texts joined with the day → the group's place.
    index: HashMap<String, usize>,
    groups: Vec<(MessageGroup, [f64; 6])>,
    /// (model, session) → its place in `model_costs`.
    model_index: HashMap<String, usize>,
    model_costs: Vec<ModelCost>,
    key: String,
}

/// One model's cost in one session, summed in the order the rows came
/// (a session's messages oldest first, as opencode reads them).
pub(super) struct ModelCost {
    pub model: String,
    pub session: String,
    pub cost: f64,
}

impl Grouper {
    pub fn new(per_session: bool) -> Grouper {
        Grouper {
            per_session,
            ..Grouper::default()
        }
    }

    pub fn add(&mut self, r: &Row<'_>, messages: u64) {
        let day = int(r, 1).unwrap_or(0);
        let (session, provider, model) = (text_at(r, 0), text_at(r, 2), text_at(r, 3));
        let agent = text_at(r, 4);
        let agent = if agent.is_empty() {
            "(none)".into()
        } else {
            agent
        };
        let cost = real(r, 5).unwrap_or(0.0);
        // Unit separators keep the texts apart in one key.
        self.key.clear();
        for part in [&provider, &model, &session] {
            self.key.push_str(part);
            self.key.push('\u{1f}');
        }
        let at = match self.model_index.get(self.key.as_str()) {
            Some(&at) => at,
            None => {
                self.model_index
                    .insert(self.key.clone(), self.model_costs.len());
                self.model_costs.push(ModelCost {
                    model: format!("{provider}/{model}"),
                    session: session.to_string(),
                    cost: 0.0,
                });
                self.model_costs.len() - 1
            }
        };
        self.model_costs[at].cost += cost;

        let session = if self.per_session { session } else { "".into() };
        self.key.clear();
        for part in [&session, &provider, &model, &agent] {
            self.key.push_str(part);
            self.key.push('\u{1f}');
        }
        let _ = write!(self.key, "{day}");
        let at = match self.index.get(self.key.as_str()) {
            Some(&at) => at,
            None => {
                self.index.insert(self.key.clone(), self.groups.len());
                let group = MessageGroup {
                    session: session.into_owned(),
                    day,
                    model: format!("{provider}/{model}"),
                    agent: agent.into_owned(),
                    messages: 0,
                    figures: Figures::default(),
                };
                self.groups.push((group, [0.0; 6]));
                self.groups.len() - 1
            }
        };
        let (group, sums) = &mut self.groups[at];
        group.messages += messages;
        sums[0] += cost;
        for (k, sum) in sums.iter_mut().enumerate().skip(1) {
            *sum += real(r, 5 + k).unwrap_or(0.0);
        }
    }

    pub fn into_groups(self) -> (Vec<MessageGroup>, Vec<ModelCost>) {
        let n = |v: f64| if v > 0.0 { v.round() as u64 } else { 0 };
        let groups = self
            .groups
            .into_iter()
            .map(|(mut g, s)| {
                g.figures = Figures {
                    cost: s[0],
                    input: n(s[1]),
                    output: n(s[2]),
                    reasoning: n(s[3]),
                    cache_read: n(s[4]),
                    cache_write: n(s[5]),
                };
                g
            })
            .collect();
        (groups, self.model_costs)
    }
}

/// Each model's cost, its sessions' costs added in `sessions`' order
/// (opencode's: the session table as it lies), the models in the order
/// they first appear there (opencode's order for models with as many
/// messages).
pub(super) fn model_costs_in_order<'a>(
    costs: &[ModelCost],
    sessions: impl Iterator<Item = &'a str>,
) -> Vec<(String, f64)> {
    let mut by_session: HashMap<&str, Vec<&ModelCost>> = HashMap::new();
    for c in costs {
        by_session.entry(c.session.as_str()).or_default().push(c);
    }
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<(String, f64)> = Vec::new();
    for session in sessions {
        for c in by_session.remove(session).unwrap_or_default() {
            let i = *at.entry(c.model.as_str()).or_insert_with(|| {
                out.push((c.model.clone(), 0.0));
                out.len() - 1
            });
            out[i].1 += c.cost;
        }
    }
    out
}

/// A column as text, borrowed where it is text already ("" for NULL).
fn text_at<'r>(r: &'r Row<'_>, i: usize) -> std::borrow::Cow<'r, str> {
    use rusqlite::types::ValueRef;
    match r.get_ref(i) {
        Ok(ValueRef::Text(t) | ValueRef::Blob(t)) => String::from_utf8_lossy(t),
        Ok(ValueRef::Integer(n)) => n.to_string().into(),
        Ok(ValueRef::Real(f)) => f.to_string().into(),
        _ => "".into(),
    }
}

impl super::Db {
    /// Tool calls by tool, most first; ties in the order opencode meets
    /// them (sessions in `order`, then each one's parts as written).
    pub(super) fn tool_counts(
        &self,
        filter: &str,
        params: &[rusqlite::types::Value],
        order: &HashMap<&str, usize>,
    ) -> Result<(Vec<(String, u64)>, u64), DbError> {
        if !self.schema.has("part", "data") || !self.schema.has("part", "session_id") {
            return Ok((Vec::new(), 0));
        }
        // Malformed parts make the groups whose tool is NULL.
        let sql = format!(
            "SELECT json_extract(d, '$.tool'), sid, count(*), min(rid) FROM \
             (SELECT {PART_JSON} AS d, p.session_id AS sid, p.rowid AS rid FROM part p \
              WHERE p.session_id IN (SELECT id FROM session WHERE {filter})) \
             WHERE d IS NULL OR (json_extract(d, '$.type') = 'tool' \
             AND coalesce(json_extract(d, '$.tool'), '') != '') GROUP BY 1, 2"
        );
        let rows = self.read(|conn| {
            let mut st = conn.prepare(&sql)?;
            let rows = st.query(rusqlite::params_from_iter(params.iter()))?;
            rows.mapped(|r| {
                let session = text(r, 1).unwrap_or_default();
                let first = (
                    order.get(session.as_str()).copied().unwrap_or(usize::MAX),
                    int(r, 3).unwrap_or(0),
                );
                Ok((text(r, 0), count(r, 2), first))
            })
            .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        let mut malformed = 0;
        // Tool → calls, and where it was first met (session, part).
        let mut tools: HashMap<String, (u64, FirstMet)> = HashMap::new();
        for (tool, n, first) in rows {
            match tool {
                Some(tool) => {
                    let t = tools.entry(tool).or_insert((0, first));
                    t.0 += n;
                    t.1 = t.1.min(first);
                }
                None => malformed += n,
            }
        }
        let mut tools: Vec<(String, (u64, FirstMet))> = tools.into_iter().collect();
        tools.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
        Ok((
            tools.into_iter().map(|(t, (n, _))| (t, n)).collect(),
            malformed,
        ))
    }
}
