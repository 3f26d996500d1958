//! The prompt bar showing a question: one tab per question and a review,
//! the options with their numbers, and the own-answer row; the keys line
//! always shows, the options scroll with the highlight when rows are short.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::app::panes::prompt_bar::draw_keys::{keys_line, typing_keys};
use crate::app::panes::prompt_bar::questions::Draft;
use crate::model::QuestionRequest;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

/// The question's lines in at most `rows` rows.
pub(super) fn question(
    app: &App,
    q: &QuestionRequest,
    width: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let mut lines = Vec::new();
    let fresh;
    let draft: &Draft = match app.panes.prompts.drafts.get(&q.id) {
        Some(d) => d,
        None => {
            fresh = Draft::new(q);
            &fresh
        }
    };
    let review = q.questions.len();
    let tab = draft.tab.min(review);
    lines.push(tabs(app, q, draft, tab));
    if tab == review {
        let (items, keys) = review_lines(app, q, draft, width);
        return fit(lines, items, 0, keys, rows);
    }
    let qq = &q.questions[tab];
    let multi = if qq.multiple {
        "  (several answers)"
    } else {
        ""
    };
    lines.push(Line::styled(
        wrap::truncate(
            &format!("   {}{multi}", sanitize::line(&qq.question)),
            width,
        ),
        theme.style(Role::Text),
    ));
    let custom = qq.custom != Some(false);
    // The options (or the review's answers): what shrinks.
    let items = option_lines(app, qq, draft, tab, width);
    if app.panes.prompts.editor.is_some() {
        let keys = typing_keys(app, "done", width);
        return fit(lines, items, draft.cursor, keys, rows);
    }
    let keys = question_keys(app, qq, custom, width);
    fit(lines, items, draft.cursor, keys, rows)
}

/// The tabs: one per question (its header, ✓ once answered), then the
/// review; the current one stands out.
fn tabs(app: &App, q: &QuestionRequest, draft: &Draft, tab: usize) -> Line<'static> {
    let theme = &app.theme;
    let mut spans = vec![Span::raw("   ")];
    for (i, qq) in q.questions.iter().enumerate() {
        let mark = if draft.is_answered(i) { "✓ " } else { "" };
        let label = if qq.header.is_empty() {
            format!("Q{}", i + 1)
        } else {
            sanitize::line(&qq.header).into_owned()
        };
        let style = if i == tab {
            theme.style(Role::SelectionFocus)
        } else {
            theme.style(Role::Muted)
        };
        spans.push(Span::styled(format!(" {mark}{label} "), style));
        spans.push(Span::raw(" "));
    }
    let review = q.questions.len();
    let style = if tab == review {
        theme.style(Role::SelectionFocus)
    } else {
        theme.style(Role::Muted)
    };
    spans.push(Span::styled(" Review ", style));
    Line::from(spans)
}

/// The review: each question with its answer (or that it has none), and
/// the keys that submit, go back, dismiss or leave it for later.
fn review_lines(
    app: &App,
    q: &QuestionRequest,
    draft: &Draft,
    width: usize,
) -> (Vec<Line<'static>>, Line<'static>) {
    let theme = &app.theme;
    let mut items = Vec::new();
    for (i, qq) in q.questions.iter().enumerate() {
        let answer = draft.answers(q).get(i).cloned().unwrap_or_default();
        let (text, role) = if answer.is_empty() {
            ("(unanswered)".to_string(), Role::Warning)
        } else {
            (answer.join(", "), Role::Success)
        };
        let line = format!(
            "   {}: {}",
            sanitize::line(&qq.question),
            sanitize::line(&text)
        );
        items.push(Line::styled(
            wrap::truncate(&line, width),
            theme.style(role),
        ));
    }
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    let submit = format!("{}/{}", k(Action::PromptEnter), k(Action::QuestionReview));
    let keys = keys_line(
        app,
        &[
            (&submit, "submit"),
            (&k(Action::ChoiceLeft), "back"),
            (&k(Action::QuestionDismiss), "dismiss"),
            (&k(Action::PromptLater), "later"),
        ],
        width,
    );
    (items, keys)
}

/// A question's options, numbered and marked as picked, then the own
/// answer when the question takes one.
fn option_lines(
    app: &App,
    qq: &crate::model::entity::prompt::Question,
    draft: &Draft,
    tab: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let mut items = Vec::new();
    for (o, opt) in qq.options.iter().enumerate() {
        let picked = draft.picked[tab].contains(&o);
        let mark = match (qq.multiple, picked) {
            (true, true) => "[x]",
            (true, false) => "[ ]",
            (false, true) => "(•)",
            (false, false) => "( )",
        };
        let cursor = if draft.cursor == o { "›" } else { " " };
        let desc = if opt.description.is_empty() {
            String::new()
        } else {
            format!(" — {}", opt.description)
        };
        let line = format!(
            " {cursor} {} {mark} {}{}",
            o + 1,
            sanitize::line(&opt.label),
            sanitize::line(&desc)
        );
        let style = if draft.cursor == o {
            theme.style(Role::Accent)
        } else {
            Style::default()
        };
        items.push(Line::styled(wrap::truncate(&line, width), style));
    }
    if qq.custom != Some(false) {
        // The own answer is numbered like the options, and marked picked
        // once something is typed (on a single-choice question it then is
        // the answer).
        let own = qq.options.len();
        let cursor = if draft.cursor == own { "›" } else { " " };
        let typed = draft.typed[tab].trim();
        let mark = match (qq.multiple, typed.is_empty()) {
            (true, false) => "[x]",
            (true, true) => "[ ]",
            (false, false) => "(•)",
            (false, true) => "( )",
        };
        let text = if typed.is_empty() {
            "type your own answer".to_string()
        } else {
            format!("your answer: {}", sanitize::line(typed))
        };
        let style = if draft.cursor == own {
            theme.style(Role::Accent)
        } else {
            theme.style(Role::Muted)
        };
        items.push(Line::styled(
            wrap::truncate(&format!(" {cursor} {} {mark} ✎ {text}", own + 1), width),
            style,
        ));
    }
    items
}

/// The keys of a question: pick by number, toggle, move, other questions,
/// review, dismiss.
fn question_keys(
    app: &App,
    qq: &crate::model::entity::prompt::Question,
    custom: bool,
    width: usize,
) -> Line<'static> {
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    let numbers = match qq.options.len() + usize::from(custom) {
        0 => String::new(),
        1 => "1".into(),
        n => format!("1-{}", n.min(9)),
    };
    let mut owned: Vec<(String, &str)> = vec![
        (numbers, "pick"),
        (k(Action::OptionToggle), "toggle"),
        (
            format!("{}/{}", k(Action::OptionUp), k(Action::OptionDown)),
            "move",
        ),
        (
            format!("{}/{}", k(Action::ChoiceLeft), k(Action::ChoiceRight)),
            "question",
        ),
        (k(Action::QuestionReview), "review"),
        (k(Action::QuestionDismiss), "dismiss"),
    ];
    owned.retain(|(k, _)| !k.is_empty());
    let keys: Vec<(&str, &str)> = owned.iter().map(|(k, l)| (k.as_str(), *l)).collect();
    keys_line(app, &keys, width)
}

/// `top`, as many of `items` as fit around the one at `cursor`, and the
/// keys line last: in `rows` rows when there are that many.
fn fit(
    mut top: Vec<Line<'static>>,
    items: Vec<Line<'static>>,
    cursor: usize,
    keys: Line<'static>,
    rows: usize,
) -> Vec<Line<'static>> {
    let room = rows.saturating_sub(top.len() + 1).max(1);
    let first = (cursor + 1)
        .saturating_sub(room)
        .min(items.len().saturating_sub(room));
    top.extend(items.into_iter().skip(first).take(room));
    top.push(keys);
    top
}
