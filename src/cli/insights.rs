//! `ocview insights failures`: which model breaks which tool, over the
//! archive (every server, machine and teammate it holds): one row per
//! model and tool with its calls, its failures and their rate, each
//! outcome apart; with `--tool` and `--model`, that cell's failed calls
//! grouped by their error. `--json` and `--csv` for scripts, their text
//! made inert as the screen's.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::archive::Setting;
use crate::archive::tool_calls::Outcome;
use crate::cli::insights_out::{RangeArgs, csv, cut, json};
use crate::insights::failures::{self, Cell, ErrorGroup, SortBy};
use crate::model::wire::sanitize;

#[derive(Subcommand, Debug)]
pub enum InsightsCommand {
    /// Tool calls by model and tool: calls, failed, the failure rate, and
    /// each outcome apart (error, invalid, rejected by a person, aborted).
    Failures(FailuresArgs),
    /// Prompts asked and how long they waited on a person: answered,
    /// rejected, never answered; median, p90, longest; where they were
    /// answered; by day, project and session; the longest waits.
    Waits(WaitsArgs),
    /// Where the money went: cost and tokens by model and day with the
    /// cache-read share, the cost of steps that made a failed tool call,
    /// retries by provider and the time they cost, the costliest sessions.
    Cost(crate::cli::insights_cost::CostArgs),
}

#[derive(Args, Debug)]
pub struct WaitsArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// JSON for scripts.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// One row per prompt as CSV.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Args, Debug)]
pub struct FailuresArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// Only this model (provider/model); with --tool, that cell's failed
    /// calls grouped by their error.
    #[arg(long)]
    pub model: Option<String>,
    /// With --model: that model's failed calls of this tool, grouped by
    /// their error, newest first.
    #[arg(long, requires = "model")]
    pub tool: Option<String>,
    /// The order: failed, rate, calls, model or tool.
    #[arg(long, default_value = "failed", value_parser = ["failed", "rate", "calls", "model", "tool"])]
    pub sort: String,
    /// The most failed calls read for --tool.
    #[arg(long, default_value_t = 1000)]
    pub limit: u32,
    /// JSON for scripts.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// One row per model and tool (or per failed call, with --tool) as CSV.
    #[arg(long)]
    pub csv: bool,
}

pub fn run(command: &InsightsCommand, setting: &Setting) -> Result<ExitCode, String> {
    let args = match command {
        InsightsCommand::Failures(args) => args,
        InsightsCommand::Waits(args) => return waits(args, setting),
        InsightsCommand::Cost(args) => return crate::cli::insights_cost::run(args, setting),
    };
    let filter = args.range.filter(args.model.clone())?;
    let mut archive = crate::cli::archive::open_existing(setting)?;
    let text = match (&args.tool, &args.model) {
        (Some(tool), Some(model)) => {
            let calls = archive
                .failed_calls(&filter, model, tool, args.limit.clamp(1, 1_000_000))
                .map_err(|e| e.to_string())?;
            let groups = failures::groups(calls);
            if args.json {
                json(&serde_json::json!({"model": model, "tool": tool, "groups": groups}))
            } else if args.csv {
                groups_csv(&groups)
            } else {
                groups_text(model, tool, &groups)
            }
        }
        _ => {
            let counts = archive.tool_calls(&filter).map_err(|e| e.to_string())?;
            let by = SortBy::from_name(&args.sort).unwrap_or_default();
            let cells = failures::cells(&counts, by);
            if args.json {
                let (calls, failed) = failures::totals(&cells);
                json(&serde_json::json!({"calls": calls, "failed": failed, "cells": cells}))
            } else if args.csv {
                cells_csv(&cells)
            } else {
                cells_text(&cells, by)
            }
        }
    };
    crate::cli::io::write_stdout(&text).map_err(|e| e.to_string())
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn cells_text(cells: &[Cell], by: SortBy) -> String {
    if cells.is_empty() {
        return "no tool call in the archive (for this filter)\n".into();
    }
    let (calls, failed) = failures::totals(cells);
    let mut out = format!(
        "{calls} tool calls, {failed} failed ({}), by model and tool, by {}\n",
        percent(if calls == 0 {
            0.0
        } else {
            failed as f64 / calls as f64
        }),
        by.name()
    );
    let model_w = cells
        .iter()
        .map(|c| sanitize::line(&c.model).chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 40);
    let tool_w = cells
        .iter()
        .map(|c| sanitize::line(&c.tool).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    out.push_str(&format!(
        "{:<model_w$}  {:<tool_w$}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>8}  {:>7}\n",
        "MODEL", "TOOL", "CALLS", "FAILED", "RATE", "ERROR", "INVALID", "REJECTED", "ABORTED"
    ));
    for c in cells {
        out.push_str(&format!(
            "{:<model_w$}  {:<tool_w$}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>8}  {:>7}\n",
            cut(&c.model, model_w),
            cut(&c.tool, tool_w),
            c.calls,
            c.failed,
            percent(c.rate()),
            c.outcomes[&Outcome::Error],
            c.outcomes[&Outcome::Invalid],
            c.outcomes[&Outcome::Rejected],
            c.outcomes[&Outcome::Aborted],
        ));
    }
    out
}

fn cells_csv(cells: &[Cell]) -> String {
    let mut out =
        "model,tool,calls,failed,rate,completed,error,invalid,rejected,aborted,unfinished\n"
            .to_string();
    for c in cells {
        out.push_str(&format!(
            "{},{},{},{},{:.4},{},{},{},{},{},{}\n",
            csv(&c.model),
            csv(&c.tool),
            c.calls,
            c.failed,
            c.rate(),
            c.outcomes[&Outcome::Completed],
            c.outcomes[&Outcome::Error],
            c.outcomes[&Outcome::Invalid],
            c.outcomes[&Outcome::Rejected],
            c.outcomes[&Outcome::Aborted],
            c.outcomes[&Outcome::Unfinished],
        ));
    }
    out
}

fn groups_text(model: &str, tool: &str, groups: &[ErrorGroup]) -> String {
    let (model, tool) = (sanitize::line(model), sanitize::line(tool));
    let n: usize = groups.iter().map(|g| g.calls.len()).sum();
    if n == 0 {
        return format!("no failed call of {tool} by {model}\n");
    }
    let mut out = format!(
        "{n} failed call{} of {tool} by {model}, {} kind{} of error:\n",
        if n == 1 { "" } else { "s" },
        groups.len(),
        if groups.len() == 1 { "" } else { "s" }
    );
    for g in groups {
        out.push_str(&format!(
            "{:>6} × {:<8} {}\n",
            g.calls.len(),
            g.outcome.name(),
            sanitize::line(&g.fingerprint)
        ));
        for c in g.calls.iter().take(3) {
            out.push_str(&format!(
                "         {}  {} {}\n",
                crate::cli::archive::date(c.time),
                sanitize::line(&c.session_id),
                sanitize::line(&c.part_id)
            ));
        }
        if g.calls.len() > 3 {
            out.push_str(&format!("         … and {} more\n", g.calls.len() - 3));
        }
    }
    out
}

fn groups_csv(groups: &[ErrorGroup]) -> String {
    let mut out = "fingerprint,outcome,time,session_id,message_id,part_id,error\n".to_string();
    for g in groups {
        for c in &g.calls {
            out.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                csv(&g.fingerprint),
                g.outcome.name(),
                c.time,
                csv(&c.session_id),
                csv(&c.message_id),
                csv(&c.part_id),
                csv(&c.error)
            ));
        }
    }
    out
}

/// `ocview insights waits`.
fn waits(args: &WaitsArgs, setting: &Setting) -> Result<ExitCode, String> {
    use crate::insights::waits::{Where, duration, figures};
    let filter = args.range.filter(None)?;
    let mut archive = crate::cli::archive::open_existing(setting)?;
    let rows = archive.prompt_waits(&filter).map_err(|e| e.to_string())?;
    let here = crate::archive::origin::hostname();
    let text = if args.json {
        json(&serde_json::to_value(figures(&rows, &here)).unwrap_or_default())
    } else if args.csv {
        let mut out = "request_id,session_id,project,kind,what,asked,settled,waited_ms,reply,answered_where\n"
            .to_string();
        for w in &rows {
            let n = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{}\n",
                csv(&w.request_id),
                csv(&w.session_id),
                csv(w.project.as_deref().unwrap_or_default()),
                csv(&w.kind),
                csv(&w.what),
                n(w.asked),
                n(w.settled),
                n(w.waited()),
                csv(w.reply.as_deref().unwrap_or_default()),
                match w.settled {
                    Some(_) => Where::of(w, &here).words(),
                    None => "",
                }
            ));
        }
        out
    } else if rows.is_empty() {
        "no prompt on record (for this filter)\n".to_string()
    } else {
        let w = figures(&rows, &here);
        let t = &w.total;
        let d = |ms: Option<i64>| ms.map_or("-".to_string(), duration);
        let mut out = format!(
            "{} prompts asked, {} answered ({} rejected, {:.1}%), {} never answered\n\
             waited: median {}, p90 {}, longest {}\n",
            t.asked,
            t.answered,
            t.rejected,
            t.rejected_share() * 100.0,
            t.never_answered,
            d(t.median_ms),
            d(t.p90_ms),
            d(t.longest_ms)
        );
        let places: Vec<String> = w
            .answered_where
            .iter()
            .map(|(place, n)| format!("{} {n}", place.words()))
            .collect();
        out.push_str(&format!("answered by: {}\n", places.join(", ")));
        out.push_str("longest waits:\n");
        for l in w.longest.iter().take(10) {
            out.push_str(&format!(
                "  {:>8}  {}  {}  “{}”  {}\n",
                d(l.waited()),
                crate::cli::archive::date(l.asked.unwrap_or_default()),
                sanitize::line(&l.what),
                sanitize::line(&l.title),
                sanitize::line(&l.session_id)
            ));
        }
        out.push_str("by project:\n");
        for (project, f) in w.by_project.iter().take(10) {
            out.push_str(&format!(
                "  {:<40} {:>5} asked  median {}\n",
                sanitize::line(project),
                f.asked,
                d(f.median_ms)
            ));
        }
        out.push_str("by day:\n");
        for (day, f) in w.by_day.iter().rev().take(14) {
            out.push_str(&format!(
                "  {day}  {:>5} asked  median {}  longest {}\n",
                f.asked,
                d(f.median_ms),
                d(f.longest_ms)
            ));
        }
        out
    };
    crate::cli::io::write_stdout(&text).map_err(|e| e.to_string())
}
