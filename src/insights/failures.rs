//! Failures by model and tool: the archive's counts of tool calls made
//! into one cell per model and tool (calls, failures, the rate, each
//! outcome apart), and a cell's failed calls grouped by their error's
//! fingerprint.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::archive::tool_calls::{CallCount, FailedCall, Outcome, fingerprint};

/// One model's calls of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub model: String,
    pub tool: String,
    pub calls: u64,
    /// Calls that failed: errors, invalid calls, refusals, interruptions.
    pub failed: u64,
    /// The calls by outcome (every outcome, zero included).
    pub outcomes: BTreeMap<Outcome, u64>,
}

impl Cell {
    /// Failed ÷ ended (calls not ended yet are not counted either way).
    pub fn rate(&self) -> f64 {
        let ended = self.calls
            - self
                .outcomes
                .get(&Outcome::Unfinished)
                .copied()
                .unwrap_or(0);
        if ended == 0 {
            0.0
        } else {
            self.failed as f64 / ended as f64
        }
    }
}

/// How the cells are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// Most failed calls first.
    #[default]
    Failed,
    /// Highest failure rate first.
    Rate,
    /// Most calls first.
    Calls,
    /// By model, then tool.
    Model,
    /// By tool, then model.
    Tool,
}

impl SortBy {
    pub const ALL: [SortBy; 5] = [
        SortBy::Failed,
        SortBy::Rate,
        SortBy::Calls,
        SortBy::Model,
        SortBy::Tool,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortBy::Failed => "failed",
            SortBy::Rate => "rate",
            SortBy::Calls => "calls",
            SortBy::Model => "model",
            SortBy::Tool => "tool",
        }
    }

    pub fn from_name(name: &str) -> Option<SortBy> {
        SortBy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The next order (a key cycles through them).
    pub fn next(self) -> SortBy {
        let i = SortBy::ALL.iter().position(|s| *s == self).unwrap_or(0);
        SortBy::ALL[(i + 1) % SortBy::ALL.len()]
    }
}

/// The counts made into cells, ordered `by` (ties by model, then tool).
pub fn cells(counts: &[CallCount], by: SortBy) -> Vec<Cell> {
    let mut cells: BTreeMap<(String, String), Cell> = BTreeMap::new();
    for c in counts {
        let cell = cells
            .entry((c.model.clone(), c.tool.clone()))
            .or_insert_with(|| Cell {
                model: c.model.clone(),
                tool: c.tool.clone(),
                calls: 0,
                failed: 0,
                outcomes: Outcome::ALL.iter().map(|o| (*o, 0)).collect(),
            });
        cell.calls += c.calls;
        if c.outcome.failed() {
            cell.failed += c.calls;
        }
        *cell.outcomes.entry(c.outcome).or_default() += c.calls;
    }
    let mut out: Vec<Cell> = cells.into_values().collect();
    sort(&mut out, by);
    out
}

pub fn sort(cells: &mut [Cell], by: SortBy) {
    let names = |a: &Cell, b: &Cell| (&a.model, &a.tool).cmp(&(&b.model, &b.tool));
    match by {
        SortBy::Failed => cells.sort_by(|a, b| b.failed.cmp(&a.failed).then(names(a, b))),
        SortBy::Rate => cells.sort_by(|a, b| {
            b.rate()
                .total_cmp(&a.rate())
                .then(b.failed.cmp(&a.failed))
                .then(names(a, b))
        }),
        SortBy::Calls => cells.sort_by(|a, b| b.calls.cmp(&a.calls).then(names(a, b))),
        SortBy::Model => cells.sort_by(names),
        SortBy::Tool => cells.sort_by(|a, b| (&a.tool, &a.model).cmp(&(&b.tool, &b.model))),
    }
}

/// The whole of the cells: calls and failures of every model and tool.
pub fn totals(cells: &[Cell]) -> (u64, u64) {
    cells
        .iter()
        .fold((0, 0), |(c, f), cell| (c + cell.calls, f + cell.failed))
}

/// Failed calls that share an error's fingerprint (and outcome).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorGroup {
    pub fingerprint: String,
    pub outcome: Outcome,
    /// Newest first.
    pub calls: Vec<FailedCall>,
}

/// `calls` (newest first) grouped by their error's fingerprint, the
/// largest group first (ties: the most recent first).
pub fn groups(calls: Vec<FailedCall>) -> Vec<ErrorGroup> {
    let mut by: Vec<ErrorGroup> = Vec::new();
    let mut at: std::collections::HashMap<(String, Outcome), usize> = Default::default();
    for call in calls {
        let key = (fingerprint(&call.error), call.outcome);
        match at.get(&key) {
            Some(&i) => by[i].calls.push(call),
            None => {
                at.insert(key.clone(), by.len());
                by.push(ErrorGroup {
                    fingerprint: key.0,
                    outcome: key.1,
                    calls: vec![call],
                });
            }
        }
    }
    // Stable: among equal sizes, the group whose newest call came first.
    by.sort_by_key(|g| std::cmp::Reverse(g.calls.len()));
    by
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_make_one_cell_per_model_and_tool_with_its_rate() {
        let counts = [
            CallCount::new("a/m1", "bash", Outcome::Completed, 8),
            CallCount::new("a/m1", "bash", Outcome::Error, 1),
            CallCount::new("a/m1", "bash", Outcome::Rejected, 1),
            CallCount::new("a/m1", "bash", Outcome::Unfinished, 2),
            CallCount::new("a/m1", "read", Outcome::Completed, 5),
            CallCount::new("b/m2", "invalid", Outcome::Invalid, 3),
        ];
        let cells = cells(&counts, SortBy::Failed);
        assert_eq!(cells.len(), 3);
        assert_eq!(
            (cells[0].model.as_str(), cells[0].tool.as_str()),
            ("b/m2", "invalid")
        );
        assert_eq!((cells[0].failed, cells[0].rate()), (3, 1.0));
        let bash = &cells[1];
        assert_eq!((bash.calls, bash.failed), (12, 2));
        assert_eq!(bash.rate(), 0.2, "failed of the ten that ended");
        assert_eq!(bash.outcomes[&Outcome::Aborted], 0);
        assert_eq!(totals(&cells), (20, 5));
        let mut by_rate = cells.clone();
        sort(&mut by_rate, SortBy::Tool);
        assert_eq!(by_rate[0].tool, "bash");
        assert_eq!(SortBy::Tool.next(), SortBy::Failed);
    }

    #[test]
    fn failed_calls_group_by_their_errors_fingerprint() {
        let call = |id: &str, error: &str, outcome| FailedCall {
            session_id: "ses_a".into(),
            message_id: "msg_a".into(),
            part_id: id.into(),
            time: 0,
            outcome,
            error: error.into(),
            title: String::new(),
            server: None,
            host: None,
            file: None,
        };
        let groups = groups(vec![
            call("p1", "File not found: /a/b.rs", Outcome::Error),
            call("p2", "Tool execution aborted", Outcome::Aborted),
            call("p3", "File not found: /c/d.rs", Outcome::Error),
        ]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].fingerprint, "File not found: <path>");
        assert_eq!(
            groups[0]
                .calls
                .iter()
                .map(|c| c.part_id.as_str())
                .collect::<Vec<_>>(),
            ["p1", "p3"]
        );
        assert_eq!(groups[1].outcome, Outcome::Aborted);
    }
}
