//! What became of every tool call the archive holds (#41): its outcome,
//! kept apart as OpenCode records it, and its error as one fingerprint
//! (paths, numbers and ids made alike), by model and tool.
//!
//! OpenCode 1.18.33 ends a call `completed` or `error`: a call it could not
//! make is a part of the tool `invalid` that completed; a person's refusal
//! is an error that says "The user rejected permission…" (or, for a
//! question, "The user dismissed…"); an interrupted call, "Tool execution
//! aborted". The archive keeps each call's error in `parts.error` (schema
//! 16), filled as parts are written, and for parts written before, the
//! first time the outcomes are asked for.

use serde::Serialize;

/// The schema that keeps a tool call's error in its row.
pub const SINCE: i64 = 16;

/// Migration 16's SQL (both engines): the column, and the few rows whose
/// error is still to be read from their JSON (those written before).
pub const SQL: &str = "ALTER TABLE parts ADD COLUMN error TEXT;
    CREATE INDEX parts_errors_unread ON parts (kind)
        WHERE kind = 'tool' AND error IS NULL AND (state = 'error' OR tool = 'invalid');";

/// The most of an error a row keeps (what a fingerprint and a reader need).
pub const ERROR_CAP: usize = 2000;

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Completed,
    /// The tool failed (`state.status = "error"`, not one of those below).
    Error,
    /// A call OpenCode could not make (a `tool: "invalid"` part).
    Invalid,
    /// A person said no (a permission rejected, a question dismissed).
    Rejected,
    /// Interrupted (the run was aborted).
    Aborted,
    /// Not ended yet (pending or running, as last archived).
    Unfinished,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Completed,
        Outcome::Error,
        Outcome::Invalid,
        Outcome::Rejected,
        Outcome::Aborted,
        Outcome::Unfinished,
    ];

    /// The outcome of a call of `tool` whose state is `state`, with `error`.
    pub fn of(tool: &str, state: Option<&str>, error: Option<&str>) -> Outcome {
        if tool == "invalid" {
            return Outcome::Invalid;
        }
        match state {
            Some("completed") if error.is_some_and(|e| e.starts_with(STOPPED)) => Outcome::Aborted,
            Some("completed") => Outcome::Completed,
            Some("error") => {
                let error = error.unwrap_or_default();
                if REJECTED.iter().any(|p| error.starts_with(p)) {
                    Outcome::Rejected
                } else if error.starts_with(ABORTED) {
                    Outcome::Aborted
                } else {
                    Outcome::Error
                }
            }
            _ => Outcome::Unfinished,
        }
    }

    /// Its name in SQL's answer and in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Error => "error",
            Outcome::Invalid => "invalid",
            Outcome::Rejected => "rejected",
            Outcome::Aborted => "aborted",
            Outcome::Unfinished => "unfinished",
        }
    }

    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Whether the call failed (a person's refusal counts: the agent's
    /// step did not happen).
    pub fn failed(self) -> bool {
        !matches!(self, Outcome::Completed | Outcome::Unfinished)
    }
}

/// How a refusal's error starts.
const REJECTED: [&str; 2] = ["The user rejected permission", "The user dismissed"];
/// How an interrupted call's error starts.
const ABORTED: &str = "Tool execution aborted";
/// What a row keeps as the error of a command the run's abort stopped:
/// OpenCode 1.18.33 ends it `completed`, its output saying so in its shell
/// metadata (checked against the real server in `insights_failures`).
pub const STOPPED: &str = "User aborted the command";

/// The error a row keeps for a call that ended `completed`: the abort of
/// a running command, else none.
pub fn stopped(output: Option<&str>) -> Option<&'static str> {
    let output = output?;
    let meta = &output[output.rfind("<shell_metadata>")?..];
    meta.contains(STOPPED).then_some(STOPPED)
}

/// `Outcome::of` in SQL over a part row `p` (both engines): the same rule.
pub const OUTCOME_SQL: &str = "CASE WHEN p.tool = 'invalid' THEN 'invalid'
     WHEN p.state = 'completed' AND p.error LIKE 'User aborted the command%' THEN 'aborted'
     WHEN p.state = 'completed' THEN 'completed'
     WHEN p.state = 'error' AND (p.error LIKE 'The user rejected permission%'
                                 OR p.error LIKE 'The user dismissed%') THEN 'rejected'
     WHEN p.state = 'error' AND p.error LIKE 'Tool execution aborted%' THEN 'aborted'
     WHEN p.state = 'error' THEN 'error'
     ELSE 'unfinished' END";

/// The outcomes `Outcome::failed` says failed, as an SQL list for
/// `OUTCOME_SQL IN …`.
pub const FAILED_SQL: &str = "('error', 'invalid', 'rejected', 'aborted')";

/// A tool part's error as its row keeps it (from its JSON: `state.error`;
/// an invalid call's `state.output`), at most `ERROR_CAP` bytes.
pub fn error_of(part: &serde_json::Value) -> Option<String> {
    let text = |field: &str| part.pointer(field).and_then(|v| v.as_str());
    // A call OpenCode could not make says why in its output.
    if part.get("tool").and_then(|t| t.as_str()) == Some("invalid") {
        return text("/state/output").map(kept_error);
    }
    if text("/state/status") == Some("completed") {
        return stopped(text("/state/output")).map(str::to_string);
    }
    text("/state/error").map(kept_error)
}

/// An error as a row keeps it: at most `ERROR_CAP` bytes, whole characters.
pub fn kept_error(e: &str) -> String {
    let mut end = e.len().min(ERROR_CAP);
    while !e.is_char_boundary(end) {
        end -= 1;
    }
    e[..end].to_string()
}

/// Which calls are counted: in a time range (ms, `until` excluded), of a
/// project (its folder), a machine, a model (`provider/model`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallFilter {
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub project: Option<String>,
    pub machine: Option<String>,
    pub model: Option<String>,
}

/// Calls of one model and tool that ended one way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallCount {
    /// `provider/model`, or `?` when the message does not say.
    pub model: String,
    pub tool: String,
    pub outcome: Outcome,
    pub calls: u64,
}

impl CallCount {
    pub fn new(model: &str, tool: &str, outcome: Outcome, calls: u64) -> CallCount {
        CallCount {
            model: model.into(),
            tool: tool.into(),
            outcome,
            calls,
        }
    }
}

/// One call that failed, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedCall {
    pub session_id: String,
    pub message_id: String,
    pub part_id: String,
    pub time: i64,
    pub outcome: Outcome,
    pub error: String,
    /// The session's title and where it was archived from (to open it).
    pub title: String,
    pub server: Option<String>,
    pub host: Option<String>,
    pub file: Option<String>,
}

impl FailedCall {
    /// The call as a search hit: what opens its session at its place.
    pub fn hit(&self) -> crate::archive::query::Hit {
        crate::archive::query::Hit {
            session_id: self.session_id.clone(),
            title: self.title.clone(),
            time: self.time,
            project: None,
            server: self.server.clone(),
            host: self.host.clone(),
            file: self.file.clone(),
            message_id: Some(self.message_id.clone()),
            part_id: Some(self.part_id.clone()),
            kind: "tool".into(),
            snippet: String::new(),
        }
    }
}

/// An error made alike to others of its kind: its first line, with paths,
/// numbers, ids and quoted text each said as one placeholder, at most 160
/// characters.
pub fn fingerprint(error: &str) -> String {
    let line = error.lines().map(str::trim).find(|l| !l.is_empty());
    let line = quotes_alike(line.unwrap_or_default());
    let mut out = String::new();
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&token_alike(word));
        if out.chars().count() >= 160 {
            break;
        }
    }
    out.chars().take(160).collect()
}

/// Text in double quotes or backticks (and in single quotes opened at a
/// word's start) said as `<text>`, whatever it holds.
fn quotes_alike(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(['"', '`', '\'']) {
        let q = rest[i..].chars().next().unwrap_or('"');
        let opens = q != '\'' || i == 0 || rest[..i].ends_with(char::is_whitespace);
        let close = rest[i + 1..].find(q).map(|j| i + 1 + j);
        match close {
            Some(j) if opens => {
                out.push_str(&rest[..i]);
                out.push_str("<text>");
                rest = &rest[j + 1..];
            }
            _ => {
                out.push_str(&rest[..=i]);
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One word of an error, made alike: a path, an id or a number becomes
/// its placeholder; what surrounds it (punctuation) stays.
fn token_alike(word: &str) -> String {
    let core_start = word
        .find(|c: char| c.is_alphanumeric() || "/\\.~_".contains(c))
        .unwrap_or(word.len());
    let core_end = word
        .rfind(|c: char| c.is_alphanumeric() || c == '/' || c == '_')
        .map_or(core_start, |i| {
            i + word[i..].chars().next().map_or(1, char::len_utf8)
        })
        .max(core_start);
    let (lead, core, tail) = (
        &word[..core_start],
        &word[core_start..core_end],
        &word[core_end..],
    );
    let alike = if core == "<text>" || core.is_empty() {
        core.to_string()
    } else if core.contains('/') || core.contains('\\') || core.starts_with('~') {
        "<path>".to_string()
    } else if is_id(core) {
        "<id>".to_string()
    } else if !core.is_empty() && core.chars().any(|c| c.is_ascii_digit()) {
        numbers_alike(core)
    } else {
        core.to_string()
    };
    format!("{lead}{alike}{tail}")
}

/// An id: OpenCode's (`ses_…`, `msg_…`, `prt_…`, `call_…`), a provider's
/// (`toolu_…`), or a long run of letters and digits mixed (hashes, UUIDs).
fn is_id(core: &str) -> bool {
    const PREFIXES: [&str; 7] = ["ses_", "msg_", "prt_", "per_", "que_", "call_", "toolu_"];
    if PREFIXES.iter().any(|p| core.starts_with(p)) && core.len() > 8 {
        return true;
    }
    let digits = core.chars().filter(char::is_ascii_digit).count();
    let letters = core.chars().filter(char::is_ascii_alphabetic).count();
    core.len() >= 12
        && digits > 0
        && letters > 0
        && core
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Runs of digits said as `<n>` (`line 42:7` → `line <n>:<n>`).
fn numbers_alike(core: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in core.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push_str("<n>");
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failed_list_in_sql_is_the_outcomes_own_rule() {
        for o in Outcome::ALL {
            let quoted = format!("'{}'", o.name());
            assert_eq!(FAILED_SQL.contains(&quoted), o.failed(), "{o:?}");
        }
    }

    #[test]
    fn outcomes_are_kept_apart_as_opencode_records_them() {
        let of = Outcome::of;
        assert_eq!(of("bash", Some("completed"), None), Outcome::Completed);
        assert_eq!(of("invalid", Some("completed"), None), Outcome::Invalid);
        assert_eq!(
            of(
                "bash",
                Some("error"),
                Some("The user rejected permission to use this specific tool call.")
            ),
            Outcome::Rejected
        );
        assert_eq!(
            of(
                "question",
                Some("error"),
                Some("The user dismissed this question")
            ),
            Outcome::Rejected
        );
        assert_eq!(
            of("bash", Some("error"), Some("Tool execution aborted")),
            Outcome::Aborted
        );
        assert_eq!(
            of("read", Some("error"), Some("File not found: /a/b")),
            Outcome::Error
        );
        assert_eq!(of("bash", Some("running"), None), Outcome::Unfinished);
        assert!(Outcome::Rejected.failed() && !Outcome::Unfinished.failed());
        for o in Outcome::ALL {
            assert_eq!(Outcome::from_name(o.name()), Some(o));
        }
    }

    #[test]
    fn errors_of_one_kind_share_a_fingerprint() {
        let a = fingerprint("File not found: /home/ana/src/main.rs\nmore detail");
        let b = fingerprint("File not found: /srv/x/lib.rs");
        assert_eq!(a, b);
        assert_eq!(a, "File not found: <path>");
        assert_eq!(
            fingerprint("Error: line 42:7 unexpected token in ses_01JABCDEFGHJKMNP"),
            "Error: line <n>:<n> unexpected token in <id>"
        );
        assert_eq!(
            fingerprint("Command failed with exit code 127: `foo --bar`"),
            fingerprint("Command failed with exit code 2: `baz`")
        );
        assert_eq!(
            fingerprint("no match for \"needle\" in file"),
            "no match for <text> in file"
        );
        assert_eq!(fingerprint(""), "");
        assert!(fingerprint(&"word ".repeat(100)).chars().count() <= 160);
    }

    #[test]
    fn an_error_is_kept_to_its_cap_on_a_character_boundary() {
        let long = "é".repeat(ERROR_CAP);
        let v = serde_json::json!({"state": {"status": "error", "error": long}});
        let kept = error_of(&v).unwrap();
        assert!(kept.len() <= ERROR_CAP && kept.chars().all(|c| c == 'é'));
        assert_eq!(error_of(&serde_json::json!({"state": {}})), None);
    }
}
