//! Wall-clock times of messages, in the user's local time zone (the C
//! library's `localtime_r`, which reads `TZ` and /etc/localtime).

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Local date and time of a moment (ms since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Local {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

pub fn local(ms: i64) -> Option<Local> {
    let secs = libc::time_t::try_from(ms.div_euclid(1000)).ok()?;
    // SAFETY: localtime_r only writes the `tm` it is given; a zeroed `tm`
    // is a valid value of the plain C struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    ok.then(|| Local {
        year: tm.tm_year + 1900,
        month: (tm.tm_mon + 1).clamp(1, 12) as u32,
        day: tm.tm_mday.max(1) as u32,
        hour: tm.tm_hour.max(0) as u32,
        minute: tm.tm_min.max(0) as u32,
        second: tm.tm_sec.max(0) as u32,
    })
}

/// "14:03:21" on the day of `today_ms`, "Nov 22 14:03" before it, with the
/// year when it is another year.
pub fn wall_clock(ms: i64, today_ms: i64) -> String {
    let (Some(t), Some(today)) = (local(ms), local(today_ms)) else {
        return String::new();
    };
    let month = MONTHS[(t.month - 1) as usize];
    if (t.year, t.month, t.day) == (today.year, today.month, today.day) {
        format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)
    } else if t.year == today.year {
        format!("{month} {} {:02}:{:02}", t.day, t.hour, t.minute)
    } else {
        format!("{month} {} {} {:02}:{:02}", t.day, t.year, t.hour, t.minute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_day_shows_seconds_other_days_the_date() {
        let now = 1_795_339_400_000; // 2026-11-22 UTC
        let t = local(now).unwrap();
        let same = wall_clock(now, now);
        assert_eq!(
            same,
            format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)
        );
        let week_ago = wall_clock(now - 7 * 86_400_000, now);
        assert!(
            week_ago.starts_with("Nov 15 ")
                || week_ago.starts_with("Nov 14 ")
                || week_ago.starts_with("Nov 16 "),
            "{week_ago}"
        );
        let year_ago = wall_clock(now - 366 * 86_400_000, now);
        assert!(year_ago.contains("2025"), "{year_ago}");
        // Absurd times from a bad file format, but never panic.
        let _ = wall_clock(i64::MAX, now);
        let _ = wall_clock(i64::MIN, now);
    }
}
