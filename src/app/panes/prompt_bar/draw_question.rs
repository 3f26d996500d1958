//! The prompt bar showing a question: one tab per question and a review,
//! the options with their numbers, and the own-answer row.
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::app::panes::prompt_bar::draw::keys_line;
use crate::app::panes::prompt_bar::questions::Draft;
use crate::model::QuestionRequest;
use crate::model::wire::sanitize;
use crate::render::theme::Role;
use crate::render::wrap;

pub(super) fn question(
    app: &App,
    q: &QuestionRequest,
    width: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = &app.theme;
    let fresh;
    let draft: &Draft = match app.prompts.drafts.get(&q.id) {
        Some(d) => d,
        None => {
            fresh = Draft::new(q);
            &fresh
        }
    };
    let review = q.questions.len();
    let tab = draft.tab.min(review);
    // Tabs: one per question (its header), then the review.
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
    let style = if tab == review {
        theme.style(Role::SelectionFocus)
    } else {
        theme.style(Role::Muted)
    };
    spans.push(Span::styled(" Review ", style));
    lines.push(Line::from(spans));
    if tab == review {
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
            lines.push(Line::styled(
                wrap::truncate(&line, width),
                theme.style(role),
            ));
        }
        let k = |a| app.keymap.hint(a).unwrap_or_default();
        let submit = format!("{}/{}", k(Action::PromptEnter), k(Action::QuestionReview));
        lines.push(keys_line(
            app,
            &[
                (&submit, "submit"),
                (&k(Action::ChoiceLeft), "back"),
                (&k(Action::QuestionDismiss), "dismiss"),
                (&k(Action::PromptLater), "later"),
            ],
            width,
        ));
        return;
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
        lines.push(Line::styled(wrap::truncate(&line, width), style));
    }
    if qq.custom != Some(false) {
        let cursor = if draft.cursor == qq.options.len() {
            "›"
        } else {
            " "
        };
        let typed = draft.typed[tab].trim();
        let text = if typed.is_empty() {
            "type your own answer".to_string()
        } else {
            format!("your answer: {}", sanitize::line(typed))
        };
        let style = if draft.cursor == qq.options.len() {
            theme.style(Role::Accent)
        } else {
            theme.style(Role::Muted)
        };
        lines.push(Line::styled(
            wrap::truncate(&format!(" {cursor}   ✎ {text}"), width),
            style,
        ));
    }
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    let owned: Vec<(String, &str)> = if app.prompts.editor.is_some() {
        vec![("esc/ctrl-s".into(), "done typing")]
    } else {
        vec![
            ("1-9".into(), "pick"),
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
        ]
    };
    let keys: Vec<(&str, &str)> = owned.iter().map(|(k, l)| (k.as_str(), *l)).collect();
    lines.push(keys_line(app, &keys, width));
}
