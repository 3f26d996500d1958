//! The last record a source could not use, shown on request: which server
//! sent it, where, why, and the start of its text (sanitised: it is
//! untrusted, and it is broken by definition).

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::app::{App, Overlay};
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

impl App {
    /// Open it, or say there is nothing to show.
    pub(crate) fn show_bad_record(&mut self) {
        let archive = self.archive.trouble();
        if self.stats.last_bad.is_some() {
            self.overlay = Some(Overlay::BadRecord);
        } else if archive.is_none() {
            self.notice = Some("every record so far could be read".into());
        }
        if let Some(why) = archive {
            let why = crate::model::wire::sanitize::line(&why).into_owned();
            self.notice = Some(format!("archive off: {why}"));
        }
    }
}

/// The overlay: what it shows is the ingest's last bad record.
pub struct BadRecord;

impl Component for BadRecord {
    /// It takes every key; its own key or the list's close key closes it.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        if cx.action(&key) == Some(Action::BadRecord)
            || cx.only(Context::List, &key) == Some(Action::ListClose)
        {
            return Handled::Asks(Ask::Close);
        }
        Handled::Used
    }
}

pub fn draw(frame: &mut Frame, app: &App, screen: Rect) {
    let Some(bad) = &app.stats.last_bad else {
        return;
    };
    let theme = &app.theme;
    let width = screen.width.saturating_sub(4).min(100);
    let inner = width.saturating_sub(2) as usize;
    let from = match &bad.server {
        Some(server) => format!("from {}, ", sanitize::line(server)),
        None => String::new(),
    };
    let mut lines = vec![
        Line::styled(
            format!(
                "{from}{}",
                crate::source::decode::stats::place(bad.line, bad.row.as_deref())
            ),
            theme.style(Role::Muted),
        ),
        Line::styled(
            sanitize::line(&bad.reason).into_owned(),
            theme.style(Role::Error),
        ),
        Line::default(),
    ];
    let text = if bad.text.is_empty() {
        "(its text was not kept)".to_string()
    } else {
        sanitize::block(&bad.text).into_owned()
    };
    lines.extend(wrap::wrap_text(&text, theme.style(Role::Text), inner, ""));
    let height = (lines.len() as u16 + 2).min(screen.height);
    let close = app.keymap.hint(Action::ListClose).unwrap_or_default();
    let title = format!(" A record that could not be read ({close} close) ");
    let area = crate::app::boxes::centred(screen, width, height);
    crate::app::boxes::overlay_box(frame, theme, area, title, lines, 0);
}
