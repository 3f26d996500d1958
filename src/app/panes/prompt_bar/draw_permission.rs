//! The prompt bar showing a permission: what it is about (the command, the
//! file and its diff), cut to the rows left once the answers have theirs,
//! and the answers step by step. The line of choices is never the one cut.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::app::keymap::Action;
use crate::app::panes::prompt_bar::answers::{PERM_CHOICES, PermStep};
use crate::app::panes::prompt_bar::draw_keys::{keys_line, typing_keys};
use crate::model::PermissionRequest;
use crate::model::entity::prompt::{meta, subject};
use crate::model::wire::sanitize;
use crate::render::diff_lines::DiffLayout;
use crate::render::theme::Role;
use crate::render::tools::lang_of;
use crate::render::wrap;

/// A permission's diff starts this far in, and shows at most this many
/// lines in the bar (`v` shows all); a command at most `SUBJECT_ROWS`.
pub const DIFF_INDENT: &str = "   ";
pub const DIFF_ROWS: usize = 8;
const SUBJECT_ROWS: usize = 3;

/// How much of a permission's preview the bar shows in `rows` rows: lines
/// of the subject, rows of the diff, and whether a line says how many more
/// there are (`v` shows them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewCut {
    pub subject: usize,
    pub diff: usize,
    pub more: usize,
}

impl PreviewCut {
    /// `subject_lines` and `diff_rows` exist; `rows` is the room (`None`:
    /// as much as the bar ever shows).
    pub fn new(subject_lines: usize, diff_rows: usize, rows: Option<usize>) -> PreviewCut {
        let rows = rows.unwrap_or(usize::MAX);
        let mut subject = subject_lines.min(SUBJECT_ROWS).min(rows);
        let mut diff = diff_rows.min(DIFF_ROWS).min(rows - subject);
        let hidden = |s: usize, d: usize| subject_lines + diff_rows - s - d;
        if hidden(subject, diff) > 0 && subject + diff + 1 > rows {
            // The "… more" line takes the diff's last row, else the
            // subject's (the first line of the subject stays).
            if diff > 0 {
                diff -= 1;
            } else if subject > 1 {
                subject -= 1;
            }
        }
        let more = hidden(subject, diff);
        let more = if subject + diff < rows { more } else { 0 };
        PreviewCut {
            subject,
            diff,
            more,
        }
    }

    pub fn rows(&self) -> usize {
        self.subject + self.diff + usize::from(self.more > 0)
    }
}

/// The lines of the subject (a command may have many) and the diff's rows
/// at `width`, as the bar lays them out.
pub fn preview_size(p: &PermissionRequest, width: usize) -> (usize, usize) {
    let what = subject(p);
    let diff = meta(p, "diff").map_or(0, |d| {
        DiffLayout::new(d, lang_of(&what), width.saturating_sub(DIFF_INDENT.len())).len()
    });
    (sanitize::block(&what).lines().count().max(1), diff)
}

/// The answer lines of the step the permission is at.
fn answer_lines(app: &App, p: &PermissionRequest, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    match app.panes.prompts.step {
        PermStep::ConfirmAlways => {
            let remembered = if p.always.is_empty() {
                p.patterns.join(", ")
            } else {
                p.always.join(", ")
            };
            let k = |a| app.keymap.describe(a);
            vec![
                Line::styled(
                    wrap::truncate(
                        &format!(
                            "   Always allow? The server will remember: {}",
                            sanitize::line(&remembered)
                        ),
                        width,
                    ),
                    theme.style(Role::Warning),
                ),
                keys_line(
                    app,
                    &[
                        (&k(Action::Confirm), "confirm"),
                        (&k(Action::Cancel), "back"),
                    ],
                    width,
                ),
            ]
        }
        PermStep::RejectMessage => vec![typing_keys(app, "send", width)],
        PermStep::Choose => {
            let k = |a| app.keymap.hint(a).unwrap_or_default();
            let choose = format!(
                "{}/{} then {}",
                k(Action::ChoiceLeft),
                k(Action::ChoiceRight),
                k(Action::PromptEnter)
            );
            let view = format!("{}/{}", k(Action::PromptEnter), k(Action::PromptView));
            let next = format!("{}/{}", k(Action::PromptNext), k(Action::PromptPrev));
            vec![
                choices_line(app, width),
                keys_line(
                    app,
                    &[
                        (&choose, "choose"),
                        (&view, "view"),
                        (&next, "next/prev"),
                        (&k(Action::PromptSession), "go to session"),
                        (&k(Action::PromptLater), "later"),
                    ],
                    width,
                ),
            ]
        }
    }
}

/// "[y] allow once  [a] allow always  [n] reject  [m] reject with a
/// message", with shorter labels where the whole line does not fit: every
/// answer key stays on screen.
fn choices_line(app: &App, width: usize) -> Line<'static> {
    const SHORT: [&str; 4] = ["once", "always", "reject", "message"];
    let theme = &app.theme;
    let keys = [
        Action::AllowOnce,
        Action::AllowAlways,
        Action::Reject,
        Action::RejectMessage,
    ]
    .map(|a| app.keymap.hint(a).unwrap_or_default());
    let long: usize = PERM_CHOICES
        .iter()
        .zip(&keys)
        .map(|((_, label), k)| k.chars().count() + label.chars().count() + 5)
        .sum();
    let (labels, gap) = if 3 + long <= width + 2 {
        (PERM_CHOICES.map(|(_, l)| l), "  ")
    } else {
        (SHORT, " ")
    };
    let mut spans = vec![Span::raw("   ")];
    for (i, (label, k)) in labels.iter().zip(&keys).enumerate() {
        let style = if app.panes.prompts.chose && i == app.panes.prompts.choice {
            theme.style(Role::SelectionFocus)
        } else {
            theme.style(Role::Text)
        };
        spans.push(Span::styled(format!("[{k}]"), theme.style(Role::Accent)));
        spans.push(Span::styled(format!(" {label}"), style));
        spans.push(Span::raw(gap));
    }
    Line::from(spans)
}

/// The permission's lines in at most `rows` rows: its preview, cut to fit,
/// then its answers.
pub fn permission(
    app: &App,
    p: &PermissionRequest,
    width: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let answers = answer_lines(app, p, width);
    let what = subject(p);
    let block = sanitize::block(&what);
    let subject_lines: Vec<&str> = block.lines().collect();
    let layout = meta(p, "diff")
        .map(|d| DiffLayout::new(d, lang_of(&what), width.saturating_sub(DIFF_INDENT.len())));
    let cut = PreviewCut::new(
        subject_lines.len().max(1),
        layout.as_ref().map_or(0, DiffLayout::len),
        Some(rows.saturating_sub(answers.len())),
    );
    let lead = if p.permission == "bash" { "$ " } else { "" };
    let mut lines: Vec<Line<'static>> = subject_lines
        .iter()
        .take(cut.subject)
        .map(|l| {
            Line::styled(
                wrap::truncate(&format!("   {lead}{l}"), width),
                theme.style(Role::Text),
            )
        })
        .collect();
    // Only the rows shown are rendered.
    if let Some(layout) = &layout
        && cut.diff > 0
        && let Some(session) = app
            .selected_session()
            .or_else(|| app.store.session(&p.session_id))
    {
        let ctx = app.render_ctx(session, width as u16);
        for mut l in layout.lines(&ctx, 0..cut.diff) {
            l.spans.insert(0, Span::raw(DIFF_INDENT));
            lines.push(l);
        }
    }
    if cut.more > 0 {
        let key = app.keymap.hint(Action::PromptView).unwrap_or_default();
        lines.push(Line::styled(
            format!("{DIFF_INDENT}… {} more lines ({key} shows all)", cut.more),
            theme.style(Role::Muted),
        ));
    }
    lines.extend(answers);
    lines
}
