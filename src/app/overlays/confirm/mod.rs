//! The confirmation before stopping a session: it names the session (title
//! and id) and what stopping does, and takes `y` or anything else; its key
//! sends the abort.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph, Wrap};

use crate::app::App;
use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::model::SessionStatus;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;
use crate::source::live::reply::Reply;

pub fn draw_abort(frame: &mut Frame, app: &App, screen: Rect) {
    let Some(ConfirmAbort { session_id: id }) = &app.verbs.confirm_abort else {
        return;
    };
    let theme = &app.theme;
    let session = app.store.session(id);
    let title = session.map(|s| s.title()).unwrap_or("");
    let status = session
        .map(|s| crate::render::format::status_text(&s.status, app.now_ms))
        .unwrap_or_default();
    let width = 64.min(screen.width);
    let inner = width.saturating_sub(4) as usize;
    let id_room = inner.saturating_sub(9);
    let lines = vec![
        Line::from(vec![
            Span::styled("Session  ", theme.style(Role::Muted)),
            Span::styled(
                wrap::truncate(&sanitize::line(title), inner.saturating_sub(9)),
                theme.style(Role::Heading),
            ),
        ]),
        Line::from(vec![
            Span::styled("id       ", theme.style(Role::Muted)),
            Span::styled(
                wrap::truncate(&sanitize::line(id), id_room),
                theme.style(Role::Text),
            ),
        ]),
        Line::from(vec![
            Span::styled("now      ", theme.style(Role::Muted)),
            Span::styled(status, theme.style(Role::Running)),
        ]),
        Line::default(),
        Line::styled(
            "The server stops this run: the model's answer ends where it is and a running tool is cut off.",
            theme.style(Role::Text),
        ),
        Line::default(),
        Line::from(vec![
            Span::styled(
                format!(
                    " {} ",
                    app.keymap.describe(crate::app::keymap::Action::Confirm)
                ),
                theme.style(Role::StatusKey),
            ),
            Span::styled(" stop it    ", theme.style(Role::Text)),
            Span::styled(" any other key ", theme.style(Role::StatusKey)),
            Span::styled(" keep it running", theme.style(Role::Text)),
        ]),
    ];
    let area = crate::app::boxes::centred(screen, width, 10);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Stop this session? ")
        .border_style(theme.style(Role::Warning))
        .padding(Padding::horizontal(1))
        .style(theme.style(Role::Text));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

/// The question on screen: stop this session's run?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmAbort {
    pub session_id: String,
}

impl Component for ConfirmAbort {
    /// `y` stops the session, anything else keeps it going; either way
    /// the question goes.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        Handled::Asks(
            if cx.only(Context::Confirm, &key) == Some(Action::Confirm) {
                Ask::Abort(self.session_id.clone())
            } else {
                Ask::Say("not stopped")
            },
        )
    }
}

impl App {
    /// Stop session `id`'s run, as confirmed, if it still runs.
    pub(crate) fn abort_session(&mut self, id: String) {
        let Some(session) = self.store.session(&id) else {
            self.verbs.warn("that session is gone");
            return;
        };
        let title = crate::model::wire::sanitize::line(session.title()).into_owned();
        if !matches!(
            session.status,
            SessionStatus::Busy | SessionStatus::Retry { .. }
        ) {
            self.verbs
                .say(format!("{title} finished meanwhile: nothing to stop"));
            return;
        }
        let reply = Reply::Abort {
            session_id: id.clone(),
            directory: session.info.directory.clone(),
        };
        match &self.replies {
            Some(tx) if tx.send(reply).is_ok() => {
                self.verbs.aborting.insert(id);
                self.verbs.say(format!("stopping {title}…"));
            }
            Some(_) => self.verbs.warn("not stopped: the connection is gone"),
            None => self.verbs.warn("nothing is sent from here"),
        }
    }
}
