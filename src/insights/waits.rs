//! Time waiting on people: the prompts asked (with who answered them)
//! made into figures: how many were asked, answered, rejected and never
//! answered; how long they waited (median, p90, longest); where they were
//! answered; by day, by project and by session; the longest waits.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::archive::prompt_waits::PromptWait;

/// The longest waits kept for the list.
pub const LONGEST: usize = 20;

/// Where a prompt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Where {
    /// By this machine's ocview.
    ThisMachine,
    /// By ocview on another machine.
    AnotherMachine,
    /// By another client (OpenCode's own TUI, a web page), seen by ocview.
    AnotherClient,
    /// Settled, with no answer on record (a recording, an import).
    NotOnRecord,
}

impl Where {
    pub fn of(w: &PromptWait, this_machine: &str) -> Where {
        match (w.by.as_deref(), w.machine.as_deref()) {
            (Some("ocview"), Some(m)) if m == this_machine => Where::ThisMachine,
            (Some("ocview"), _) => Where::AnotherMachine,
            (Some(_), _) => Where::AnotherClient,
            (None, _) => Where::NotOnRecord,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Where::ThisMachine => "this machine",
            Where::AnotherMachine => "another machine's ocview",
            Where::AnotherClient => "another client",
            Where::NotOnRecord => "not on record",
        }
    }
}

/// The figures of a set of prompts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    pub asked: u64,
    pub answered: u64,
    /// Answered by a person's no (a permission rejected, a question
    /// dismissed).
    pub rejected: u64,
    pub never_answered: u64,
    /// Waits of the answered (ms).
    pub median_ms: Option<i64>,
    pub p90_ms: Option<i64>,
    pub longest_ms: Option<i64>,
}

impl Figures {
    fn of<'a>(waits: impl Iterator<Item = &'a PromptWait>) -> Figures {
        let mut f = Figures::default();
        let mut waited = Vec::new();
        for w in waits {
            f.asked += 1;
            match w.settled {
                Some(_) => f.answered += 1,
                None => f.never_answered += 1,
            }
            if w.rejected() {
                f.rejected += 1;
            }
            if let Some(ms) = w.waited() {
                waited.push(ms);
            }
        }
        waited.sort_unstable();
        let at = |q: f64| -> Option<i64> {
            (!waited.is_empty()).then(|| waited[((waited.len() - 1) as f64 * q).round() as usize])
        };
        f.median_ms = at(0.5);
        f.p90_ms = at(0.9);
        f.longest_ms = waited.last().copied();
        f
    }

    /// Rejected ÷ answered.
    pub fn rejected_share(&self) -> f64 {
        if self.answered == 0 {
            0.0
        } else {
            self.rejected as f64 / self.answered as f64
        }
    }
}

/// Everything the view and the command say.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Waits {
    pub total: Figures,
    pub answered_where: BTreeMap<Where, u64>,
    /// By the day it was asked (`YYYY-MM-DD`, local time), oldest first.
    pub by_day: Vec<(String, Figures)>,
    /// By project, most asked first.
    pub by_project: Vec<(String, Figures)>,
    /// By session (id, title), longest wait first.
    pub by_session: Vec<(String, String, Figures)>,
    /// The longest waits, longest first.
    pub longest: Vec<PromptWait>,
}

/// The figures of `waits`, answered places told from `this_machine`.
pub fn figures(waits: &[PromptWait], this_machine: &str) -> Waits {
    let mut out = Waits {
        total: Figures::of(waits.iter()),
        ..Waits::default()
    };
    for w in waits.iter().filter(|w| w.settled.is_some()) {
        *out.answered_where
            .entry(Where::of(w, this_machine))
            .or_default() += 1;
    }
    let mut days: BTreeMap<String, Vec<&PromptWait>> = BTreeMap::new();
    let mut projects: BTreeMap<String, Vec<&PromptWait>> = BTreeMap::new();
    let mut sessions: BTreeMap<(String, String), Vec<&PromptWait>> = BTreeMap::new();
    for w in waits {
        if let Some(day) = w.asked.and_then(day_of) {
            days.entry(day).or_default().push(w);
        }
        let project = w.project.clone().unwrap_or_else(|| "?".into());
        projects.entry(project).or_default().push(w);
        sessions
            .entry((w.session_id.clone(), w.title.clone()))
            .or_default()
            .push(w);
    }
    out.by_day = days
        .into_iter()
        .map(|(d, ws)| (d, Figures::of(ws.into_iter())))
        .collect();
    out.by_project = projects
        .into_iter()
        .map(|(p, ws)| (p, Figures::of(ws.into_iter())))
        .collect();
    out.by_project
        .sort_by(|a, b| b.1.asked.cmp(&a.1.asked).then(a.0.cmp(&b.0)));
    out.by_session = sessions
        .into_iter()
        .map(|((id, title), ws)| (id, title, Figures::of(ws.into_iter())))
        .collect();
    out.by_session
        .sort_by(|a, b| b.2.longest_ms.cmp(&a.2.longest_ms).then(a.0.cmp(&b.0)));
    let mut longest: Vec<&PromptWait> = waits.iter().filter(|w| w.waited().is_some()).collect();
    longest.sort_by(|a, b| {
        b.waited()
            .cmp(&a.waited())
            .then(a.request_id.cmp(&b.request_id))
    });
    out.longest = longest.into_iter().take(LONGEST).cloned().collect();
    out
}

/// The local day of a time (ms), `YYYY-MM-DD`.
fn day_of(ms: i64) -> Option<String> {
    crate::render::clock::local(ms).map(|t| format!("{}-{:02}-{:02}", t.year, t.month, t.day))
}

/// A wait in words: `850 ms`, `12.0 s`, `2m 10s`, `1h 05m`.
pub fn duration(ms: i64) -> String {
    match ms {
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        ms if ms < 3_600_000 => format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1000),
        ms => format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(
        id: &str,
        asked: Option<i64>,
        settled: Option<i64>,
        reply: &str,
        by: Option<(&str, &str)>,
    ) -> PromptWait {
        PromptWait {
            request_id: id.into(),
            session_id: "ses_a".into(),
            title: "A".into(),
            project: Some("/p".into()),
            kind: "permission".into(),
            what: "bash".into(),
            asked,
            settled,
            reply: settled.map(|_| reply.to_string()),
            by: by.map(|b| b.0.to_string()),
            machine: by.map(|b| b.1.to_string()),
            server: None,
            host: None,
            file: None,
        }
    }

    #[test]
    fn waits_are_counted_timed_and_placed() {
        let waits = [
            wait("p1", Some(0), Some(1_000), "once", Some(("ocview", "here"))),
            wait(
                "p2",
                Some(0),
                Some(5_000),
                "reject",
                Some(("ocview", "there")),
            ),
            wait(
                "p3",
                Some(0),
                Some(60_000),
                "always",
                Some(("another client", "here")),
            ),
            wait("p4", Some(0), None, "", None),
            wait("p5", Some(0), Some(2_000), "once", None),
        ];
        let w = figures(&waits, "here");
        let t = &w.total;
        assert_eq!(
            (t.asked, t.answered, t.rejected, t.never_answered),
            (5, 4, 1, 1)
        );
        assert_eq!((t.median_ms, t.longest_ms), (Some(5_000), Some(60_000)));
        assert_eq!(t.p90_ms, Some(60_000));
        assert_eq!(t.rejected_share(), 0.25);
        assert_eq!(w.answered_where[&Where::ThisMachine], 1);
        assert_eq!(w.answered_where[&Where::AnotherMachine], 1);
        assert_eq!(w.answered_where[&Where::AnotherClient], 1);
        assert_eq!(w.answered_where[&Where::NotOnRecord], 1);
        assert_eq!(w.longest[0].request_id, "p3");
        assert_eq!(w.by_project[0].1.asked, 5);
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(130_000), "2m 10s");
        assert_eq!(duration(3_900_000), "1h 05m");
    }
}
