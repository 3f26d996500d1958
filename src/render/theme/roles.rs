//! OpenCode's keys onto ocview's roles. A key the theme left out (or that
//! failed to resolve) is looked for among related keys first, then taken
//! from the OpenCode default theme, so every role always has a style.

use ratatui::style::{Color, Modifier, Style};

use crate::render::theme::Role;
use crate::render::theme::opencode::Palette;

/// The palette of the theme, with the default theme's behind it.
pub struct Lookup<'a> {
    pub theme: &'a Palette,
    pub fallback: &'a Palette,
}

impl Lookup<'_> {
    /// The first of `keys` the theme resolved, else the default theme's
    /// first key. `None` is transparent.
    pub fn color(&self, keys: &[&str]) -> Option<Color> {
        keys.iter()
            .find_map(|k| self.theme.get(k))
            .or_else(|| self.fallback.get(keys[0]))
            .flatten()
    }
}

fn fg(c: Option<Color>) -> Style {
    match c {
        Some(c) => Style::default().fg(c),
        None => Style::default(),
    }
}

fn on(style: Style, c: Option<Color>) -> Style {
    match c {
        Some(c) => style.bg(c),
        None => style,
    }
}

/// The style of every role, in `Role::ALL` order.
pub fn styles(p: &Lookup) -> Vec<Style> {
    let bold = Modifier::BOLD;
    let text = p.color(&["text"]);
    let background = p.color(&["background"]);
    let panel = p.color(&["backgroundPanel", "backgroundElement", "background"]);
    // Text drawn on a coloured band: the theme's background, which reads on
    // every accent colour a theme picks.
    let ink = fg(background);
    Role::ALL
        .iter()
        .map(|role| match role {
            Role::Background => on(fg(text), background),
            Role::Text => fg(text),
            Role::Muted => fg(p.color(&["textMuted"])),
            Role::Accent => fg(p.color(&["primary"])),
            Role::Border => fg(p.color(&["border"])),
            Role::BorderFocus => fg(p.color(&["borderActive", "primary"])),
            Role::Title => fg(text).add_modifier(bold),
            Role::Selection => on(Style::default(), p.color(&["backgroundElement"])),
            Role::SelectionFocus => on(ink, p.color(&["primary"])),
            Role::User => fg(p.color(&["secondary"])).add_modifier(bold),
            Role::Assistant => fg(p.color(&["accent"])).add_modifier(bold),
            Role::Reasoning => fg(p.color(&["textMuted"])).add_modifier(Modifier::ITALIC),
            Role::Tool => fg(p.color(&["info"])),
            Role::Running => fg(p.color(&["warning"])),
            Role::Success => fg(p.color(&["success"])),
            Role::Error => fg(p.color(&["error"])),
            Role::Warning => fg(p.color(&["warning"])),
            Role::Badge => on(ink, p.color(&["warning"])).add_modifier(bold),
            Role::StatusBar => on(fg(text), panel),
            Role::StatusKey => on(fg(p.color(&["primary"])), panel).add_modifier(bold),
            Role::Code => fg(p.color(&["markdownCode", "success"])),
            Role::Heading => fg(p.color(&["markdownHeading", "primary"])).add_modifier(bold),
            Role::Link => {
                fg(p.color(&["markdownLink", "secondary"])).add_modifier(Modifier::UNDERLINED)
            }
            Role::Quote => {
                fg(p.color(&["markdownBlockQuote", "textMuted"])).add_modifier(Modifier::ITALIC)
            }
            Role::DiffAdd => fg(p.color(&["diffAdded", "success"])),
            Role::DiffDel => fg(p.color(&["diffRemoved", "error"])),
            Role::DiffHunk => fg(p.color(&["diffHunkHeader", "info"])),
            Role::DiffAddLine => on(Style::default(), p.color(&["diffAddedBg"])),
            Role::DiffDelLine => on(Style::default(), p.color(&["diffRemovedBg"])),
            Role::Match => on(ink, p.color(&["warning"])),
            Role::MatchCurrent => on(ink, p.color(&["accent", "primary"])).add_modifier(bold),
        })
        .collect()
}
