//! `ocview audit`: every answer given to a prompt, newest first: by whom
//! (this machine's ocview and its user, or another client), when, to which
//! server, what the prompt showed and what the server said. An `always`
//! stands out: it allows more than the one call.

use std::process::ExitCode;

use clap::Args;

use crate::archive::Setting;
use crate::archive::engine::AnswerFilter;
use crate::archive::rows::AnswerRow;
use crate::model::wire::sanitize;

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Only this session's answers (its id).
    #[arg(long)]
    pub session: Option<String>,
    /// Only answers given on a machine whose name holds this.
    #[arg(long)]
    pub machine: Option<String>,
    /// Only `permission` or `question` answers.
    #[arg(long, value_parser = ["permission", "question"])]
    pub kind: Option<String>,
    /// The most listed.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// A JSON array for scripts (its text made inert as the screen's).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &AuditArgs, setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = crate::cli::archive::open_existing(setting)?;
    let filter = AnswerFilter {
        session: args.session.clone(),
        machine: args.machine.clone(),
        kind: args.kind.clone(),
        limit: args.limit.clamp(1, 100_000),
    };
    let rows = archive.answers(&filter).map_err(|e| e.to_string())?;
    let text = if args.json {
        let mut value = serde_json::to_value(&rows).unwrap_or_default();
        sanitize::json_value(&mut value);
        let mut t = serde_json::to_string_pretty(&value).unwrap_or_default();
        t.push('\n');
        t
    } else if rows.is_empty() {
        "no answer on record\n".to_string()
    } else {
        rows.iter().map(line).collect()
    };
    crate::cli::io::write_stdout(&text).map_err(|e| e.to_string())
}

/// One answer on one line (what was shown, cut to its first line).
fn line(a: &AnswerRow) -> String {
    let when = crate::render::clock::local(a.time)
        .map(|t| {
            format!(
                "{}-{:02}-{:02} {:02}:{:02}",
                t.year, t.month, t.day, t.hour, t.minute
            )
        })
        .unwrap_or_else(|| "unknown time".into());
    let answer = match a.answer.as_str() {
        "always" => format!("ALWAYS ({})", a.patterns.join(", ")),
        other => other.to_string(),
    };
    let who = match a.by.as_str() {
        "ocview" => format!("{}@{}", a.user, a.machine),
        other => format!("{other} (seen from {})", a.machine),
    };
    let shown = a.shown.lines().next().unwrap_or_default();
    let message = a
        .message
        .as_deref()
        .map(|m| format!(" “{m}”"))
        .unwrap_or_default();
    let server = a.server.as_deref().unwrap_or("?");
    sanitize::line(&format!(
        "{when}  {answer}{message}  {}: {shown}  by {who} to {server}: {}  {}",
        a.prompt, a.outcome, a.session_id
    ))
    .into_owned()
        + "\n"
}
