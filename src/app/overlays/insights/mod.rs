//! Insights (`I`), read off the loop, `tab` from one to the other:
//! - failures by model and tool: a heat map of model × tool where there
//!   is room, and one row per model and tool with its calls, failures and
//!   their rate, each outcome apart; `s` the order;
//!   enter drills into a row: its failed calls grouped by their error,
//!   each opened at its place in its session;
//! - waits on people: prompts asked, answered, rejected and never
//!   answered, how long they waited, where they were answered, and the
//!   longest waits, each opened at its session;
//! - where the money went: cost and tokens with the cache-read share, by
//!   model and by day, failed steps and retries, and the costliest
//!   sessions, each opened.
//!
//! 1-5 (or ←/→) pick the range as in the usage view.

mod cost_draw;
pub mod draw;
mod matrix;

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::component::{Ask, Component, Cx, Handled, list_move};
use crate::app::keymap::{Action, Context};
use crate::app::msg::{AppMsg, InsightsReply};
use crate::app::overlays::usage::RANGES;
use crate::app::{App, Overlay};
use crate::archive::tool_calls::{CallFilter, FailedCall};
use crate::insights::failures::{self, Cell, ErrorGroup, SortBy};
use crate::insights::waits::Waits;

/// The most failed calls a drill reads.
const CALLS_MAX: u32 = 2000;
/// The range the view opens on at first (30 days).
const FIRST_RANGE: usize = 1;

/// Which insight the view shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    Failures,
    Waits,
    Cost,
}

impl Kind {
    /// The next one `tab` shows.
    pub fn next(self) -> Kind {
        match self {
            Kind::Failures => Kind::Waits,
            Kind::Waits => Kind::Cost,
            Kind::Cost => Kind::Failures,
        }
    }

    /// What it is called in a title.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Failures => "failures",
            Kind::Waits => "waits",
            Kind::Cost => "cost",
        }
    }
}

#[derive(Debug, Default)]
pub struct InsightsView {
    pub kind: Kind,
    /// `RANGES[range]`.
    pub range: usize,
    pub sort: SortBy,
    pub loading: bool,
    pub error: Option<String>,
    pub cells: Vec<Cell>,
    pub selected: usize,
    /// Rows the list showed last (for page keys), set when drawn.
    pub page: usize,
    /// A row drilled into, while it is.
    pub drill: Option<Drill>,
    /// The waits' figures, once read.
    pub waits: Option<Box<Waits>>,
    /// The longest wait selected.
    pub wait_selected: usize,
    /// Where the money went, once read.
    pub cost: Option<Box<crate::insights::cost::Cost>>,
    /// The costly session selected.
    pub cost_selected: usize,
    /// Answers to an older question are dropped.
    generation: u64,
}

/// One model's failed calls of one tool, by their error.
#[derive(Debug, Default)]
pub struct Drill {
    pub model: String,
    pub tool: String,
    pub loading: bool,
    pub error: Option<String>,
    pub groups: Vec<ErrorGroup>,
    /// Each line of the list: a group's heading, or one of its calls.
    pub lines: Vec<DrillLine>,
    pub selected: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrillLine {
    Group(usize),
    Call(usize, usize),
}

impl Drill {
    fn loaded(&mut self, result: Result<Vec<FailedCall>, String>) {
        self.loading = false;
        match result {
            Ok(calls) => {
                self.groups = failures::groups(calls);
                self.lines = self
                    .groups
                    .iter()
                    .enumerate()
                    .flat_map(|(g, group)| {
                        std::iter::once(DrillLine::Group(g))
                            .chain((0..group.calls.len()).map(move |c| DrillLine::Call(g, c)))
                    })
                    .collect();
                // On the first call: enter opens it at once.
                self.selected = usize::from(self.lines.len() > 1);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The call on the selected line (a heading stands for its first).
    pub fn chosen(&self) -> Option<&FailedCall> {
        match self.lines.get(self.selected)? {
            DrillLine::Group(g) => self.groups.get(*g)?.calls.first(),
            DrillLine::Call(g, c) => self.groups.get(*g)?.calls.get(*c),
        }
    }
}

impl InsightsView {
    /// The calls the range admits, as of `now_ms`.
    fn filter(&self, now_ms: i64) -> CallFilter {
        CallFilter {
            since: RANGES[self.range].map(|days| now_ms - i64::from(days) * 86_400_000),
            ..CallFilter::default()
        }
    }

    /// What a thread answered (an older question's answer is dropped).
    pub fn on_reply(&mut self, generation: u64, reply: InsightsReply) {
        if generation != self.generation {
            return;
        }
        match reply {
            InsightsReply::Counts(result) => {
                self.loading = false;
                match result {
                    Ok(counts) => {
                        self.cells = failures::cells(&counts, self.sort);
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e),
                }
                self.selected = self.selected.min(self.cells.len().saturating_sub(1));
            }
            InsightsReply::Failed(result) => {
                if let Some(d) = self.drill.as_mut() {
                    d.loaded(result);
                }
            }
            InsightsReply::Waits(result) => {
                self.loading = false;
                match result {
                    Ok(w) => {
                        self.wait_selected =
                            self.wait_selected.min(w.longest.len().saturating_sub(1));
                        self.waits = Some(w);
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e),
                }
            }
            InsightsReply::Cost(result) => {
                self.loading = false;
                match result {
                    Ok(c) => {
                        self.cost_selected =
                            self.cost_selected.min(c.costliest.len().saturating_sub(1));
                        self.cost = Some(c);
                        self.error = None;
                    }
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// The range in words: "last 30 days", "all time".
    pub fn range_words(&self) -> String {
        match RANGES[self.range] {
            Some(days) => format!("last {days} days"),
            None => "all time".into(),
        }
    }
}

impl App {
    /// `I`: open the view on the range last chosen (30 days at first).
    pub(crate) fn open_insights(&mut self) {
        if self.archive.setting.is_none() {
            self.verbs
                .warn("the archive is off: no tool call is on record");
            return;
        }
        let was = &self.overlays.insights;
        let range = if was.generation == 0 {
            FIRST_RANGE
        } else {
            was.range
        };
        self.overlays.insights = InsightsView {
            kind: was.kind,
            range,
            sort: was.sort,
            page: was.page.max(1),
            generation: was.generation,
            ..Default::default()
        };
        self.overlay = Some(Overlay::Insights);
        self.insights_read(None);
    }

    /// Ask the archive, on a thread: the counts, or (`drill`) one row's
    /// failed calls.
    pub(crate) fn insights_read(&mut self, drill: Option<(String, String)>) {
        let Some(setting) = self.archive.setting.clone() else {
            return;
        };
        let view = &mut self.overlays.insights;
        view.generation += 1;
        let generation = view.generation;
        let filter = view.filter(crate::archive::now_ms());
        let kind = view.kind;
        match &drill {
            Some((model, tool)) => {
                view.drill = Some(Drill {
                    model: model.clone(),
                    tool: tool.clone(),
                    loading: true,
                    ..Default::default()
                })
            }
            None => {
                view.loading = true;
                view.drill = None;
            }
        }
        let tell = self.verbs.done_sender();
        std::thread::spawn(move || {
            let engine = setting
                .open()
                .map_err(|e| e.to_string())
                .and_then(|engine| engine.ok_or_else(|| "the archive is off".to_string()));
            let reply = match (engine, drill) {
                (Err(e), None) if kind == Kind::Waits => InsightsReply::Waits(Err(e)),
                (Err(e), None) if kind == Kind::Cost => InsightsReply::Cost(Err(e)),
                (Err(e), None) => InsightsReply::Counts(Err(e)),
                (Err(e), Some(_)) => InsightsReply::Failed(Err(e)),
                (Ok(mut engine), None) if kind == Kind::Waits => InsightsReply::Waits(
                    engine
                        .prompt_waits(&filter)
                        .map(|rows| {
                            let here = crate::archive::origin::hostname();
                            Box::new(crate::insights::waits::figures(&rows, &here))
                        })
                        .map_err(|e| e.to_string()),
                ),
                (Ok(mut engine), None) if kind == Kind::Cost => {
                    let offset = crate::insights::cost::day_offset_ms(crate::archive::now_ms());
                    InsightsReply::Cost(
                        engine
                            .spending(&filter, offset)
                            .map(|s| Box::new(crate::insights::cost::figures(&s, None)))
                            .map_err(|e| e.to_string()),
                    )
                }
                (Ok(mut engine), None) => {
                    InsightsReply::Counts(engine.tool_calls(&filter).map_err(|e| e.to_string()))
                }
                (Ok(mut engine), Some((model, tool))) => InsightsReply::Failed(
                    engine
                        .failed_calls(&filter, &model, &tool, CALLS_MAX)
                        .map_err(|e| e.to_string()),
                ),
            };
            let _ = tell.send(AppMsg::Insights(generation, reply));
        });
    }
}

impl Component for InsightsView {
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if let Some(drill) = self.drill.as_mut() {
            // Back to the rows (a read still under way is dropped).
            if cx.only(Context::List, &key) == Some(Action::ListClose) {
                self.drill = None;
                return Handled::Used;
            }
            return drill_key(drill, key, cx, self.page);
        }
        let range = match key.code {
            KeyCode::Char(c @ '1'..='5') => Some(c as usize - '1' as usize),
            KeyCode::Left | KeyCode::Char('h') => Some(self.range.saturating_sub(1)),
            KeyCode::Right | KeyCode::Char('l') => Some((self.range + 1).min(RANGES.len() - 1)),
            _ => None,
        };
        if let Some(range) = range {
            if range != self.range {
                self.range = range;
                return Handled::Asks(Ask::InsightsRead(None));
            }
            return Handled::Used;
        }
        let action = match cx.only(Context::List, &key) {
            _ if cx.is(Action::Insights, &key) => Some(Action::ListClose),
            a => a,
        };
        if action == Some(Action::ListKind) {
            self.kind = self.kind.next();
            return Handled::Asks(Ask::InsightsRead(None));
        }
        match self.kind {
            Kind::Waits => return waits_key(self, action),
            Kind::Cost => return cost_key(self, action),
            Kind::Failures => {}
        }
        if let Some(to) =
            action.and_then(|a| list_move(a, self.selected, self.cells.len(), self.page))
        {
            self.selected = to;
            return Handled::Used;
        }
        match action {
            Some(Action::ListSort) => {
                self.sort = self.sort.next();
                failures::sort(&mut self.cells, self.sort);
                self.selected = 0;
            }
            Some(Action::ListChoose) => {
                if let Some(c) = self.cells.get(self.selected).filter(|c| c.failed > 0) {
                    return Handled::Asks(Ask::InsightsRead(Some((
                        c.model.clone(),
                        c.tool.clone(),
                    ))));
                }
            }
            Some(Action::ListClose) => return Handled::Asks(Ask::Close),
            _ => {}
        }
        Handled::Used
    }
}

/// Keys in a drilled row: move, enter opens the call at its place.
fn drill_key(drill: &mut Drill, key: KeyEvent, cx: &Cx<'_>, page: usize) -> Handled {
    let action = cx.only(Context::List, &key);
    if let Some(to) = action.and_then(|a| list_move(a, drill.selected, drill.lines.len(), page)) {
        drill.selected = to;
        return Handled::Used;
    }
    match action {
        Some(Action::ListChoose) => match drill.chosen() {
            Some(call) => Handled::Asks(Ask::OpenHit(Box::new(call.hit()))),
            None => Handled::Used,
        },
        _ => Handled::Used,
    }
}

/// Keys in a list of sessions' rows (the longest waits, the costliest
/// sessions): move, enter opens the chosen row's session.
fn pick_key<T>(
    selected: &mut usize,
    rows: &[T],
    page: usize,
    action: Option<Action>,
    hit: impl Fn(&T) -> crate::archive::query::Hit,
) -> Handled {
    if let Some(to) = action.and_then(|a| list_move(a, *selected, rows.len(), page)) {
        *selected = to;
        return Handled::Used;
    }
    match action {
        Some(Action::ListChoose) => match rows.get(*selected) {
            Some(row) => Handled::Asks(Ask::OpenHit(Box::new(hit(row)))),
            None => Handled::Used,
        },
        Some(Action::ListClose) => Handled::Asks(Ask::Close),
        _ => Handled::Used,
    }
}

fn waits_key(view: &mut InsightsView, action: Option<Action>) -> Handled {
    let longest = view.waits.as_ref().map_or(&[][..], |w| &w.longest[..]);
    pick_key(&mut view.wait_selected, longest, view.page, action, |w| {
        w.hit()
    })
}

fn cost_key(view: &mut InsightsView, action: Option<Action>) -> Handled {
    let costliest = view.cost.as_ref().map_or(&[][..], |c| &c.costliest[..]);
    pick_key(&mut view.cost_selected, costliest, view.page, action, |s| {
        s.hit()
    })
}
