//! `ocview archive pin` (sessions a prune never takes) and `ocview archive
//! policy` (a team archive's one set of limits).

use std::process::ExitCode;

use crate::archive::{Limits, Setting};
use crate::cli::archive::{open, session_id};
use crate::model::wire::sanitize;

/// `ocview archive pin [ID] [--off]`: pin or unpin one session, or list
/// the pinned.
pub fn pin(session: Option<&str>, pinned: bool, setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    let Some(session) = session else {
        let pins = archive.pins().map_err(|e| e.to_string())?;
        let mut out = String::new();
        for id in &pins {
            let title = crate::archive::prune::title_of(&mut *archive, id);
            out.push_str(&format!(
                "{}  {}\n",
                sanitize::line(id),
                sanitize::line(&title)
            ));
        }
        if pins.is_empty() {
            out.push_str("no session is pinned\n");
        }
        return crate::cli::io::write_stdout(&out).map_err(|e| e.to_string());
    };
    let id = session_id(&mut *archive, session)?;
    let host = crate::archive::origin::hostname();
    let changed = archive
        .set_pin(&id, pinned, &host)
        .map_err(|e| e.to_string())?;
    let shown = sanitize::line(&id);
    let line = match (pinned, changed) {
        (true, true) => format!("{shown}: pinned; a prune never takes it\n"),
        (true, false) => format!("{shown}: pinned already\n"),
        (false, true) => format!("{shown}: unpinned; the limits apply to it again\n"),
        (false, false) => format!("{shown}: was not pinned\n"),
    };
    crate::cli::io::write_stdout(&line).map_err(|e| e.to_string())
}

/// `ocview archive policy [--max-mb N] [--max-age-days D]`.
pub fn policy(
    max_mb: Option<u64>,
    max_age_days: Option<u64>,
    setting: &Setting,
) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    let place = archive.place().to_string();
    if max_mb.is_some() || max_age_days.is_some() {
        // What is not given stays as it was.
        let now = archive
            .policy()
            .map_err(|e| e.to_string())?
            .unwrap_or(Limits::NONE);
        let limits = Limits {
            max_bytes: match max_mb {
                Some(0) => None,
                Some(mb) => Some(mb.saturating_mul(1024 * 1024)),
                None => now.max_bytes,
            },
            max_age_days: match max_age_days {
                Some(0) => None,
                Some(d) => Some(d),
                None => now.max_age_days,
            },
        };
        let by = format!(
            "{}@{}",
            std::env::var("USER").unwrap_or_default(),
            crate::archive::origin::hostname()
        );
        archive
            .set_policy(&limits, &by)
            .map_err(|e| e.to_string())?;
    }
    let line = match archive.policy().map_err(|e| e.to_string())? {
        None => format!(
            "{place}: a file's limits are its machine's (archive_max_mb, archive_max_age_days)\n"
        ),
        Some(l) => format!("{place}: {}\n", said(&l)),
    };
    crate::cli::io::write_stdout(&line).map_err(|e| e.to_string())
}

/// `size cap 500 MB, age limit 90 days`, or `no limits`.
fn said(l: &Limits) -> String {
    let mut parts = Vec::new();
    if let Some(b) = l.max_bytes {
        parts.push(format!("size cap {}", crate::archive::prune::bytes(b)));
    }
    if let Some(d) = l.max_age_days {
        parts.push(format!("age limit {d} days"));
    }
    match parts.is_empty() {
        true => "no limits: nothing is pruned".into(),
        false => parts.join(", "),
    }
}
