//! How wide the session list is: what the titles of the rows in view need,
//! between a floor and a limit, so that the turns get the rest. Only the
//! rows on screen are measured: the work per frame does not grow with the
//! number of sessions.

use crate::app::App;
use crate::app::session_tree::groups::Level;
use crate::app::session_tree::rows::SessionRow;
use crate::model::Session;
use crate::model::SessionStatus;
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::wrap;

/// The narrowest list (border included): "› · " and a title's first words
/// with its age, and the header "Sessions N".
pub const MIN_WIDTH: u16 = 22;

/// Above this many columns a row also shows the session's cost.
pub const COST_FROM: usize = 40;

/// Columns kept for a row's age ("now", "17s", "59m"): older or stranger
/// ages are measured as they are, so the width does not tick with the
/// clock.
const AGE_COLUMNS: usize = 3;

/// In a fleet every session sits under a server heading, and the rows
/// begin with one.
pub fn is_fleet_list(rows: &[SessionRow]) -> bool {
    rows.first().is_some_and(|r| r.group.is_some())
}

/// A session row's indent: its depth, and a column more in a fleet.
pub fn indent(fleet: bool, depth: u16) -> String {
    format!(
        "{}{}",
        if fleet { "  " } else { "" },
        "  ".repeat(depth as usize)
    )
}

/// What a session row shows on its right: the retry countdown or the age,
/// after the cost when the list is wide enough for it.
pub fn right_text(app: &App, s: &Session, with_cost: bool) -> String {
    let mut right = match &s.status {
        SessionStatus::Retry { .. } => format::status_text(&s.status, app.now_ms),
        _ => format::relative(format::updated(s), app.clock_ms()),
    };
    if with_cost {
        let totals = s.totals();
        let c = format::summed(format::cost(totals.cost), totals.cost_summed);
        if !c.is_empty() {
            right = format!("{c} {right}");
        }
    }
    // Pinned in the archive: no prune takes it.
    if app.archive.pinned(&s.info.id) {
        right = format!("{PIN_MARK} {right}");
    }
    right
}

/// A pinned session's mark, before its time.
pub const PIN_MARK: &str = "⚑";

/// The filter's hits in a session's content, as its row shows them.
pub fn hits_text(app: &App, s: &Session) -> String {
    match app.overlays.search.list.counts.get(s.info.id.as_str()) {
        Some(n) if !app.panes.list.filter.is_empty() => {
            format!(" {n} hit{} ", if *n == 1 { "" } else { "s" })
        }
        _ => String::new(),
    }
}

/// Columns left of a session row's title: the selection mark, the indent,
/// the fold mark, the status glyph and its space, and the badge.
pub fn left_width(indent: &str, badged: bool) -> usize {
    wrap::width(indent) + 4 + if badged { 2 } else { 0 }
}

/// Columns a row needs to show whole (without the list's border).
fn row_needs(app: &App, row: &SessionRow, fleet: bool, with_cost: bool) -> usize {
    let sessions = app.store.sessions();
    if let (Some(text), Some(group)) = (&row.header, &row.group) {
        // Marker, lead and fold mark, name, state, badge, counts.
        let state = match &group.level {
            Level::Server(Some(s)) => group.state_label(s).map_or(0, |l| 1 + wrap::width(&l)),
            _ => 0,
        };
        let counts = [group.counts.busy, group.counts.asking, group.counts.failed]
            .iter()
            .filter(|&&n| n > 0)
            .map(|n| 2 + n.to_string().len())
            .sum::<usize>();
        let counts = if group.counts.sessions == 0 {
            " no sessions".len()
        } else {
            counts
        };
        return 1
            + row.depth as usize
            + 2
            + wrap::width(&sanitize::line(text))
            + state
            + if row.badge { 2 } else { 0 }
            + counts;
    }
    if let Some(dir) = &row.header {
        return 1 + wrap::width(&sanitize::line(dir)) + if row.badge { 2 } else { 0 };
    }
    let Some(s) = sessions.get(row.index) else {
        return 0;
    };
    let indent = indent(fleet, row.depth);
    let badged = row.own_prompt || row.badge;
    let right = wrap::width(&right_text(app, s, with_cost)).max(AGE_COLUMNS);
    left_width(&indent, badged)
        + wrap::width(&sanitize::line(s.title()))
        + 1
        + wrap::width(&hits_text(app, s))
        + right
}

/// The list's width (its border included) for the rows `offset..` that
/// `height` rows show: what the widest of them needs, at least
/// `MIN_WIDTH` (or wide enough for the costs when `limit` allows them) and
/// at most `limit`.
pub fn wanted(app: &App, offset: usize, height: usize, limit: u16) -> u16 {
    let rows = &app.panes.list.rows;
    let fleet = is_fleet_list(rows);
    let with_cost = limit as usize > COST_FROM + 1;
    let widest = rows
        .iter()
        .skip(offset)
        .take(height)
        .map(|r| row_needs(app, r, fleet, with_cost))
        .max()
        .unwrap_or(0);
    // The header, "Sessions 7" or the filter being typed and its search's
    // progress.
    let header = if app.panes.list.filtering || !app.panes.list.filter.is_empty() {
        let progress = app
            .list_search_progress_short()
            .map_or(0, |p| 2 + wrap::width(&p));
        2 + wrap::width(&sanitize::line(&app.panes.list.filter)) + progress
    } else {
        "Sessions ".len() + app.store.sessions().len().to_string().len()
    };
    // No rows: the line that says why ("searching… 0 of 2 sessions").
    let empty = if rows.is_empty() && !app.panes.list.filter.is_empty() {
        app.list_search_progress()
            .map_or("no session matches".len(), |p| wrap::width(&p))
    } else {
        0
    };
    // A list allowed past `COST_FROM` columns shows the rows' costs.
    let floor = if with_cost {
        COST_FROM as u16 + 2
    } else {
        MIN_WIDTH
    };
    let needed = widest.max(header).max(empty) + 1;
    (needed.min(u16::MAX as usize) as u16).max(floor).min(limit)
}

/// The first row in view after the selection `selected` was kept in a list
/// of `len` rows showing `height` of them from `offset`.
pub fn offset_keeping(selected: Option<usize>, offset: usize, len: usize, height: usize) -> usize {
    let Some(i) = selected else { return offset };
    let mut offset = offset;
    if i < offset {
        offset = i;
    } else if height > 0 && i >= offset + height {
        offset = i + 1 - height;
    }
    offset.min(len.saturating_sub(height.max(1)))
}
