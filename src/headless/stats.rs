//! `ocview stats`: what opencode's database says it cost, for scripts.
//! The text form starts with the boxes `opencode stats` prints, figure for
//! figure and in its formats (the same choice of sessions, the same
//! rounding), then adds ocview's own: by project and by agent. `--json`
//! gives every figure unrounded; `--csv` one row per group.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::model::wire::sanitize;
use crate::source::opencode_db::usage::{Figures, Group, Usage};

/// What was asked, as far as the printing goes.
#[derive(Debug, Clone, Default)]
pub struct StatsOptions {
    /// `--days N` (`Some(0)`: today).
    pub days: Option<u32>,
    /// `--tools N`: the first N tools (`None`: all).
    pub tools: Option<usize>,
    /// `--models [N]`: `Some(None)` all, `Some(Some(n))` the first n;
    /// `None`: hidden (opencode's default).
    pub models: Option<Option<usize>>,
    pub now_ms: i64,
}

pub use crate::source::opencode_db::usage::Derived;

pub fn derived(u: &Usage, o: &StatsOptions) -> Derived {
    u.derived(o.days, o.now_ms)
}

fn figures_json(f: &Figures) -> Value {
    json!({
        "cost": f.cost,
        "input": f.input,
        "output": f.output,
        "reasoning": f.reasoning,
        "cache_read": f.cache_read,
        "cache_write": f.cache_write,
        "tokens": f.tokens(),
    })
}

fn group_json(g: &Group, count: &str) -> Value {
    let mut v = figures_json(&g.figures);
    v["name"] = json!(g.name);
    v[count] = json!(g.count);
    v
}

/// Every figure, unrounded. Models' `output` is the model's own output;
/// `opencode stats` shows output + reasoning there.
/// The report's names as every output shows them: what came from the
/// database (model, tool, project, agent names, titles, folders, ids) with
/// no control, bidi or separator character left, before any is cut.
fn inert(u: &Usage) -> Usage {
    let line = |s: &mut String| {
        if let std::borrow::Cow::Owned(clean) = sanitize::line(s) {
            *s = clean;
        }
    };
    let mut u = u.clone();
    for g in u
        .by_day
        .values_mut()
        .chain(&mut u.by_model)
        .chain(&mut u.by_project)
        .chain(&mut u.by_agent)
    {
        line(&mut g.name);
    }
    for s in &mut u.costliest {
        line(&mut s.id);
        line(&mut s.title);
        line(&mut s.directory);
    }
    for (name, _) in &mut u.tools {
        line(name);
    }
    u.model_days = std::mem::take(&mut u.model_days)
        .into_iter()
        .map(|(name, days)| (sanitize::line(&name).into_owned(), days))
        .collect();
    u
}

pub fn to_json(u: &Usage, o: &StatsOptions) -> Value {
    let u = &inert(u);
    let d = derived(u, o);
    json!({
        "sessions": u.sessions,
        "messages": u.messages,
        "days": d.days,
        "cost": u.totals.cost,
        "cost_per_day": d.cost_per_day,
        "tokens_per_session": d.tokens_per_session,
        "median_tokens_per_session": d.median_tokens_per_session,
        "tokens": figures_json(&u.totals),
        "summed_sessions": u.summed_sessions,
        "first_ms": u.first_ms,
        "last_ms": u.last_ms,
        "by_day": u.by_day.iter().map(|(day, g)| {
            let mut v = group_json(g, "messages");
            v["name"] = json!(day_name(*day));
            v
        }).collect::<Vec<_>>(),
        "by_model": u.by_model.iter().map(|g| group_json(g, "messages")).collect::<Vec<_>>(),
        "by_agent": u.by_agent.iter().map(|g| group_json(g, "messages")).collect::<Vec<_>>(),
        "by_project": u.by_project.iter().map(|g| group_json(g, "sessions")).collect::<Vec<_>>(),
        "costliest": u.costliest.iter().map(|s| {
            let mut v = figures_json(&s.figures);
            v["id"] = json!(s.id);
            v["title"] = json!(s.title);
            v["directory"] = json!(s.directory);
            v["time_updated"] = json!(s.time_updated);
            v["summed"] = json!(s.summed);
            v
        }).collect::<Vec<_>>(),
        "tools": u.tools.iter().map(|(t, n)| json!({"name": t, "calls": n})).collect::<Vec<_>>(),
        "malformed_rows": u.malformed,
    })
}

/// One row per figure group: `kind,name,count,cost,input,output,reasoning,
/// cache_read,cache_write`.
pub fn to_csv(u: &Usage) -> String {
    let u = &inert(u);
    let mut out =
        String::from("kind,name,count,cost,input,output,reasoning,cache_read,cache_write\n");
    let mut row = |kind: &str, name: &str, count: u64, f: &Figures| {
        let _ = writeln!(
            out,
            "{kind},{},{count},{},{},{},{},{},{}",
            csv_field(name),
            f.cost,
            f.input,
            f.output,
            f.reasoning,
            f.cache_read,
            f.cache_write
        );
    };
    row("total", "", u.sessions, &u.totals);
    for (day, g) in &u.by_day {
        row("day", &day_name(*day), g.count, &g.figures);
    }
    for g in &u.by_model {
        row("model", &g.name, g.count, &g.figures);
    }
    for g in &u.by_project {
        row("project", &g.name, g.count, &g.figures);
    }
    for g in &u.by_agent {
        row("agent", &g.name, g.count, &g.figures);
    }
    for s in &u.costliest {
        row("session", &s.id, 1, &s.figures);
    }
    for (t, n) in &u.tools {
        row("tool", t, *n, &Figures::default());
    }
    out
}

fn csv_field(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).collect();
    if clean.contains([',', '"']) {
        format!("\"{}\"", clean.replace('"', "\"\""))
    } else {
        clean
    }
}

/// `2026-05-14` for a day number (days since the epoch).
pub fn day_name(day: i64) -> String {
    // Civil date from days (Howard Hinnant's algorithm).
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

const WIDTH: usize = 56;

fn rule(left: char, right: char) -> String {
    format!("{left}{}{right}", "─".repeat(WIDTH))
}

/// A box's title line; `left`: the spaces before it, as opencode has them.
fn title(out: &mut String, t: &str, left: usize) {
    let right = WIDTH.saturating_sub(left + t.len());
    let _ = writeln!(out, "{}", rule('┌', '┐'));
    let _ = writeln!(out, "│{}{t}{}│", " ".repeat(left), " ".repeat(right));
    let _ = writeln!(out, "{}", rule('├', '┤'));
}

fn line(out: &mut String, label: &str, value: &str) {
    let gap = 55usize.saturating_sub(label.chars().count() + value.chars().count());
    let _ = writeln!(out, "│{label}{}{value} │", " ".repeat(gap));
}

/// JavaScript's `n.toFixed(d)`: the number's exact binary value rounded,
/// a true tie away from zero (not to even). Only a value exactly halfway
/// is a tie: `0.15` is 0.1499999… and gives "0.1", `0.125` gives "0.13".
pub fn to_fixed(x: f64, d: usize) -> String {
    let s = 2.0 * 10f64.powi(d as i32);
    let scaled = x * s;
    // The product's rounding error, exactly (fused multiply-add): zero
    // only when `scaled` is x × s itself, not a neighbour of it.
    let exact = x.mul_add(s, -scaled) == 0.0;
    let tie = exact && scaled.fract() == 0.0 && scaled.abs() % 2.0 == 1.0;
    let x = match (tie, x > 0.0) {
        (false, _) => x,
        (true, true) => x.next_up(),
        (true, false) => x.next_down(),
    };
    format!("{x:.d$}")
}

/// opencode's token figure: `12.3K`, `1.5M`, `999`.
pub fn short(n: f64) -> String {
    if n >= 1e6 {
        format!("{}M", to_fixed(n / 1e6, 1))
    } else if n >= 1000.0 {
        format!("{}K", to_fixed(n / 1000.0, 1))
    } else {
        format!("{n}")
    }
}

/// A count with thousands commas, as `toLocaleString()` writes it.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// JavaScript's `Math.round` (halves up).
fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// The text `opencode stats` prints for these figures, then ocview's own.
pub fn to_text(u: &Usage, o: &StatsOptions) -> String {
    let u = &inert(u);
    let d = derived(u, o);
    let mut out = String::new();
    title(&mut out, "OVERVIEW", 23);
    line(&mut out, "Sessions", &grouped(u.sessions));
    line(&mut out, "Messages", &grouped(u.messages));
    line(&mut out, "Days", &d.days.to_string());
    let _ = writeln!(out, "{}\n", rule('└', '┘'));
    title(&mut out, "COST & TOKENS", 20);
    line(
        &mut out,
        "Total Cost",
        &format!("${}", to_fixed(u.totals.cost, 2)),
    );
    line(
        &mut out,
        "Avg Cost/Day",
        &format!("${}", to_fixed(d.cost_per_day, 2)),
    );
    line(
        &mut out,
        "Avg Tokens/Session",
        &short(js_round(d.tokens_per_session)),
    );
    line(
        &mut out,
        "Median Tokens/Session",
        &short(js_round(d.median_tokens_per_session)),
    );
    line(&mut out, "Input", &short(u.totals.input as f64));
    line(&mut out, "Output", &short(u.totals.output as f64));
    line(&mut out, "Cache Read", &short(u.totals.cache_read as f64));
    line(&mut out, "Cache Write", &short(u.totals.cache_write as f64));
    let _ = writeln!(out, "{}\n", rule('└', '┘'));
    if let Some(limit) = o.models {
        model_section(&mut out, u, limit);
    }
    out.push('\n');
    tool_section(&mut out, u, o.tools);
    out.push('\n');
    // ocview's own, after what opencode prints.
    for (name, groups, what) in [
        ("BY PROJECT", &u.by_project, "sessions"),
        ("BY AGENT", &u.by_agent, "messages"),
    ] {
        if groups.is_empty() {
            continue;
        }
        title(&mut out, name, 22);
        for g in groups.iter() {
            let label: String = g
                .name
                .chars()
                .filter(|c| !c.is_control())
                .take(30)
                .collect();
            let value = format!(
                "{} {what}  ${}",
                grouped(g.count),
                to_fixed(g.figures.cost, 2)
            );
            line(&mut out, &format!(" {label}"), &value);
        }
        let _ = writeln!(out, "{}\n", rule('└', '┘'));
    }
    if u.summed_sessions > 0 {
        let _ = writeln!(
            out,
            "Σ {} sessions had no stored totals: summed from their messages.",
            grouped(u.summed_sessions)
        );
    }
    if u.malformed > 0 {
        let _ = writeln!(out, "! {}", malformed_line(u.malformed));
    }
    out
}

/// `MODEL USAGE`: each model's messages, tokens and cost (the first
/// `limit`, or all).
fn model_section(out: &mut String, u: &Usage, limit: Option<usize>) {
    if u.by_model.is_empty() {
        return;
    }
    title(out, "MODEL USAGE", 22);
    let shown = &u.by_model[..limit.unwrap_or(usize::MAX).min(u.by_model.len())];
    for (i, g) in shown.iter().enumerate() {
        let f = &g.figures;
        let _ = writeln!(out, "│ {:<54} │", g.name);
        line(out, "  Messages", &grouped(g.count));
        line(out, "  Input Tokens", &short(f.input as f64));
        line(
            out,
            "  Output Tokens",
            &short((f.output + f.reasoning) as f64),
        );
        line(out, "  Cache Read", &short(f.cache_read as f64));
        line(out, "  Cache Write", &short(f.cache_write as f64));
        line(out, "  Cost", &format!("${}", to_fixed(f.cost, 4)));
        if i + 1 < shown.len() {
            let _ = writeln!(out, "{}", rule('├', '┤'));
        }
    }
    let _ = writeln!(out, "{}", rule('└', '┘'));
}

/// `TOOL USAGE`: the tools most called first (the first `limit`, or all),
/// each with a bar and its share.
fn tool_section(out: &mut String, u: &Usage, limit: Option<usize>) {
    if u.tools.is_empty() {
        return;
    }
    title(out, "TOOL USAGE", 22);
    let shown = &u.tools[..limit.unwrap_or(usize::MAX).min(u.tools.len())];
    let most = shown.iter().map(|t| t.1).max().unwrap_or(1).max(1);
    let all: u64 = u.tools.iter().map(|t| t.1).sum();
    for (name, n) in shown {
        let bar = "█".repeat(((*n as f64 / most as f64 * 20.0).floor() as usize).max(1));
        let name = if name.chars().count() > 18 {
            format!("{}..", name.chars().take(16).collect::<String>())
        } else {
            name.clone()
        };
        let pct = to_fixed(*n as f64 / all as f64 * 100.0, 1);
        let row = format!(" {name:<18} {bar:<20} {n:>3} ({pct:>4}%)");
        let pad = 55usize.saturating_sub(row.chars().count());
        let _ = writeln!(out, "│{row}{} │", " ".repeat(pad));
    }
    let _ = writeln!(out, "{}", rule('└', '┘'));
}

/// What a report says of the rows it could not read.
pub fn malformed_line(rows: u64) -> String {
    format!(
        "{} rows of the database hold JSON that cannot be read: skipped, the rest counted.",
        grouped(rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_fixed_rounds_ties_up_as_javascript_does() {
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(0.5, 0), "1");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(0.1, 2), "0.10");
        assert_eq!(to_fixed(1.005, 2), "1.00"); // 1.00499999… in binary
        // What node prints for each (a product that rounds to a tie is not one).
        for (x, d, js) in [
            (0.15, 1, "0.1"),
            (0.35, 1, "0.3"),
            (1.45, 1, "1.4"),
            (8.345, 2, "8.35"),
            (0.145, 2, "0.14"),
            (0.00015, 4, "0.0001"),
            (0.12345, 4, "0.1235"),
            (1.00005, 4, "1.0001"),
            (-2.5, 0, "-3"),
            (12.5, 0, "13"),
        ] {
            assert_eq!(to_fixed(x, d), js, "({x}).toFixed({d})");
        }
    }

    #[test]
    fn short_token_figures_as_opencode_writes_them() {
        assert_eq!(short(999.0), "999");
        assert_eq!(short(1000.0), "1.0K");
        assert_eq!(short(12_345.0), "12.3K");
        assert_eq!(short(1_250_000.0), "1.3M");
    }

    #[test]
    fn days_are_civil_dates() {
        assert_eq!(day_name(0), "1970-01-01");
        assert_eq!(day_name(20_454), "2026-01-01");
        assert_eq!(day_name(-1), "1969-12-31");
    }
}
