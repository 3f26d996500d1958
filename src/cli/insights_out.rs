//! What the `ocview insights` commands share: the range flags, and text
//! made inert for JSON, CSV and columns.

use clap::Args;

use crate::archive::tool_calls::CallFilter;
use crate::model::wire::sanitize;

/// Which sessions' figures: a time range, a project, a machine.
#[derive(Args, Debug)]
pub struct RangeArgs {
    /// From this date on: YYYY-MM-DD, ms since 1970, or an age (3d, 12h).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Before this date (same forms as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only sessions of this project (its folder).
    #[arg(long)]
    pub project: Option<String>,
    /// Only sessions archived from this machine.
    #[arg(long)]
    pub machine: Option<String>,
}

impl RangeArgs {
    /// The filter these say, as of now (`model` for the failures).
    pub fn filter(&self, model: Option<String>) -> Result<CallFilter, String> {
        let now = crate::archive::now_ms();
        let time = |t: &Option<String>| {
            t.as_deref()
                .map(|t| crate::archive::query::parse_time(t, now))
                .transpose()
        };
        Ok(CallFilter {
            since: time(&self.since)?,
            until: time(&self.until)?,
            project: self.project.clone(),
            machine: self.machine.clone(),
            model,
        })
    }
}

pub fn json(value: &serde_json::Value) -> String {
    let mut value = value.clone();
    sanitize::json_value(&mut value);
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// A CSV field: inert, quoted when it must be.
pub fn csv(s: &str) -> String {
    let clean = sanitize::line(s);
    if clean.contains([',', '"']) {
        format!("\"{}\"", clean.replace('"', "\"\""))
    } else {
        clean.into_owned()
    }
}

/// `s` inert, cut to `w` characters with an ellipsis.
pub fn cut(s: &str, w: usize) -> String {
    let s = sanitize::line(s);
    match s.chars().count() > w {
        true => s.chars().take(w - 1).chain(['…']).collect(),
        false => s.into_owned(),
    }
}
