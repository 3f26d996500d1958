//! Doing things with what is shown: copy a card, a message, a code block or
//! the whole session (`y`, `Y`); open a card in the pager or the editor
//! (`o`, `e`); stop a busy session (`X`, after a confirmation).
//!
//! Key handlers decide what and set a request; the loop, which owns the
//! terminal and the input reader, carries it out and reports back here.

pub mod clipboard;
pub mod handover;

pub use crate::app::msg::{AppMsg, Request};

use std::collections::HashSet;

use crossterm::event::{KeyCode, KeyEvent};
use tokio::sync::mpsc;

use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::Action;
use crate::app::msg::Program;
use crate::app::overlays::confirm::ConfirmAbort;
use crate::headless::content::{self, CodeBlock, Content};
use crate::model::SessionStatus;
use crate::model::entity::shown::shown;
use crate::source::msg::ReplyOutcome;
use clipboard::Clipboard;

/// A line in the status line saying what a verb did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    pub text: String,
    pub error: bool,
}

/// `y` on something with code blocks: which to copy.
#[derive(Debug, Clone)]
pub struct Pick {
    pub content: Content,
    pub blocks: Vec<CodeBlock>,
}

impl Component for Pick {
    /// Keys while code blocks are offered: the copy key again (or enter)
    /// takes the whole, a digit one block, esc nothing. Any other key
    /// closes the offer and does what it does.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if cx.is(Action::Copy, &key) || key.code == KeyCode::Enter {
            return Handled::Asks(Ask::Copy(self.content.clone()));
        }
        match key.code {
            KeyCode::Char(c @ '1'..='9') => {
                let i = (c as u8 - b'1') as usize;
                // A digit with no block keeps the offer open.
                let Some(b) = self.blocks.get(i) else {
                    return Handled::Used;
                };
                let what = match b.lang.as_str() {
                    "" => format!("code block {}", i + 1),
                    lang => format!(
                        "code block {} ({})",
                        i + 1,
                        crate::model::wire::sanitize::line(lang)
                    ),
                };
                Handled::Asks(Ask::Copy(Content {
                    what,
                    suffix: ".txt".into(),
                    text: b.code.clone(),
                }))
            }
            KeyCode::Esc => Handled::Asks(Ask::Close),
            _ => Handled::Passed,
        }
    }
}

pub struct Verbs {
    pub clipboard: Clipboard,
    pub request: Option<Request>,
    pub feedback: Option<Feedback>,
    pub pick: Option<Pick>,
    /// The session the abort confirmation names.
    pub confirm_abort: Option<ConfirmAbort>,
    /// Sessions whose abort is on its way.
    pub aborting: HashSet<String>,
    /// `Y` on a live session not loaded whole: the session to copy once
    /// its first message is in.
    pub copy_when_whole: Option<String>,
    done_tx: mpsc::UnboundedSender<AppMsg>,
    done_rx: Option<mpsc::UnboundedReceiver<AppMsg>>,
}

impl Verbs {
    pub fn new(clipboard: Clipboard) -> Verbs {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Verbs {
            clipboard,
            request: None,
            feedback: None,
            pick: None,
            confirm_abort: None,
            aborting: HashSet::new(),
            copy_when_whole: None,
            done_tx,
            done_rx: Some(done_rx),
        }
    }

    /// Where work done off the loop reports (taken once by the loop).
    pub fn take_done(&mut self) -> mpsc::UnboundedReceiver<AppMsg> {
        self.done_rx.take().unwrap_or_else(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            self.done_tx = tx;
            rx
        })
    }

    pub fn done_sender(&self) -> mpsc::UnboundedSender<AppMsg> {
        self.done_tx.clone()
    }

    pub fn say(&mut self, text: impl Into<String>) {
        self.feedback = Some(Feedback {
            text: text.into(),
            error: false,
        });
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.feedback = Some(Feedback {
            text: text.into(),
            error: true,
        });
    }
}

/// The first card (a tool or reasoning part that is shown) in the view's
/// rows, from the top: (message id, part id).
fn top_card(
    session: &crate::model::Session,
    state: &crate::app::panes::turn_view::layout::TurnState,
) -> Option<(String, String)> {
    state.rows.iter().find_map(|r| {
        let m = session.messages.get(r.pos.message)?;
        let pi = r.pos.part()?;
        let part = m.parts.get(pi)?;
        (crate::render::blocks::is_card(part)
            && !matches!(shown(m, pi), crate::model::entity::shown::Shown::Hidden))
        .then(|| (m.info.id.clone(), part.id.clone()))
    })
}

impl App {
    /// What `y`, `o` and `e` act on: the selected card while it is on
    /// screen; scrolled away, the card at the top of the view; with no
    /// card selected, the message at the bottom of the view (the newest
    /// one shown). Its whole content and its code blocks.
    pub fn verb_target(&self) -> Option<(Content, Vec<CodeBlock>)> {
        let session = self.selected_session()?;
        let state = self.turn_state();
        let on_screen = |mid: &str, pid: &str| {
            state.is_none_or(|t| t.rows.is_empty() || t.is_visible(session, mid, pid))
        };
        let card = match state.and_then(|t| t.selected.as_ref()) {
            Some((mid, pid)) if on_screen(mid, pid) => Some((mid.clone(), pid.clone())),
            Some(_) => state.and_then(|t| top_card(session, t)),
            None => None,
        };
        if let Some((mid, pid)) = &card
            && let Some(m) = session.message(mid)
            && let Some(pi) = m.parts.iter().position(|p| &p.id == pid)
            && let Some(part) = shown(m, pi).resolve(&m.parts[pi])
        {
            let c = content::part(&part);
            let blocks = part.text().map(content::code_blocks).unwrap_or_default();
            return Some((c, blocks));
        }
        let message = state
            .and_then(|t| {
                t.rows
                    .iter()
                    .rev()
                    .find(|r| r.pos.message < session.messages.len())
            })
            .map(|r| &session.messages[r.pos.message])
            .or_else(|| session.messages.last())?;
        let c = content::message(message);
        let blocks = content::code_blocks(&c.text);
        Some((c, blocks))
    }

    /// `y`: copy the target, or offer its code blocks first.
    pub fn copy_selected(&mut self) {
        let Some((content, blocks)) = self.verb_target() else {
            self.verbs.warn("nothing to copy here");
            return;
        };
        if blocks.is_empty() {
            self.copy(content);
        } else {
            self.verbs.pick = Some(Pick { content, blocks });
        }
    }

    /// `Y`: the whole session as Markdown. A live session whose older
    /// pages are not all loaded is loaded first (its progress in the status
    /// line), then copied: never only the newest page.
    pub fn copy_session(&mut self) {
        let Some(id) = self.selected_session().map(|s| s.info.id.clone()) else {
            self.verbs.warn("no session selected");
            return;
        };
        if !self.history_whole(&id) {
            self.verbs.copy_when_whole = Some(id.clone());
            self.load_whole(&id);
            self.say_loading(&id);
            return;
        }
        self.copy_whole(&id);
    }

    /// The whole session leaves the viewer: its secrets are redacted (a
    /// single card's copy, `y`, is what the agent printed).
    fn copy_whole(&mut self, id: &str) {
        if let Some(session) = self.store.session(id) {
            let mut c = content::session(session);
            let mut tally = crate::redact::Tally::new();
            if let std::borrow::Cow::Owned(text) =
                crate::redact::Redactor::shared().redact(&c.text, &mut tally)
            {
                let n: u64 = tally.values().sum();
                c.what = format!(
                    "{}, {n} secret{} redacted",
                    c.what,
                    if n == 1 { "" } else { "s" }
                );
                c.text = text;
            }
            self.copy(c);
        }
    }

    fn say_loading(&mut self, id: &str) {
        let loaded = self.store.session(id).map_or(0, |s| s.messages.len());
        self.verbs.say(format!(
            "loading history… {} messages so far; the copy follows",
            crate::app::view::thousands(loaded)
        ));
    }

    /// A page of a session's history came in: a copy waiting for it goes
    /// out once the session is whole, and says how far it got until then.
    pub(crate) fn on_history_page(&mut self, session_id: &str) {
        if self.verbs.copy_when_whole.as_deref() != Some(session_id) {
            return;
        }
        if self.history_whole(session_id) {
            self.verbs.copy_when_whole = None;
            self.copy_whole(session_id);
        } else {
            self.say_loading(session_id);
        }
    }

    /// Copy `content` the way this environment allows.
    pub(crate) fn copy(&mut self, content: Content) {
        if content.text.trim().is_empty() {
            self.verbs
                .warn(format!("{} is empty: nothing copied", content.what));
            return;
        }
        match self.verbs.clipboard.clone() {
            Clipboard::Off => self.verbs.warn("copying is off (clipboard = \"off\")"),
            Clipboard::Osc52 { screen } => self.copy_osc52(content, screen, None),
            Clipboard::Program { argv, .. } => {
                self.verbs.request = Some(Request::Clipboard { argv, content });
            }
        }
    }

    fn copy_osc52(&mut self, content: Content, screen: bool, why: Option<String>) {
        let kept = clipboard::cap(&content.text, clipboard::OSC52_LIMIT);
        self.verbs.request = Some(Request::Write(clipboard::osc52(kept, screen)));
        let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
        if kept.len() < content.text.len() {
            self.verbs.warn(format!(
                "copied only the first {} of {} of {}: OSC 52 carries {} KB at most; o or e opens it all{why}",
                content::size(kept),
                content::size(&content.text),
                content.what,
                clipboard::OSC52_LIMIT / 1024
            ));
        } else {
            self.verbs.say(format!(
                "copied {} ({}) by OSC 52{why}",
                content.what,
                content::size(&content.text)
            ));
        }
    }

    /// Work done off the loop reported back.
    pub fn on_done(&mut self, done: AppMsg) {
        match done {
            AppMsg::Clipboard {
                via,
                content,
                result: Ok(()),
            } => self.verbs.say(format!(
                "copied {} ({}) to the clipboard ({via})",
                content.what,
                content::size(&content.text)
            )),
            // The terminal may still take it.
            AppMsg::Clipboard {
                content,
                result: Err(e),
                ..
            } => {
                let screen =
                    std::env::var_os("STY").is_some() && std::env::var_os("TMUX").is_none();
                self.copy_osc52(content, screen, Some(e));
            }
            AppMsg::Job(job) => self.verbs.request = Some(Request::Suspend(job)),
            AppMsg::Archive(reply) => self.on_archive(reply),
            AppMsg::Answers(result) => self.overlays.audit.loaded(result),
            AppMsg::Insights(generation, reply) => {
                self.overlays.insights.on_reply(generation, reply)
            }
        }
    }

    /// `o` and `e`: the target in the pager or the editor.
    pub fn open_in(&mut self, program: Program) {
        match self.verb_target() {
            Some((content, _)) => self.verbs.request = Some(Request::Open(program, content)),
            None => self.verbs.warn("nothing to open here"),
        }
    }

    /// The loop ran the pager or the editor.
    pub fn on_opened(&mut self, result: Result<String, String>) {
        match result {
            Ok(text) => self.verbs.say(text),
            Err(text) => self.verbs.warn(text),
        }
    }

    /// `X`: ask before stopping the selected session, when it is busy and
    /// answers can be sent.
    pub fn ask_abort(&mut self) {
        let Some(session) = self.selected_session() else {
            self.verbs.warn("no session selected");
            return;
        };
        let id = session.info.id.clone();
        let title = crate::model::wire::sanitize::line(session.title()).into_owned();
        let busy = matches!(
            session.status,
            SessionStatus::Busy | SessionStatus::Retry { .. }
        );
        if self.replies.is_none() {
            self.verbs.warn(if self.source.recorded {
                "replay: nothing is sent to a server"
            } else {
                "read-only: sessions are not stopped"
            });
        } else if self.verbs.aborting.contains(&id) {
            self.verbs.say(format!("already stopping {title}"));
        } else if !busy {
            self.verbs
                .warn(format!("{title} is not running: nothing to stop"));
        } else {
            self.verbs.confirm_abort = Some(ConfirmAbort { session_id: id });
        }
    }

    /// What the server said to an abort.
    pub fn on_aborted(&mut self, session_id: &str, outcome: ReplyOutcome) {
        self.verbs.aborting.remove(session_id);
        let title = self
            .store
            .session(session_id)
            .map(|s| crate::model::wire::sanitize::line(s.title()).into_owned())
            .unwrap_or_else(|| session_id.to_string());
        match outcome {
            ReplyOutcome::Sent => self.verbs.say(format!("stopped {title}")),
            ReplyOutcome::AlreadyGone => self
                .verbs
                .warn(format!("{title}: the server has no such session")),
            ReplyOutcome::Failed(e) => self.verbs.warn(format!("{title} not stopped: {e}")),
        }
    }
}
