//! How long agents waited on people (#41, point 2): every prompt the
//! archive sees asked (a permission, a question), when it was asked and
//! when it was settled, by what reply. The collector makes a row of each
//! `*.asked` and `*.replied`/`question.rejected` it sees, timed as the
//! event arrived; the archive keeps the earliest ask and the first
//! settling. Who answered, from where, is the answers' record
//! (`rows::AnswerRow`), joined by request.

use serde::Serialize;

/// The schema that keeps prompts.
pub const SINCE: i64 = 17;

/// Migration 17's SQL (both engines).
pub const SQL: &str = "CREATE TABLE prompts (
        request_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        what TEXT NOT NULL,
        asked BIGINT,
        settled BIGINT,
        reply TEXT
    );
    CREATE INDEX prompts_by_asked ON prompts (asked);";

/// The upsert (both engines: `$n` and `?n` alike): the earliest ask, the
/// first settling, what is known of the rest.
pub fn upsert_sql(param: fn(usize) -> String) -> String {
    let p: Vec<String> = (1..=7).map(param).collect();
    format!(
        "INSERT INTO prompts (request_id, session_id, kind, what, asked, settled, reply)
         VALUES ({}, {}, {}, {}, {}, {}, {})
         ON CONFLICT (request_id) DO UPDATE SET
           kind = CASE WHEN excluded.what <> '' THEN excluded.kind ELSE prompts.kind END,
           what = CASE WHEN excluded.what <> '' THEN excluded.what ELSE prompts.what END,
           asked = CASE WHEN prompts.asked IS NULL OR excluded.asked < prompts.asked
                        THEN coalesce(excluded.asked, prompts.asked) ELSE prompts.asked END,
           settled = coalesce(prompts.settled, excluded.settled),
           reply = coalesce(prompts.reply, excluded.reply)",
        p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    )
}

/// One prompt as a batch carries it: asked, settled, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PromptRow {
    pub request_id: String,
    pub session_id: String,
    /// `permission` or `question`.
    pub kind: String,
    /// What asked: the permission (`bash`, `edit`, …), or `question`; empty
    /// when only its settling was seen.
    pub what: String,
    pub asked: Option<i64>,
    pub settled: Option<i64>,
    /// `once`, `always`, `reject`, `answered`, `dismissed`.
    pub reply: Option<String>,
}

impl PromptRow {
    /// This row with `later` (of the same request) folded in, as the
    /// archive folds them.
    pub fn fold(&mut self, later: PromptRow) {
        if !later.what.is_empty() {
            self.kind = later.kind;
            self.what = later.what;
        }
        self.asked = match (self.asked, later.asked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.settled = self.settled.or(later.settled);
        self.reply = self.reply.take().or(later.reply);
    }
}

/// One prompt with who answered it, as the archive joins them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptWait {
    pub request_id: String,
    pub session_id: String,
    pub title: String,
    /// The session's project (its folder).
    pub project: Option<String>,
    pub kind: String,
    pub what: String,
    pub asked: Option<i64>,
    pub settled: Option<i64>,
    pub reply: Option<String>,
    /// The answers' record: `ocview` or `another client`, and the machine
    /// it was given (or seen) on.
    pub by: Option<String>,
    pub machine: Option<String>,
    /// Where the session was archived from (to open it).
    pub server: Option<String>,
    pub host: Option<String>,
    pub file: Option<String>,
}

impl PromptWait {
    /// How long it waited (settled − asked), when both are known.
    pub fn waited(&self) -> Option<i64> {
        Some((self.settled? - self.asked?).max(0))
    }

    /// Whether a person said no.
    pub fn rejected(&self) -> bool {
        matches!(self.reply.as_deref(), Some("reject" | "dismissed"))
    }

    /// The session as a search hit: what opens it.
    pub fn hit(&self) -> crate::archive::query::Hit {
        crate::archive::query::Hit {
            session_id: self.session_id.clone(),
            title: self.title.clone(),
            time: self.asked.unwrap_or_default(),
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

/// The most prompts read at once.
pub const READ_MAX: i64 = 200_000;

/// The query both engines run (`param` spells their placeholders): the
/// prompts asked in a range (`1`, `2`), of a project (`3`) and a machine
/// (`4`), with who answered, newest first; its columns are a
/// `PromptWait`'s, in order (`PromptWait::from_columns`).
pub fn waits_sql(param: fn(usize) -> String, cast: bool) -> String {
    let p: Vec<String> = (1..=4)
        .map(|i| {
            let t = if i <= 2 { "bigint" } else { "text" };
            match cast {
                true => format!("{}::{t}", param(i)),
                false => param(i),
            }
        })
        .collect();
    format!(
        "SELECT p.request_id, p.session_id, coalesce(s.title, ''), s.directory,
                p.kind, p.what, p.asked, p.settled, p.reply, a.by, a.machine,
                s.server, s.host, s.file
         FROM prompts p
         LEFT JOIN answers a ON a.request_id = p.request_id
         LEFT JOIN sessions s ON s.id = p.session_id
         WHERE ({0} IS NULL OR p.asked >= {0}) AND ({1} IS NULL OR p.asked < {1})
           AND ({2} IS NULL OR s.directory = {2}) AND ({3} IS NULL OR s.host = {3})
         ORDER BY p.asked DESC, p.request_id LIMIT {READ_MAX}",
        p[0], p[1], p[2], p[3]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ask_and_its_settling_fold_into_one_row() {
        let mut row = PromptRow {
            request_id: "per_1".into(),
            session_id: "ses_1".into(),
            kind: "permission".into(),
            what: String::new(),
            asked: None,
            settled: Some(900),
            reply: Some("once".into()),
        };
        row.fold(PromptRow {
            what: "bash".into(),
            kind: "permission".into(),
            asked: Some(400),
            ..PromptRow::default()
        });
        row.fold(PromptRow {
            asked: Some(500),
            settled: Some(1200),
            reply: Some("reject".into()),
            ..PromptRow::default()
        });
        assert_eq!(
            (
                row.what.as_str(),
                row.asked,
                row.settled,
                row.reply.as_deref()
            ),
            ("bash", Some(400), Some(900), Some("once"))
        );
        assert!(upsert_sql(|i| format!("${i}")).contains("VALUES ($1, $2"));
    }
}
