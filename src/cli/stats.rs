//! `ocview stats`: opencode's database summed up for scripts, with the
//! figures `opencode stats` prints (the same flags where it has them).

use std::path::PathBuf;

use crate::headless::stats::{self, StatsOptions};
use crate::source::opencode_db::usage::{self, UsageQuery};
use crate::source::opencode_db::{Db, DbEnv};
use clap::Args;

#[derive(Args)]
pub struct StatsArgs {
    /// Only sessions updated in the last N days (0: today), as `opencode
    /// stats --days`.
    #[arg(long, value_name = "N")]
    pub days: Option<u32>,
    /// Only this project's sessions (its id).
    #[arg(long, value_name = "ID")]
    pub project: Option<String>,
    /// Show the model table (all, or the first N by messages).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "all")]
    pub models: Option<String>,
    /// Show only the first N tools.
    #[arg(long, value_name = "N")]
    pub tools: Option<usize>,
    /// How many of the costliest sessions to list (JSON and CSV).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Every figure as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// One row per group as CSV.
    #[arg(long)]
    pub csv: bool,
    /// The database (default: opencode's, from $OPENCODE_DB or
    /// $XDG_DATA_HOME/opencode/opencode.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Print the figures; an unreadable database is one line on stderr.
pub fn run(args: &StatsArgs) -> Result<String, String> {
    let models = match args.models.as_deref() {
        None => None,
        Some("all") => Some(None),
        Some(n) => {
            Some(Some(n.parse::<usize>().map_err(|_| {
                format!("--models takes a number of models, not {n:?}")
            })?))
        }
    };
    let path = match &args.db {
        Some(p) => p.clone(),
        None => DbEnv::from_process()
            .database()
            .ok_or("no opencode database: no home folder, and OPENCODE_DB is not set")?,
    };
    let db = Db::open(&path).map_err(|e| e.to_string())?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let query = UsageQuery {
        since_ms: args.days.map(|d| usage::since_for_days(d, now_ms)),
        project: args.project.clone(),
        costliest: args.top,
        tools: true,
        day_offset_ms: usage::local_offset_ms(now_ms),
    };
    let found = db.usage(&query).map_err(|e| e.to_string())?;
    let options = StatsOptions {
        days: args.days,
        tools: args.tools,
        models,
        now_ms,
    };
    Ok(if args.json {
        let mut text = serde_json::to_string_pretty(&stats::to_json(&found, &options))
            .map_err(|e| e.to_string())?;
        text.push('\n');
        text
    } else if args.csv {
        // The CSV's rows are figures only: what was skipped goes to stderr.
        if found.malformed > 0 {
            eprintln!("ocview: {}", stats::malformed_line(found.malformed));
        }
        stats::to_csv(&found)
    } else {
        stats::to_text(&found, &options)
    })
}

/// `ocview stats`: the figures on standard output.
pub fn print(args: &StatsArgs) -> anyhow::Result<std::process::ExitCode> {
    let text = run(args).map_err(anyhow::Error::msg)?;
    crate::cli::io::write_stdout(&text)
}
