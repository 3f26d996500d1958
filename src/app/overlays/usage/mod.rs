//! The usage view (`u`): what opencode's sessions cost, over a chosen
//! range (7, 30, 90, 365 days, all), drawn: the totals and every figure
//! `opencode stats` prints, bars of cost per day over a date axis, a heat
//! map of activity over the whole range (a year is 53 weeks), a sparkline
//! per model, totals by project and by agent, and one list at a time
//! (`tab`): the costliest sessions (enter opens one), a table per day, or
//! the tools used. The database is read on a thread of its own; until it
//! answers the view says "loading…", and the tools (a pass over every
//! part) come after the rest.

pub mod draw;
mod heat;
mod lists;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use tokio::sync::Notify;

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::app::{App, Overlay};
use crate::source::opencode_db::usage::{self, Usage, UsageQuery};
use crate::source::opencode_db::{Db, DbEnv};

/// The ranges, in days (`None`: all time); digits 1-5 pick one.
pub const RANGES: [Option<u32>; 5] = [Some(7), Some(30), Some(90), Some(365), None];
/// Costliest sessions kept for the list.
const COSTLIEST: usize = 50;

/// Where the database is, and the view while open.
#[derive(Default)]
pub struct UsageState {
    /// opencode's database (`None`: none on this machine).
    pub db: Option<PathBuf>,
    pub view: Option<UsageView>,
    /// Notified when the reader has answered, for the loop to select on
    /// (a permit is kept if nobody waits): the loop never ticks for it.
    pub answered: Arc<Notify>,
}

impl UsageState {
    /// The database opencode on this machine uses.
    pub fn from_process() -> UsageState {
        UsageState {
            db: DbEnv::from_process().database(),
            ..UsageState::default()
        }
    }
}

pub enum Answer {
    Loading,
    Ready(Box<Usage>),
    Failed(String),
}

/// The list the view's bottom shows; `tab` goes to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum List {
    #[default]
    Sessions,
    Days,
    Projects,
    Tools,
}

impl List {
    fn next(self) -> List {
        match self {
            List::Sessions => List::Days,
            List::Days => List::Projects,
            List::Projects => List::Tools,
            List::Tools => List::Sessions,
        }
    }
}

/// What the reader sends: the figures, then the same with the tools.
type Reply = (bool, Result<Usage, String>);

pub struct UsageView {
    /// Index into `RANGES`.
    pub range: usize,
    pub answer: Answer,
    /// The highlighted row of the list.
    pub selected: usize,
    pub list: List,
    /// The tools are still being counted.
    pub tools_pending: bool,
    /// Why the tools could not be counted.
    pub tools_error: Option<String>,
    /// When the answer was asked for (the view's "today").
    pub now_ms: i64,
    reply: Option<Receiver<Reply>>,
}

impl UsageView {
    pub fn loading(&self) -> bool {
        matches!(self.answer, Answer::Loading)
    }

    pub fn days(&self) -> Option<u32> {
        RANGES[self.range]
    }
}

/// Ask the database on a thread of its own: the figures, then the same
/// with the tools counted (a pass over every part), each on the returned
/// channel, `answered` notified as each is there.
fn ask(db: PathBuf, days: Option<u32>, now_ms: i64, answered: Arc<Notify>) -> Receiver<Reply> {
    let (tx, rx) = channel();
    let spawned = std::thread::Builder::new()
        .name("ocview-usage".into())
        .spawn(move || {
            let query = |tools: bool| UsageQuery {
                since_ms: days.map(|d| usage::since_for_days(d, now_ms)),
                project: None,
                costliest: COSTLIEST,
                tools,
                day_offset_ms: usage::local_offset_ms(now_ms),
            };
            let db = match Db::open(&db) {
                Ok(db) => db,
                Err(e) => {
                    let _ = tx.send((false, Err(e.to_string())));
                    answered.notify_one();
                    return;
                }
            };
            let first = db.usage(&query(false)).map_err(|e| e.to_string());
            let read = first.is_ok();
            let _ = tx.send((false, first));
            answered.notify_one();
            if read {
                let _ = tx.send((true, db.usage(&query(true)).map_err(|e| e.to_string())));
                answered.notify_one();
            }
        });
    if let Err(e) = spawned {
        let (tx, rx) = channel();
        let _ = tx.send((
            false,
            Err(format!("usage: no thread to read the database: {e}")),
        ));
        return rx;
    }
    rx
}

impl App {
    /// `u`: open the view on the last range chosen (30 days at first).
    pub fn open_usage(&mut self) {
        let range = self.overlays.usage.view.as_ref().map_or(1, |v| v.range);
        self.overlay = Some(Overlay::Usage);
        self.usage_range(range);
    }

    /// Read the figures for `RANGES[range]` again.
    pub(crate) fn usage_range(&mut self, range: usize) {
        let now_ms = if self.now_ms > 0 {
            self.now_ms
        } else {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64)
        };
        let (answer, reply) = match &self.overlays.usage.db {
            None => (
                Answer::Failed("no opencode database on this machine (no home folder)".into()),
                None,
            ),
            Some(db) => (
                Answer::Loading,
                Some(ask(
                    db.clone(),
                    RANGES[range],
                    now_ms,
                    self.overlays.usage.answered.clone(),
                )),
            ),
        };
        let list = self
            .overlays
            .usage
            .view
            .as_ref()
            .map_or_else(List::default, |v| v.list);
        self.overlays.usage.view = Some(UsageView {
            range,
            answer,
            selected: 0,
            list,
            tools_pending: reply.is_some(),
            tools_error: None,
            now_ms,
            reply,
        });
    }

    /// Take the reader's answer when it has come (each frame).
    pub(crate) fn poll_usage(&mut self) {
        let Some(view) = self.overlays.usage.view.as_mut() else {
            return;
        };
        let Some(reply) = &view.reply else { return };
        loop {
            match reply.try_recv() {
                Ok((false, Ok(usage))) => view.answer = Answer::Ready(Box::new(usage)),
                Ok((false, Err(e))) => {
                    view.answer = Answer::Failed(e);
                    view.tools_pending = false;
                }
                Ok((true, Ok(usage))) => {
                    view.answer = Answer::Ready(Box::new(usage));
                    view.tools_pending = false;
                }
                // The figures stay; only the tools are missing.
                Ok((true, Err(e))) => {
                    view.tools_error = Some(e);
                    view.tools_pending = false;
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    if view.loading() {
                        view.answer = Answer::Failed("usage: the reader stopped".into());
                    }
                    view.tools_pending = false;
                    view.reply = None;
                    return;
                }
            }
        }
    }
}

impl Component for UsageState {
    /// 1-5 (or ←/→) pick the range, the list keys move through the
    /// costliest sessions, enter opens one, esc (or `u`) closes.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let Some(view) = self.view.as_mut() else {
            return Handled::Asks(Ask::Close);
        };
        let range = match key.code {
            KeyCode::Char(c @ '1'..='5') => Some(c as usize - '1' as usize),
            KeyCode::Left | KeyCode::Char('h') => Some(view.range.saturating_sub(1)),
            KeyCode::Right | KeyCode::Char('l') => Some((view.range + 1).min(RANGES.len() - 1)),
            _ => None,
        };
        if let Some(range) = range {
            if range != view.range {
                return Handled::Asks(Ask::UsageRange(range));
            }
            return Handled::Used;
        }
        let action = match cx.only(Context::List, &key) {
            _ if cx.is(Action::Usage, &key) => Action::ListClose,
            Some(a) => a,
            None => return Handled::Used,
        };
        if action == Action::ListKind {
            view.list = view.list.next();
            view.selected = 0;
            return Handled::Used;
        }
        let count = match &view.answer {
            Answer::Ready(u) => lists::rows(view, u),
            _ => 0,
        };
        let last = count.saturating_sub(1);
        view.selected = match action {
            Action::ListDown => (view.selected + 1).min(last),
            Action::ListUp => view.selected.saturating_sub(1),
            Action::ListPageDown => (view.selected + 10).min(last),
            Action::ListPageUp => view.selected.saturating_sub(10),
            Action::ListTop => 0,
            Action::ListBottom => last,
            Action::ListChoose => {
                let chosen = match &view.answer {
                    Answer::Ready(u) if view.list == List::Sessions => {
                        u.costliest.get(view.selected).map(|s| s.id.clone())
                    }
                    _ => None,
                };
                return match chosen {
                    Some(id) => Handled::Asks(Ask::OpenSession(id)),
                    None => Handled::Used,
                };
            }
            Action::ListClose => return Handled::Asks(Ask::Close),
            _ => return Handled::Used,
        };
        Handled::Used
    }
}
