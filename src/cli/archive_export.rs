//! `ocview archive export` (event logs as JSON lines, secrets redacted
//! unless `--no-redact`) and `ocview archive redactions` (how many secrets
//! were redacted, by rule and session, never the values).

use std::path::Path;
use std::process::ExitCode;

use crate::archive::Setting;
use crate::cli::archive::{open_existing, session_id};
use crate::model::wire::sanitize;
use crate::redact::Tally;

/// `ocview archive export [--session ID] [--no-redact] FILE`.
pub fn export(
    session: Option<&str>,
    file: &Path,
    redact: bool,
    setting: &Setting,
) -> Result<ExitCode, String> {
    let (mut archive, id) = open_at(session, setting)?;
    let shown = sanitize::line(&file.display().to_string()).into_owned();
    let done = if file.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        crate::archive::export::export(&mut *archive, id.as_deref(), redact, &mut out)?
    } else {
        // A new file is private (what it holds may be secret); one that
        // exists keeps its mode.
        let out = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(file)
        }
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
        let mut out = std::io::BufWriter::new(out);
        crate::archive::export::export(&mut *archive, id.as_deref(), redact, &mut out)
            .map_err(|e| format!("{shown}: {e}"))?
    };
    let secrets = match redact {
        true => format!(", {}", said(&done.redacted)),
        false => ", not redacted".to_string(),
    };
    eprintln!(
        "ocview: {shown}: {} sessions, {} events{secrets}",
        done.sessions, done.events
    );
    Ok(ExitCode::SUCCESS)
}

/// The archive, and the session a command names (its id, or the start
/// of it), if it names one.
fn open_at(
    session: Option<&str>,
    setting: &Setting,
) -> Result<(Box<dyn crate::archive::Engine>, Option<String>), String> {
    let mut archive = open_existing(setting)?;
    let id = match session {
        Some(s) => Some(session_id(&mut *archive, s)?),
        None => None,
    };
    Ok((archive, id))
}

/// `3 secrets redacted (aws-access-token 2, github-pat 1)`, or `no secret
/// found`.
pub fn said(tally: &Tally) -> String {
    let total: u64 = tally.values().sum();
    if total == 0 {
        return "no secret found".into();
    }
    let mut by: Vec<(&String, &u64)> = tally.iter().collect();
    by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let rules: Vec<String> = by.iter().map(|(r, n)| format!("{r} {n}")).collect();
    format!(
        "{total} secret{} redacted ({})",
        if total == 1 { "" } else { "s" },
        rules.join(", ")
    )
}

/// `ocview archive redactions [ID] [--json]`: by rule, for one session or
/// the whole archive.
pub fn redactions(
    session: Option<&str>,
    json: bool,
    setting: &Setting,
) -> Result<ExitCode, String> {
    let (mut archive, id) = open_at(session, setting)?;
    let rules = archive
        .redactions(id.as_deref())
        .map_err(|e| e.to_string())?;
    let text = if json {
        let rows: Vec<serde_json::Value> = rules
            .iter()
            .map(|(rule, count)| serde_json::json!({"rule": rule, "count": count}))
            .collect();
        let mut t = serde_json::to_string_pretty(&rows).unwrap_or_default();
        t.push('\n');
        t
    } else {
        let tally: Tally = rules.into_iter().collect();
        let whose = match &id {
            Some(id) => sanitize::line(id).into_owned(),
            None => "the archive".into(),
        };
        format!("{whose}: {}\n", said(&tally))
    };
    crate::cli::io::write_stdout(&text).map_err(|e| e.to_string())
}
