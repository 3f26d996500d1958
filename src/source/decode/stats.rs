//! Counting what a source fed the store, and where it went wrong.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::{Effect, Outcome};

/// At most this many problems are kept with their line numbers; counts go on.
const MAX_PROBLEMS: usize = 500;

/// At most this many distinct reasons are told apart; more go under "other".
const MAX_REASONS: usize = 32;

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
    /// A database row's ids, when it came from one (its line is then 0).
    pub row: Option<String>,
    pub kind: ProblemKind,
    pub message: String,
}

impl Problem {
    /// Where it is: the database row, else the line.
    pub fn place(&self) -> String {
        place(self.line, self.row.as_deref())
    }
}

/// "line N", or the row's ids for a record read from a database.
pub fn place(line: u64, row: Option<&str>) -> String {
    match row {
        Some(row) => row.to_string(),
        None => format!("line {line}"),
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ProblemKind::Malformed => "malformed",
            ProblemKind::Repaired => "repaired",
            ProblemKind::Orphan => "orphan",
        };
        write!(f, "{}: {kind}: {}", self.place(), self.message)
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
    /// Records not applied (or applied only after a cure), by reason.
    reasons: BTreeMap<String, u64>,
    /// The reason of the first record that could not be used, in a few words.
    pub first_reason: Option<String>,
    /// The form the source was read as ("JSON array of events"), once known.
    pub form: Option<&'static str>,
    /// Lines the source held (for a file: all of them, read to its end).
    pub lines: u64,
    /// The session a run stream's lines went to: where a line that names
    /// no session goes (older `opencode run` lines name it only once).
    pub stream_session: Option<String>,
    problems: Vec<Problem>,
    dropped_problems: u64,
    /// The last record that could not be used, to show on request.
    pub last_bad: Option<BadRecord>,
}

/// A record that could not be used: where it came from, why, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    pub server: Option<String>,
    pub line: u64,
    /// A database row's ids, when it came from one.
    pub row: Option<String>,
    pub reason: String,
    /// The record's start (untrusted: sanitise before showing).
    pub text: String,
}

impl IngestStats {
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Problems beyond the ones kept.
    pub fn dropped_problems(&self) -> u64 {
        self.dropped_problems
    }

    /// The first record that could not be applied at all.
    pub fn first_malformed(&self) -> Option<&Problem> {
        self.problems
            .iter()
            .find(|p| p.kind == ProblemKind::Malformed)
    }

    /// Records not applied, or cured first, by reason, most common first.
    pub fn reasons(&self) -> Vec<(&str, u64)> {
        let mut out: Vec<(&str, u64)> =
            self.reasons.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// Count one record under `reason` (a few fixed words, never data).
    pub fn count_reason(&mut self, reason: &str) {
        let key = if self.reasons.len() >= MAX_REASONS && !self.reasons.contains_key(reason) {
            "other"
        } else {
            reason
        };
        *self.reasons.entry(key.to_string()).or_insert(0) += 1;
    }

    /// A record that could not be used, counted by the reason it gives.
    pub fn malformed(&mut self, line: u64, error: &crate::source::decode::record::RecordError) {
        let reason = error.reason();
        if self.first_reason.is_none() {
            self.first_reason = Some(reason.clone());
        }
        self.count_reason(&reason);
        self.last_bad = Some(BadRecord {
            server: error.server.clone(),
            line,
            row: error.row.clone(),
            reason: error.to_string(),
            text: error.raw.clone().unwrap_or_default(),
        });
        self.note(
            line,
            error.row.clone(),
            ProblemKind::Malformed,
            error.to_string(),
        );
    }

    pub fn problem(&mut self, line: u64, kind: ProblemKind, message: impl Into<String>) {
        let message = message.into();
        match kind {
            ProblemKind::Malformed => self.count_reason("unexpected shape"),
            ProblemKind::Repaired => self.count_reason(&format!("repaired: {message}")),
            ProblemKind::Orphan => self.count_reason("orphan"),
        }
        self.note(line, None, kind, message);
    }

    fn note(&mut self, line: u64, row: Option<String>, kind: ProblemKind, message: String) {
        match kind {
            ProblemKind::Malformed => self.malformed += 1,
            ProblemKind::Repaired => self.repaired += 1,
            ProblemKind::Orphan => self.orphans += 1,
        }
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem {
                line,
                row,
                kind,
                message,
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
        match outcome.effect {
            Effect::Ignored => self.count_reason("event type not shown"),
            Effect::Stale => self.count_reason("stale (already applied or older)"),
            _ => {}
        }
        if let Some(what) = &outcome.orphan {
            self.problem(line, ProblemKind::Orphan, what.clone());
        }
    }

    /// A record skipped by design (a `sync` twin, a recording's header).
    pub fn skip(&mut self, why: &'static str) {
        self.skipped += 1;
        self.count_reason(&format!("skipped: {why}"));
    }

    /// The dump's line before its summary: the form read.
    pub fn form_line(&self) -> String {
        format!("form: {}", self.form.unwrap_or("none (empty)"))
    }

    /// Why records were refused, in one line: the form, the first failing
    /// record's line and reason, and how many there were. `None` when every
    /// record could be used.
    pub fn diagnosis(&self) -> Option<String> {
        if self.malformed == 0 {
            return None;
        }
        let n = self.malformed;
        let records = if n == 1 { "record" } else { "records" };
        let lines = if self.lines == 1 { "line" } else { "lines" };
        let form = self.form.unwrap_or("unknown form");
        let first = match self.first_malformed() {
            Some(p) => format!("; first at line {}: {}", p.line, p.message),
            None => String::new(),
        };
        Some(format!(
            "read as {form}, {} {lines}: {n} {records} could not be applied{first}",
            self.lines
        ))
    }

    /// The closing line of a dump: the counts, then what was not applied
    /// (or applied only after a cure), by reason.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "summary: {} events applied, {} ignored, {} malformed ({} stale, {} held, {} skipped, {} repaired, {} orphaned)",
            self.applied,
            self.ignored,
            self.malformed,
            self.stale,
            self.held,
            self.skipped,
            self.repaired,
            self.orphans
        );
        let reasons = self.reasons();
        if !reasons.is_empty() {
            let list: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}×{n}")).collect();
            out.push_str(&format!(
                "; not applied (or cured), by reason: {}",
                list.join(", ")
            ));
        }
        out
    }
}
