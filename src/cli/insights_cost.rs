//! `ocview insights cost`: where the money went, over the archive: cost
//! and tokens in all, by model and by day with the cache-read share, what
//! the steps that made a failed tool call cost, retries by provider and
//! the time they cost, the costliest sessions. `--json` every figure;
//! `--csv` one row per model and day.

use std::process::ExitCode;

use clap::Args;

use crate::archive::Setting;
use crate::cli::insights_out::{RangeArgs, csv, cut, json};
use crate::insights::cost::{Cost, cache_share, date, day_offset_ms, figures, money};
use crate::insights::waits::duration;
use crate::model::wire::sanitize;
use crate::render::format;

#[derive(Args, Debug)]
pub struct CostArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// Only this model (provider/model).
    #[arg(long)]
    pub model: Option<String>,
    /// JSON for scripts.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// One row per model and day as CSV.
    #[arg(long)]
    pub csv: bool,
}

pub fn run(args: &CostArgs, setting: &Setting) -> Result<ExitCode, String> {
    let filter = args.range.filter(args.model.clone())?;
    let mut archive = crate::cli::archive::open_existing(setting)?;
    let offset = day_offset_ms(crate::archive::now_ms());
    let spending = archive
        .spending(&filter, offset)
        .map_err(|e| e.to_string())?;
    let text = if args.json {
        json(&serde_json::to_value(figures(&spending, args.model.as_deref())).unwrap_or_default())
    } else if args.csv {
        let mut out =
            "day,model,messages,cost,input,output,reasoning,cache_read,cache_write,cache_share\n"
                .to_string();
        for d in &spending.by_model_day {
            let f = &d.figures;
            out.push_str(&format!(
                "{},{},{},{:.6},{},{},{},{},{},{}\n",
                date(d.day),
                csv(&d.model),
                d.messages,
                f.cost,
                f.input,
                f.output,
                f.reasoning,
                f.cache_read,
                f.cache_write,
                cache_share(f).map_or(String::new(), |s| format!("{s:.4}"))
            ));
        }
        out
    } else {
        text(&figures(&spending, args.model.as_deref()))
    };
    crate::cli::io::write_stdout(&text).map_err(|e| e.to_string())
}

fn share(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{:.1}%", s * 100.0))
}

fn text(c: &Cost) -> String {
    if c.messages == 0 {
        return "no assistant message in the archive (for this filter)\n".into();
    }
    let t = &c.total;
    let mut out = format!(
        "{} in {} assistant messages · {} tokens (in {} out {} reasoning {} cache read {} write {}) · cache-read share {}\n",
        money(t.cost),
        c.messages,
        format::tokens(t.tokens()),
        format::tokens(t.input),
        format::tokens(t.output),
        format::tokens(t.reasoning),
        format::tokens(t.cache_read),
        format::tokens(t.cache_write),
        share(c.cache_share)
    );
    if let Some(saved) = c.saved {
        out.push_str(&format!(
            "the cache saved {} (cache reads at the models' prices, against input)\n",
            money(saved)
        ));
    }
    out.push_str(&format!(
        "steps that made a failed tool call: {} costing {}\n",
        c.failed_steps,
        money(c.failed_cost)
    ));
    out.push_str(&format!(
        "retries: {} waiting {} in all\n",
        c.retry_count(),
        duration(c.retry_wait_ms())
    ));
    let width = c
        .by_model
        .iter()
        .map(|m| sanitize::line(&m.model).chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 40);
    out.push_str(&format!(
        "{:<width$}  {:>9}  {:>9}  {:>8}  {:>7}  {:>12}\n",
        "MODEL", "COST", "MESSAGES", "TOKENS", "CACHE", "FAILED STEPS"
    ));
    for m in &c.by_model {
        out.push_str(&format!(
            "{:<width$}  {:>9}  {:>9}  {:>8}  {:>7}  {:>5} {:>6}\n",
            cut(&m.model, width),
            money(m.figures.cost),
            m.messages,
            format::tokens(m.figures.tokens()),
            share(m.cache_share),
            m.failed_steps,
            money(m.failed_cost)
        ));
    }
    if !c.retries.is_empty() {
        out.push_str("retries by provider:\n");
        for r in &c.retries {
            out.push_str(&format!(
                "  {:<24} {:>5} in {} sessions, waited {} (longest {})\n",
                cut(&r.provider, 24),
                r.retries,
                r.sessions,
                duration(r.waited_ms),
                duration(r.longest_ms)
            ));
        }
    }
    out.push_str("by day:\n");
    for d in c.by_day.iter().rev().take(14) {
        out.push_str(&format!(
            "  {}  {:>9}  {:>6} msg  {:>8} tok  cache {}\n",
            d.day,
            money(d.figures.cost),
            d.messages,
            format::tokens(d.figures.tokens()),
            share(d.cache_share)
        ));
    }
    out.push_str("costliest sessions:\n");
    for s in c.costliest.iter().take(10) {
        out.push_str(&format!(
            "  {:>9}  “{}”  {}\n",
            money(s.figures.cost),
            sanitize::line(&s.title),
            sanitize::line(&s.session_id)
        ));
    }
    out
}
