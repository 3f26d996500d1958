//! Drawing the turn view from the rows `TurnState::prepare` laid out.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Focus};
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::Role;
use crate::render::wrap;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let header_area = Rect { height: 1, ..area };
    let inner = crate::app::boxes::turn_inner(area);
    let Some(session) = app.selected_session() else {
        let width = inner.width.max(1) as usize;
        let lines: Vec<Line> = empty_text(app)
            .split('\n')
            .flat_map(|l| wrap::wrap_spans(&[(l.to_string(), theme.style(Role::Muted))], width, ""))
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    };
    let state = app.turn_state();

    frame.render_widget(
        Paragraph::new(header(app, session, state, area.width)),
        header_area,
    );

    let Some(state) = state else { return };
    if session.messages.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no messages yet", theme.style(Role::Muted))),
            inner,
        );
        return;
    }
    frame.render_widget(Paragraph::new(shown_rows(app, session, state)), inner);
}

/// What the turn view says with no session to show: a group's summary,
/// a fleet still connecting, why there is nothing yet, or what to do.
fn empty_text(app: &App) -> String {
    use crate::source::msg::SourceState;
    if let Some(text) = app.describe_group() {
        text
    } else if let Some(text) = fleet_waiting(app) {
        text
    } else if app.store.sessions().is_empty() {
        match &app.source.state {
            SourceState::Playing => "waiting for events…".to_string(),
            // Nothing to show yet: say, in full, why and what to do
            // (the status line has room for only part of it).
            SourceState::Reconnecting { attempt, reason } => format!(
                "Still trying (attempt {attempt}): {}\n\nocview connects by itself once the server answers. To look around meanwhile: ocview demo",
                sanitize::line(reason)
            ),
            SourceState::Failed(why) => sanitize::line(why).into_owned(),
            _ => "no sessions in this source".to_string(),
        }
    } else {
        "select a session".to_string()
    }
}

/// The header: the title, the status with context and cost (and tokens,
/// where the whole title still fits), where the view is, and follow mode.
fn header(
    app: &App,
    session: &crate::model::Session,
    state: Option<&crate::app::panes::turn_view::layout::TurnState>,
    width: u16,
) -> Line<'static> {
    let theme = &app.theme;
    let focused = app.focus == Focus::Turns;
    // The accent, not the focused border's colour: themes make that one
    // quiet (a grey), too faint for text on a light background.
    let title_role = if focused { Role::Accent } else { Role::Title };
    let mut right = Vec::new();
    if let Some(t) = state {
        let (first, count) = t.position;
        if count > 0 {
            right.push(crate::app::panes::turn_view::positions::position_text(
                first,
                count,
                app.history_whole(&session.info.id),
                app.message_totals.total(&session.info.id),
            ));
        }
        // At the top of a live session: is there more before it?
        if t.lines_above == 0
            && !t.rows.is_empty()
            && let Some(h) = app.history(&session.info.id)
        {
            if h.complete {
                right.push("beginning of session".into());
            } else if h.asking {
                right.push("loading older…".into());
            }
        }
        right.push(if t.follow {
            "following".into()
        } else {
            "scrolled".into()
        });
    }
    if !app.history.is_empty() {
        right.push(format!(
            "{} back",
            app.keymap
                .hint(crate::app::keymap::Action::Back)
                .unwrap_or_default()
        ));
    }
    let right = right.join(" · ");
    // An abort on its way shows until the server answers.
    let mut status = if app.verbs.aborting.contains(&session.info.id) {
        "stopping…".to_string()
    } else {
        format::status_text(&session.status, app.now_ms)
    };
    // Context and cost, as room allows: the title keeps 24 columns first.
    let mut extras = Vec::new();
    if let Some(c) = crate::model::entity::context::context_use(session, app.store.model_limits()) {
        extras.push(format::context(&c));
    }
    let totals = session.totals();
    extras.push(format::totals_cost(&totals));
    let fixed = wrap::width(&right) + wrap::width(&status) + 5;
    let mut room = (width as usize).saturating_sub(fixed + 24);
    let mut all_shown = true;
    for extra in extras {
        let w = wrap::width(&extra) + 3;
        if w > room {
            all_shown = false;
            break;
        }
        room -= w;
        status.push_str(&format!(" · {extra}"));
    }
    // The tokens last, after the cost, and only where the whole title
    // still fits.
    let tokens = format::totals_tokens(&totals);
    let title_over = wrap::width(&sanitize::line(session.title())).saturating_sub(24);
    if all_shown && !tokens.is_empty() && wrap::width(&tokens) + 3 + title_over <= room {
        status.push_str(&format!(" · {tokens}"));
    }
    let title_w = (width as usize).saturating_sub(wrap::width(&right) + wrap::width(&status) + 5);
    let title = wrap::truncate(&sanitize::line(session.title()), title_w);
    let pad = (width as usize)
        .saturating_sub(wrap::width(&title) + wrap::width(&status) + wrap::width(&right) + 4);
    Line::from(vec![
        Span::raw(" "),
        Span::styled(title, theme.style(title_role)),
        Span::styled(format!("  {status}"), theme.style(Role::Muted)),
        Span::raw(" ".repeat(pad)),
        Span::styled(right, theme.style(Role::Muted)),
    ])
}

/// The laid-out rows, the selected card's highlighted and marked.
fn shown_rows(
    app: &App,
    session: &crate::model::Session,
    state: &crate::app::panes::turn_view::layout::TurnState,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let selected = state.selected.as_ref();
    let highlight = theme.style(Role::Selection);
    let mut marked = false;
    state
        .rows
        .iter()
        .map(|row| {
            let is_selected = selected.is_some_and(|(mid, pid)| {
                row.pos.part().is_some_and(|pi| {
                    let m = &session.messages[row.pos.message];
                    &m.info.id == mid && m.parts.get(pi).is_some_and(|p| &p.id == pid)
                })
            });
            if is_selected {
                let mut line = row.line.clone().patch_style(highlight);
                if !std::mem::replace(&mut marked, true) {
                    mark_first_column(&mut line);
                }
                line
            } else {
                row.line.clone()
            }
        })
        .collect()
}

/// Put a `›` in the first column of a selected card's first row, so the
/// selection shows without colour too.
fn mark_first_column(line: &mut Line<'static>) {
    if let Some(first) = line.spans.first_mut()
        && first.content.starts_with(' ')
    {
        let rest = first.content[1..].to_string();
        first.content = format!("›{rest}").into();
    }
}

/// A fleet with no session yet: where each server stands, and why.
fn fleet_waiting(app: &App) -> Option<String> {
    let servers = app.store.servers();
    if servers.is_empty() || !app.store.sessions().is_empty() {
        return None;
    }
    let mut text = String::from("No sessions yet.\n");
    for s in servers {
        let why = s
            .state
            .reason()
            .map(|r| format!(": {}", sanitize::line(r)))
            .unwrap_or_default();
        text.push_str(&format!(
            "\n{}  {}{why}",
            sanitize::line(&s.key),
            s.state.label()
        ));
    }
    if servers.iter().any(|s| !s.state.is_live()) {
        text.push_str(
            "\n\nocview connects by itself once a server answers. To look around meanwhile: ocview demo",
        );
    }
    Some(text)
}
