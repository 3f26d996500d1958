//! The whole prompt, full screen (`v`): every line of a long command or
//! diff, and the answer keys that work over it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use serde_json::Value;

use crate::app::App;
use crate::app::keymap::Action;
use crate::app::panes::prompt_bar::answers::PERM_CHOICES;
use crate::app::panes::prompt_bar::draw::session_chain;
use crate::model::entity::prompt::{describe, meta, subject};
use crate::model::wire::sanitize;
use crate::model::{Prompt, PromptRequest};
use crate::render::diff_lines::diff_lines;
use crate::render::theme::Role;
use crate::render::tools::lang_of;
use crate::render::wrap;

/// The whole prompt, full screen: every line of a long command or diff.
pub fn draw_view(frame: &mut Frame, app: &App, screen: Rect) {
    let theme = &app.theme;
    let Some((_, _, prompt)) = app.current_prompt() else {
        return;
    };
    frame.render_widget(Clear, screen);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::Warning))
        .title(Line::styled(
            {
                let k = |a| app.keymap.hint(a).unwrap_or_default();
                format!(
                    " Prompt ({}/{} scroll, {} or {} close) ",
                    k(Action::ListDown),
                    k(Action::ListUp),
                    k(Action::PromptView),
                    k(Action::ListClose)
                )
            },
            theme.style(Role::Title),
        ))
        .title_bottom(Line::styled(
            answer_keys(
                app,
                &prompt.request,
                screen.width.saturating_sub(4) as usize,
            ),
            theme.style(Role::Accent),
        ));
    let inner = block.inner(screen);
    frame.render_widget(block, screen);
    let lines = view_lines(app, prompt, inner.width as usize);
    frame.render_widget(
        Paragraph::new(lines).scroll((app.panes.prompts.view_scroll, 0)),
        inner,
    );
}

/// A key and what it does.
type KeyLabel = (String, &'static str);

/// " answer: y allow once · a allow always · n reject · m reject with a
/// message ": the answer keys the view takes (the others scroll or close
/// it), with short labels when the long ones do not fit in `width`.
fn answer_keys(app: &App, request: &PromptRequest, width: usize) -> String {
    let k = |a| app.keymap.hint(a).unwrap_or_default();
    let (long, short): (Vec<KeyLabel>, Vec<KeyLabel>) = match request {
        PromptRequest::Permission(_) => {
            let keys = [
                Action::AllowOnce,
                Action::AllowAlways,
                Action::Reject,
                Action::RejectMessage,
            ]
            .map(k);
            let short = ["once", "always", "reject", "message"];
            (
                keys.iter()
                    .cloned()
                    .zip(PERM_CHOICES.map(|(_, l)| l))
                    .collect(),
                keys.iter().cloned().zip(short).collect(),
            )
        }
        PromptRequest::Question(q) => {
            let most = q
                .questions
                .iter()
                .map(|qq| qq.options.len() + usize::from(qq.custom != Some(false)))
                .max()
                .unwrap_or(0)
                .clamp(1, 9);
            let digits = if most == 1 {
                "1".to_string()
            } else {
                format!("1-{most}")
            };
            let keys = vec![
                (digits, "pick"),
                (k(Action::PromptEnter), "take"),
                (
                    format!("{}/{}", k(Action::ChoiceLeft), k(Action::ChoiceRight)),
                    "question",
                ),
                (k(Action::QuestionReview), "review"),
                (k(Action::QuestionDismiss), "dismiss"),
            ];
            let mut short = keys.clone();
            short.remove(2);
            (keys, short)
        }
    };
    let join = |keys: &[KeyLabel]| {
        let parts: Vec<String> = keys
            .iter()
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, l)| format!("{k} {l}"))
            .collect();
        format!(" answer: {} ", parts.join(" · "))
    };
    let text = join(&long);
    if text.chars().count() <= width {
        text
    } else {
        join(&short)
    }
}

fn view_lines(app: &App, prompt: &Prompt, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let mut out = Vec::new();
    let (kind, _) = describe(&prompt.request);
    out.push(Line::styled(
        format!(
            "{kind} — {}",
            sanitize::line(&session_chain(app, prompt.request.session_id()))
        ),
        theme.style(Role::Warning),
    ));
    match &prompt.request {
        PromptRequest::Permission(p) => {
            for l in sanitize::block(&subject(p)).lines() {
                out.extend(wrap::wrap_text(l, theme.style(Role::Text), width, "  "));
            }
            if !p.patterns.is_empty() {
                out.push(Line::styled(
                    format!("patterns: {}", sanitize::line(&p.patterns.join(", "))),
                    theme.style(Role::Muted),
                ));
            }
            if let Some(diff) = meta(p, "diff")
                && let Some(session) = app
                    .store
                    .session(&p.session_id)
                    .or_else(|| app.selected_session())
            {
                let ctx = app.render_ctx(session, width as u16);
                out.extend(diff_lines(diff, lang_of(&subject(p)), &ctx, width));
            } else if let Value::Object(map) = &p.metadata {
                for (k, v) in map {
                    let v = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    out.extend(wrap::wrap_text(
                        &sanitize::block(&format!("{k}: {v}")),
                        theme.style(Role::Muted),
                        width,
                        "  ",
                    ));
                }
            }
        }
        PromptRequest::Question(q) => {
            for qq in &q.questions {
                out.extend(wrap::wrap_text(
                    &sanitize::block(&format!("{}: {}", qq.header, qq.question)),
                    theme.style(Role::Text),
                    width,
                    "  ",
                ));
                for o in &qq.options {
                    out.extend(wrap::wrap_text(
                        &sanitize::block(&format!("  • {} — {}", o.label, o.description)),
                        theme.style(Role::Muted),
                        width,
                        "    ",
                    ));
                }
            }
        }
    }
    out
}
