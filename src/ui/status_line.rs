//! The status line: source and its state, the selected session's status,
//! cost and tokens, and key hints drawn from the keymap.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format;
use super::theme::Role;
use super::wrap;
use crate::app::keymap::Action;
use crate::app::{App, Focus};
use crate::sanitize;

/// The hints shown per focus, most useful first; cut to fit.
const SESSION_HINTS: &[Action] = &[
    Action::Open,
    Action::Filter,
    Action::ToggleTree,
    Action::Help,
    Action::Quit,
];
const PROMPT_HINTS: &[Action] = &[Action::FocusNext, Action::Help];
const TURN_HINTS: &[Action] = &[
    Action::NextCard,
    Action::ToggleCard,
    Action::Bottom,
    Action::Back,
    Action::Help,
    Action::Quit,
];

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let theme = &app.theme;
    let bar = theme.style(Role::StatusBar);
    let key = theme.style(Role::StatusKey);

    let state = sanitize::line(&app.source.state.label()).into_owned();
    let mut left = format!(" {} · {state}", sanitize::line(&app.source.label));
    if let Some(notice) = &app.notice {
        left.push_str(&format!(" · {}", sanitize::line(notice)));
    }
    if app.stats.malformed > 0 {
        left.push_str(&format!(" · {} bad lines", app.stats.malformed));
    }
    if let Some(s) = app.selected_session() {
        left.push_str(&format!(
            " │ {}",
            format::status_text(&s.status, app.now_ms)
        ));
        let c = format::cost(s.info.cost);
        if !c.is_empty() {
            left.push_str(&format!(" {c}"));
        }
        let t = s.info.tokens.sum();
        if t > 0 {
            left.push_str(&format!(" {} tok", format::tokens(t)));
        }
    }
    let hints = match app.focus {
        Focus::Sessions => SESSION_HINTS,
        Focus::Turns => TURN_HINTS,
        Focus::Prompt => PROMPT_HINTS,
    };
    let width = area.width as usize;
    // Hints keep up to half the line; the source and session text gets the rest.
    let mut hint_spans: Vec<Span> = Vec::new();
    let mut hints_w = 0;
    for &action in hints {
        let Some(k) = app.keymap.hint(action) else {
            continue;
        };
        let label = short_label(action);
        let w = wrap::width(&k) + wrap::width(label) + 2;
        if hints_w + w > width / 2 {
            break;
        }
        hint_spans.push(Span::styled(format!(" {k}"), key));
        hint_spans.push(Span::styled(format!(" {label}"), bar));
        hints_w += w;
    }
    let left = wrap::truncate(&left, width.saturating_sub(hints_w + 1));
    let used = wrap::width(&left) + hints_w;
    let pad = width.saturating_sub(used);
    let mut spans = vec![Span::styled(left, bar), Span::styled(" ".repeat(pad), bar)];
    spans.extend(hint_spans);
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

fn short_label(action: Action) -> &'static str {
    match action {
        Action::Open => "open",
        Action::Filter => "filter",
        Action::ToggleTree => "fold",
        Action::Help => "help",
        Action::Quit => "quit",
        Action::NextCard => "card",
        Action::ToggleCard => "toggle",
        Action::Bottom => "follow",
        Action::Back => "back",
        Action::FocusNext => "panes",
        other => other.name(),
    }
}
