//! Small formatting helpers shared by the panes.

use crate::model::{Session, SessionStatus};

const SPINNER: [&str; 8] = ["⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷"];

/// The spinner frame for a moment in time (250 ms a frame).
pub fn spinner(now_ms: i64) -> &'static str {
    SPINNER[(now_ms.max(0) / 250) as usize % SPINNER.len()]
}

/// "now", "5m", "3h", "2d" since `then`. Under a minute is "now": an age
/// that counted seconds would redraw the screen every second while idle.
pub fn relative(then_ms: Option<i64>, now_ms: i64) -> String {
    let Some(then) = then_ms else {
        return String::new();
    };
    let secs = ((now_ms - then) / 1000).max(0);
    match secs {
        0..=59 => "now".into(),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// When [`relative`] of `then_ms` will next read differently, after
/// `now_ms` (both in ms).
pub fn relative_changes_at(then_ms: i64, now_ms: i64) -> i64 {
    let age = (now_ms - then_ms).max(0);
    let step: i64 = match age {
        ..3_600_000 => 60_000,
        3_600_000..86_400_000 => 3_600_000,
        _ => 86_400_000,
    };
    then_ms + (age / step + 1) * step
}

/// "$0.12", "$1.50", "<$0.01"; empty for zero.
pub fn cost(usd: f64) -> String {
    if usd <= 0.0 || !usd.is_finite() {
        String::new()
    } else if usd < 0.01 {
        "<$0.01".into()
    } else {
        format!("${usd:.2}")
    }
}

/// "ctx 12.3k/200k 6%", or "ctx 12.3k" when the model's limit is unknown.
pub fn context(c: &crate::model::entity::context::ContextUse) -> String {
    match (c.limit, c.percent()) {
        (Some(limit), Some(pct)) => {
            format!("ctx {}/{} {pct}%", tokens(c.used), limit_tokens(limit))
        }
        _ => format!("ctx {}", tokens(c.used)),
    }
}

/// A session's cost, "$0.00" included (the header says it even when free).
pub fn session_cost(usd: f64) -> String {
    match cost(usd) {
        c if c.is_empty() => "$0.00".into(),
        c => c,
    }
}

/// A figure ocview summed itself (the record had none), marked so:
/// "Σ$0.42", "Σ12.3k".
pub fn summed(figure: String, summed: bool) -> String {
    if summed && !figure.is_empty() {
        format!("{}{figure}", crate::model::entity::totals::SUMMED_MARK)
    } else {
        figure
    }
}

/// A session's cost as the header and panels show it: "$0.00" at least,
/// marked when summed.
pub fn totals_cost(t: &crate::model::entity::totals::Totals) -> String {
    summed(session_cost(t.cost), t.cost_summed)
}

/// A session's tokens, marked when summed ("Σ12.3k tok"); empty at zero.
pub fn totals_tokens(t: &crate::model::entity::totals::Totals) -> String {
    match t.token_count() {
        0 => String::new(),
        n => format!("{} tok", summed(tokens(n), t.tokens_summed)),
    }
}

/// A model's limit: "200k", "1M", "128.5k".
pub fn limit_tokens(n: u64) -> String {
    tokens(n).replace(".0k", "k").replace(".0M", "M")
}

/// "950", "12.3k", "4.1M".
/// A size: "812 B", "1.4 KB", "3.2 MB".
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// "1.2s", "3m04s".
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

/// A session's last-update time.
pub fn updated(session: &Session) -> Option<i64> {
    session.info.time.updated.or(session.info.time.created)
}

/// A short status word, with a retry countdown when one is due.
pub fn status_text(status: &SessionStatus, now_ms: i64) -> String {
    match status {
        SessionStatus::Idle => "idle".into(),
        SessionStatus::Busy => "busy".into(),
        SessionStatus::Retry { attempt, next, .. } => {
            let n = attempt.map(|a| format!(" #{a}")).unwrap_or_default();
            match next {
                Some(next) if *next > now_ms => {
                    format!("retry{n} in {}s", (next - now_ms + 999) / 1000)
                }
                _ => format!("retry{n}"),
            }
        }
        SessionStatus::Other(s) => crate::model::wire::sanitize::line(s).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(relative(Some(0), 3_000), "now");
        assert_eq!(relative(Some(0), 125_000), "2m");
        assert_eq!(relative(Some(0), 2 * 86_400_000), "2d");
        assert_eq!(relative(None, 5), "");
        assert_eq!(relative(Some(0), 59_999), "now");
        assert_eq!(relative(Some(0), 60_000), "1m");
        assert_eq!(cost(0.0), "");
        assert_eq!(cost(0.004), "<$0.01");
        assert_eq!(cost(1.5), "$1.50");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(duration(1_250), "1.2s");
        assert_eq!(duration(184_000), "3m04s");
        let retry = SessionStatus::Retry {
            attempt: Some(2),
            message: "x".into(),
            next: Some(10_500),
        };
        assert_eq!(status_text(&retry, 8_000), "retry #2 in 3s");
        assert_eq!(status_text(&retry, 11_000), "retry #2");
    }

    #[test]
    fn an_age_changes_at_the_next_minute_hour_or_day() {
        for (age, next) in [
            (0, 60_000),
            (59_999, 60_000),
            (60_000, 120_000),
            (3_599_999, 3_600_000),
            (3_600_000, 7_200_000),
            (86_400_000, 172_800_000),
        ] {
            let then = 1_000;
            let at = relative_changes_at(then, then + age);
            assert_eq!(at - then, next, "age {age}");
            assert_ne!(
                relative(Some(then), at - 1),
                relative(Some(then), at),
                "age {age}"
            );
        }
    }
}
