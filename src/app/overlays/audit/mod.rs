//! The answers on record (`A`): every answer given to a prompt, newest
//! first, read from the archive off the loop (`ocview audit` on screen).
//! An `always` stands out; `tab` keeps permissions, questions or both,
//! `S` this session's only; enter opens the answer's session.

pub mod draw;

use crossterm::event::KeyEvent;

use crate::app::component::{Ask, Component, Cx, Handled, list_move};
use crate::app::keymap::{Action, Context};
use crate::app::msg::AppMsg;
use crate::app::{App, Overlay};
use crate::archive::engine::AnswerFilter;
use crate::archive::rows::AnswerRow;

/// The most answers read.
const READ_MAX: u32 = 1000;

#[derive(Debug, Default)]
pub struct AuditView {
    /// Every answer read, newest first.
    all: Vec<AnswerRow>,
    /// Those the filters keep.
    pub rows: Vec<AnswerRow>,
    pub loading: bool,
    pub error: Option<String>,
    pub selected: usize,
    /// Rows the list showed last (for page keys), set when drawn.
    pub page: usize,
    /// `permission`, `question`, or both (`None`).
    pub kind: Option<&'static str>,
    /// This session's only (its own id), when set.
    pub session: Option<String>,
    /// The session `S` keeps (the one selected when the view opened).
    here: Option<String>,
}

impl AuditView {
    /// What the archive gave.
    pub fn loaded(&mut self, result: Result<Vec<AnswerRow>, String>) {
        self.loading = false;
        match result {
            Ok(rows) => {
                self.all = rows;
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
        self.refilter();
    }

    fn refilter(&mut self) {
        let (kind, session) = (self.kind, self.session.as_deref());
        self.rows = self
            .all
            .iter()
            .filter(|r| kind.is_none_or(|k| r.kind == k))
            .filter(|r| session.is_none_or(|s| r.session_id == s))
            .cloned()
            .collect();
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// What the filters keep, in words.
    pub fn filters(&self) -> String {
        let kind = match self.kind {
            Some("permission") => "permissions",
            Some(_) => "questions",
            None => "permissions and questions",
        };
        match &self.session {
            Some(_) => format!("{kind} of this session"),
            None => format!("{kind} of every session"),
        }
    }
}

impl App {
    /// Open the answers on record, read from the archive on a thread.
    pub(crate) fn open_audit(&mut self) {
        let Some(setting) = self.archive.setting.clone() else {
            self.verbs
                .warn("the archive is off: no answer is on record");
            return;
        };
        let here = self
            .selected
            .as_deref()
            .map(|id| crate::model::store::fleet::bare(id).to_string());
        self.overlays.audit = AuditView {
            loading: true,
            here,
            page: self.overlays.audit.page.max(1),
            ..Default::default()
        };
        self.overlay = Some(Overlay::Audit);
        let tell = self.verbs.done_sender();
        std::thread::spawn(move || {
            let result = setting
                .open()
                .map_err(|e| e.to_string())
                .and_then(|engine| engine.ok_or_else(|| "the archive is off".to_string()))
                .and_then(|mut engine| {
                    let filter = AnswerFilter {
                        limit: READ_MAX,
                        ..Default::default()
                    };
                    engine.answers(&filter).map_err(|e| e.to_string())
                });
            let _ = tell.send(AppMsg::Answers(result));
        });
    }
}

impl Component for AuditView {
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let action = cx.only(Context::List, &key);
        if let Some(to) =
            action.and_then(|a| list_move(a, self.selected, self.rows.len(), self.page))
        {
            self.selected = to;
            return Handled::Used;
        }
        match action {
            Some(Action::ListKind) => {
                self.kind = match self.kind {
                    None => Some("permission"),
                    Some("permission") => Some("question"),
                    Some(_) => None,
                };
                self.refilter();
            }
            Some(Action::ListThisSession) => {
                self.session = match self.session {
                    Some(_) => None,
                    None => self.here.clone(),
                };
                self.refilter();
            }
            Some(Action::ListChoose) => {
                return Handled::Asks(match self.rows.get(self.selected) {
                    Some(r) => Ask::OpenSession(r.session_id.clone()),
                    None => Ask::Close,
                });
            }
            Some(Action::ListClose) => return Handled::Asks(Ask::Close),
            _ => {}
        }
        Handled::Used
    }
}
