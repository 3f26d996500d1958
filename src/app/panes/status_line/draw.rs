//! The status line: source and its state, the selected session's status,
//! cost and tokens, and key hints drawn from the keymap.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::keymap::Action;
use crate::app::panes::status_line::timeline_bar;
use crate::app::{App, Focus};
use crate::model::wire::sanitize;
use crate::render::format;
use crate::render::theme::Role;
use crate::render::wrap;
use crate::source::msg::SourceState;

/// The hints shown per focus, most useful first; cut to fit, and the
/// first to give way to news.
const SESSION_HINTS: &[Action] = &[Action::Open, Action::Filter, Action::ToggleTree];
const PROMPT_HINTS: &[Action] = &[Action::FocusNext];
const PLAYER_HINTS: &[Action] = &[Action::PlayPause, Action::SeekTo];
const TURN_HINTS: &[Action] = &[
    Action::NextCard,
    Action::ToggleCard,
    Action::Bottom,
    Action::Back,
];
/// Always shown, at any width and whatever else is said: how to learn the
/// rest, and how to leave.
const ESSENTIAL_HINTS: &[Action] = &[Action::Help, Action::Quit];

/// The status line's pieces at a width: the source and player state, the
/// timeline bar's place (when there is room), the rest, and the hints. Laid
/// out once per frame by `prepare` (the mouse seeks on the bar) and drawn.
pub struct StatusParts {
    head: String,
    /// The bar's cells, if shown.
    pub bar: Option<Rect>,
    /// What a verb just did (copied, opened, stopped), and whether it failed.
    said: Option<(String, bool)>,
    rest: String,
    pad: usize,
    hints: Vec<(String, &'static str)>,
}

pub fn compose(app: &App, area: Rect) -> StatusParts {
    let width = area.width as usize;
    let label = sanitize::line(&app.source.label);
    // A player's timeline needs room: a long file name and the focus hints
    // give way to it.
    let (label, mut hints_share) = match app.player {
        Some(_) => (wrap::truncate(&label, (width / 6).max(10)), 3),
        None => (label.into_owned(), 2),
    };
    let mut head = head_text(app, &label);
    let mut rest = String::new();
    // The bar gives way to everything but the position.
    let position_w = source_text(app, &label, &mut head, &mut rest, &mut hints_share);
    if app.player.is_some()
        && let Some(fleet) = fleet_summary(app)
    {
        rest.push_str(&format!(" · {}", sanitize::line(&fleet)));
    }
    if let Some((text, false)) = app.search_status() {
        // Worth more than the hints while n/N step through it.
        hints_share = hints_share.max(4);
        rest.push_str(&format!(" · {}", sanitize::line(&text)));
    }
    if app.following_attention() {
        rest.push_str(" · following activity");
    }
    // What a key just did is what the user looks for: the hints give way.
    let said = app.verbs.feedback.as_ref().map(|f| {
        hints_share = hints_share.max(5);
        (format!(" {} ", sanitize::line(&f.text)), f.error)
    });
    // A notice is news: the optional hints, and the player's bar, give way
    // to it.
    let mut notice_w = 0;
    if let Some(notice) = &app.notice {
        hints_share = usize::MAX;
        let notice = format!(" · {}", sanitize::line(notice));
        notice_w = wrap::width(&notice);
        rest.push_str(&notice);
    }
    if let Some(why) = &app.recording_stopped {
        // Worth more than the hints: what is on screen is no longer saved.
        hints_share = hints_share.max(6);
        rest.push_str(&format!(
            " · {}{}",
            crate::source::recording::recorder::STOPPED,
            sanitize::line(why)
        ));
    }
    if let Some(bad) = bad_records_text(app) {
        rest.push_str(&bad);
    }
    if let Some(session) = session_text(app) {
        rest.push_str(&session);
    }
    let (hints, hints_w) = key_hints(app, width / hints_share);
    let mut room = width.saturating_sub(hints_w + 1);
    let said = said.map(|(text, error)| {
        let text = wrap::truncate(&text, room.saturating_sub(12).max(room / 2));
        room -= wrap::width(&text);
        (text, error)
    });
    let head = wrap::truncate(&head, room);
    room -= wrap::width(&head);
    let mut bar = None;
    if app.player.is_some() {
        let bar_w = timeline_bar::bar_width(width).min(room.saturating_sub(position_w + notice_w));
        if bar_w >= 8 {
            let x = area.x + wrap::width(&head) as u16;
            bar = Some(Rect::new(x, area.y, bar_w as u16, 1));
            room -= bar_w;
        }
    }
    let rest = wrap::truncate(&rest, room);
    room -= wrap::width(&rest);
    StatusParts {
        head,
        bar,
        said,
        rest,
        pad: room + 1,
        hints,
    }
}

/// Where the source is: the player's state and position, a connection
/// being made again (why and the attempt first; the hints give way), or
/// the source's (or a fleet's) state. The position's width (the bar gives
/// way to everything but it).
fn source_text(
    app: &App,
    label: &str,
    head: &mut String,
    rest: &mut String,
    hints_share: &mut usize,
) -> usize {
    match (&app.player, &app.source.state) {
        (Some(p), _) => {
            head.push_str(&format!(" · {} ", timeline_bar::state_text(p)));
            rest.push_str(&format!(" {}", timeline_bar::position_text(p)));
            wrap::width(rest) + 1
        }
        // No connection: why, and the attempt, come first; the hints give
        // way, and the label too when the reason names the server.
        (None, SourceState::Reconnecting { attempt, reason }) => {
            let reason = sanitize::line(reason);
            *hints_share = 10;
            *head = if reason.contains("://") {
                format!(" attempt {attempt} · {reason}")
            } else {
                format!(" {label} · reconnecting (attempt {attempt}): {reason}")
            };
            0
        }
        (None, state) => {
            // A fleet's servers each have a state: their tally says more.
            let state = fleet_summary(app).unwrap_or_else(|| state.label());
            head.push_str(&format!(" · {}", sanitize::line(&state)));
            0
        }
    }
}

/// The line's start: the source's label, after a recording in progress
/// (and its size) and an archive that is off (said as long as it lasts;
/// `!` says why).
fn head_text(app: &App, label: &str) -> String {
    let mut head = format!(" {label}");
    // Once a recording's write failed the line says that instead.
    if let Some(size) = app.recording_size_shown()
        && app.recording_stopped.is_none()
    {
        head = format!(" ● rec {size} ·{head}");
    }
    if app.archive.trouble().is_some() {
        let key = app.keymap.hint(crate::app::keymap::Action::BadRecord);
        head = match key {
            Some(key) => format!(" archive off ({key} why) ·{head}"),
            None => format!(" archive off ·{head}"),
        };
    } else if matches!(
        app.archive.setting,
        Some(crate::archive::Setting::Postgres(_))
    ) && !crate::redact::policy().redacts(true)
    {
        // `archive_redact = "off"`: said for as long as it writes so.
        head = format!(" team archive: secrets go out unredacted ·{head}");
    }
    head
}

/// Records that could not be read: how many, in what (a live server's
/// stream by its server, a file by its form), where the first is and why.
fn bad_records_text(app: &App) -> Option<String> {
    let n = app.stats.malformed;
    if n == 0 {
        return None;
    }
    let records = if n == 1 { "record" } else { "records" };
    let form = match app
        .stats
        .last_bad
        .as_ref()
        .and_then(|b| b.server.as_deref())
    {
        Some(server) => format!("the stream of {server}"),
        None => app.stats.form.unwrap_or("the input").to_string(),
    };
    let show = app
        .keymap
        .hint(Action::BadRecord)
        .map(|k| format!(" ({k} shows it)"))
        .unwrap_or_default();
    let first = match (app.stats.first_malformed(), &app.stats.first_reason) {
        (Some(p), Some(why)) => format!(": {}, {why}", p.place()),
        (Some(p), None) => format!(": {}", p.place()),
        _ => String::new(),
    };
    Some(sanitize::line(&format!(" · {n} bad {records} in {form}{first}{show}")).into_owned())
}

/// The selected session: its status (or that it is being stopped), its
/// cost and its tokens.
fn session_text(app: &App) -> Option<String> {
    let s = app.selected_session()?;
    let status = if app.verbs.aborting.contains(&s.info.id) {
        "stopping…".to_string()
    } else {
        format::status_text(&s.status, app.now_ms)
    };
    let mut text = format!(" │ {status}");
    let totals = s.totals();
    let c = format::summed(format::cost(totals.cost), totals.cost_summed);
    if !c.is_empty() {
        text.push_str(&format!(" {c}"));
    }
    let t = format::totals_tokens(&totals);
    if !t.is_empty() {
        text.push_str(&format!(" {t}"));
    }
    Some(text)
}

/// The key hints: the essential ones always, the player's and the focused
/// pane's while they fit in `share` columns. The hints, and their width.
fn key_hints(app: &App, share: usize) -> (Vec<(String, &'static str)>, usize) {
    let focus_hints = match app.focus {
        Focus::Sessions => SESSION_HINTS,
        Focus::Turns => TURN_HINTS,
        Focus::Prompt => PROMPT_HINTS,
    };
    let player_hints: &[Action] = if app.player.is_some() {
        PLAYER_HINTS
    } else {
        &[]
    };
    let hint = |action: Action| {
        let k = app.keymap.hint(action)?;
        let label = short_label(action);
        let w = wrap::width(&k) + wrap::width(label) + 2;
        Some((k, label, w))
    };
    let essentials: Vec<_> = ESSENTIAL_HINTS.iter().filter_map(|&a| hint(a)).collect();
    let mut hints_w: usize = essentials.iter().map(|(_, _, w)| w).sum();
    let mut hints = Vec::new();
    let optional = player_hints.iter().chain(focus_hints);
    for (k, label, w) in optional.filter_map(|&a| hint(a)) {
        if hints_w + w > share {
            break;
        }
        hints.push((k, label));
        hints_w += w;
    }
    hints.extend(essentials.into_iter().map(|(k, label, _)| (k, label)));
    (hints, hints_w)
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let theme = &app.theme;
    let bar = theme.style(Role::StatusBar);
    let key = theme.style(Role::StatusKey);

    if let Some(crate::app::panes::status_line::seek::SeekInput { text }) = &app.panes.seek_input {
        let line = Line::from(vec![
            Span::styled(" seek to: ", key),
            Span::styled(format!("{}▏", sanitize::line(text)), bar),
            Span::styled("  40%, 1:30, 90s · enter go · esc cancel", bar),
        ]);
        frame.render_widget(Paragraph::new(line).style(bar), area);
        return;
    }
    if let Some((text, true)) = app.search_status() {
        let line = Line::from(vec![
            Span::styled(" search ", key),
            Span::styled(sanitize::line(&text).into_owned(), bar),
            Span::styled("  · enter keep · esc clear", bar),
        ]);
        frame.render_widget(Paragraph::new(line).style(bar), area);
        return;
    }
    if let Some(pick) = &app.verbs.pick {
        let mut spans = vec![
            Span::styled(" copy: ", key),
            Span::styled(
                format!(
                    "{} the whole {} ({})",
                    app.keymap.hint(Action::Copy).unwrap_or_default(),
                    pick.content.what,
                    crate::headless::content::size(&pick.content.text)
                ),
                bar,
            ),
        ];
        for (i, b) in pick.blocks.iter().take(9).enumerate() {
            let lang = if b.lang.is_empty() { "code" } else { &b.lang };
            spans.push(Span::styled(format!(" · {}", i + 1), key));
            spans.push(Span::styled(
                match b.code.lines().count() {
                    1 => format!(" {} (1 line)", sanitize::line(lang)),
                    n => format!(" {} ({n} lines)", sanitize::line(lang)),
                },
                bar,
            ));
        }
        spans.push(Span::styled(" · esc cancel", bar));
        frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
        return;
    }
    let parts = compose(app, area);
    let mut spans = vec![Span::styled(parts.head, bar)];
    if let (Some(p), Some(r)) = (&app.player, parts.bar) {
        spans.extend(timeline_bar::bar(p, r.width as usize, theme, bar));
    }
    if let Some((text, error)) = parts.said {
        let role = if error {
            Role::Warning
        } else {
            Role::StatusKey
        };
        spans.push(Span::styled(text, theme.style(role)));
    }
    spans.push(Span::styled(parts.rest, bar));
    spans.push(Span::styled(" ".repeat(parts.pad), bar));
    for (k, label) in parts.hints {
        spans.push(Span::styled(format!(" {k}"), key));
        spans.push(Span::styled(format!(" {label}"), bar));
    }
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
        Action::PlayPause => "play",
        Action::SeekTo => "seek",
        other => other.name(),
    }
}

/// The fleet's tally of servers: OpenCode's database and the archive's
/// origins are listed beside the servers, but are none.
fn fleet_summary(app: &App) -> Option<String> {
    crate::model::store::fleet::summary(app.store.servers().iter().filter(|s| {
        s.key != crate::source::opencode_db::history::HISTORY_KEY
            && !crate::archive::list_reader::is_archive_key(&s.key)
    }))
}
