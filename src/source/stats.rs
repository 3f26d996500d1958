//! Counting what a source fed the store, and where it went wrong.

use std::fmt;

use crate::model::{Effect, Outcome};

/// At most this many problems are kept with their line numbers; counts go on.
const MAX_PROBLEMS: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// The record could not be used at all.
    Malformed,
    /// The record was cured (invalid UTF-8, a lone surrogate) and applied.
    Repaired,
    /// The event named a session, message or request we did not know.
    Orphan,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u64,
    pub kind: ProblemKind,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ProblemKind::Malformed => "malformed",
            ProblemKind::Repaired => "repaired",
            ProblemKind::Orphan => "orphan",
        };
        write!(f, "line {}: {kind}: {}", self.line, self.message)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestStats {
    /// Events decoded (everything that reached the reducer).
    pub events: u64,
    /// Events that changed or confirmed the state.
    pub applied: u64,
    /// Events of types a viewer does not need.
    pub ignored: u64,
    /// Records that could not be used.
    pub malformed: u64,
    /// Events already applied or older than the state.
    pub stale: u64,
    /// Deltas that arrived before their part.
    pub held: u64,
    /// Records skipped by design (`sync` twins).
    pub skipped: u64,
    pub repaired: u64,
    pub orphans: u64,
    problems: Vec<Problem>,
    dropped_problems: u64,
}

impl IngestStats {
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Problems beyond the ones kept.
    pub fn dropped_problems(&self) -> u64 {
        self.dropped_problems
    }

    pub fn problem(&mut self, line: u64, kind: ProblemKind, message: impl Into<String>) {
        match kind {
            ProblemKind::Malformed => self.malformed += 1,
            ProblemKind::Repaired => self.repaired += 1,
            ProblemKind::Orphan => self.orphans += 1,
        }
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem {
                line,
                kind,
                message: message.into(),
            });
        } else {
            self.dropped_problems += 1;
        }
    }

    pub fn count(&mut self, line: u64, outcome: &Outcome) {
        self.events += 1;
        match outcome.effect {
            Effect::Applied => self.applied += 1,
            Effect::Ignored => self.ignored += 1,
            Effect::Stale => self.stale += 1,
            Effect::Held => self.held += 1,
        }
        if let Some(what) = &outcome.orphan {
            self.problem(line, ProblemKind::Orphan, what.clone());
        }
    }

    /// The closing line of a dump.
    pub fn summary(&self) -> String {
        format!(
            "summary: {} events applied, {} ignored, {} malformed ({} stale, {} held, {} skipped, {} repaired, {} orphaned)",
            self.applied,
            self.ignored,
            self.malformed,
            self.stale,
            self.held,
            self.skipped,
            self.repaired,
            self.orphans
        )
    }
}
