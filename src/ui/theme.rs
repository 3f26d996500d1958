//! Themes name roles, not colours: the UI asks for `Role::Error`, a theme
//! file says what that looks like. Built-in themes live in `themes/`.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};

macro_rules! roles {
    ($($variant:ident => $name:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Role { $($variant),* }

        impl Role {
            pub const ALL: &'static [Role] = &[$(Role::$variant),*];
            pub fn name(self) -> &'static str {
                match self { $(Role::$variant => $name),* }
            }
        }
    };
}

roles! {
    Text => "text",
    Muted => "muted",
    Accent => "accent",
    Border => "border",
    BorderFocus => "border_focus",
    Title => "title",
    Selection => "selection",
    SelectionFocus => "selection_focus",
    User => "user",
    Assistant => "assistant",
    Reasoning => "reasoning",
    Tool => "tool",
    Running => "running",
    Success => "success",
    Error => "error",
    Warning => "warning",
    Badge => "badge",
    StatusBar => "status_bar",
    StatusKey => "status_key",
    Code => "code",
    Heading => "heading",
    Link => "link",
    Quote => "quote",
    DiffAdd => "diff_add",
    DiffDel => "diff_del",
    DiffHunk => "diff_hunk",
    DiffAddLine => "diff_add_line",
    DiffDelLine => "diff_del_line",
    Match => "match",
    MatchCurrent => "match_current",
}

const BUILT_IN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
];

#[derive(Debug, Clone)]
pub struct Theme {
    styles: Vec<Style>,
    /// The syntect theme for code (`syntax = "…"` in a theme file).
    pub syntax: String,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::parse(BUILT_IN[0].1).expect("the built-in theme parses")
    }
}

impl Theme {
    pub fn style(&self, role: Role) -> Style {
        self.styles[role as usize]
    }

    /// A built-in theme by name, or a theme file by path.
    pub fn load(name_or_path: &str) -> Result<Theme, String> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            return Theme::parse(text);
        }
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).map_err(|e| {
            let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            format!(
                "theme {name_or_path:?}: not a built-in theme ({}) and not a readable file: {e}",
                names.join(", ")
            )
        })?;
        Theme::parse(&text).map_err(|e| format!("theme {}: {e}", path.display()))
    }

    /// A theme file: `role = "spec"` lines. Roles it leaves out keep the
    /// default theme's style, so a theme can change just a few.
    pub fn parse(text: &str) -> Result<Theme, String> {
        let mut table: BTreeMap<String, String> =
            toml::from_str(text).map_err(|e| e.to_string())?;
        let syntax = table.remove("syntax");
        let base = if std::ptr::eq(text, BUILT_IN[0].1) {
            None
        } else {
            Some(Theme::default())
        };
        let mut styles = Vec::with_capacity(Role::ALL.len());
        for &role in Role::ALL {
            let style = match table.get(role.name()) {
                Some(spec) => parse_style(spec).map_err(|e| format!("{}: {e}", role.name()))?,
                None => match &base {
                    Some(b) => b.style(role),
                    None => {
                        return Err(format!("{}: missing from the built-in theme", role.name()));
                    }
                },
            };
            styles.push(style);
        }
        if let Some(unknown) = table
            .keys()
            .find(|k| !Role::ALL.iter().any(|r| r.name() == *k))
        {
            return Err(format!("{unknown}: no such role"));
        }
        let syntax = syntax
            .or_else(|| base.as_ref().map(|b| b.syntax.clone()))
            .unwrap_or_else(|| "base16-ocean.dark".into());
        Ok(Theme { styles, syntax })
    }
}

/// `"[fg] [on bg] [modifier]..."`.
fn parse_style(spec: &str) -> Result<Style, String> {
    let mut style = Style::default();
    let mut words = spec.split_whitespace();
    let mut fg_set = false;
    while let Some(word) = words.next() {
        let modifier = match word {
            "bold" => Some(Modifier::BOLD),
            "dim" => Some(Modifier::DIM),
            "italic" => Some(Modifier::ITALIC),
            "underline" => Some(Modifier::UNDERLINED),
            "reversed" => Some(Modifier::REVERSED),
            _ => None,
        };
        if let Some(m) = modifier {
            style = style.add_modifier(m);
        } else if word == "on" {
            let bg = words.next().ok_or("\"on\" needs a colour")?;
            style = style.bg(color(bg)?);
        } else if !fg_set {
            style = style.fg(color(word)?);
            fg_set = true;
        } else {
            return Err(format!("unexpected {word:?}"));
        }
    }
    Ok(style)
}

fn color(word: &str) -> Result<Color, String> {
    Color::from_str(word).map_err(|_| format!("unknown colour {word:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_themes_define_every_role() {
        for (name, _) in BUILT_IN {
            Theme::load(name).unwrap();
        }
    }

    #[test]
    fn a_partial_theme_inherits_and_bad_entries_are_named() {
        let t = Theme::parse("error = \"#ff0000 on black bold\"").unwrap();
        assert_eq!(
            t.style(Role::Error),
            Style::default()
                .fg(Color::Rgb(255, 0, 0))
                .bg(Color::Black)
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(t.style(Role::Text), Theme::default().style(Role::Text));
        assert!(Theme::parse("eror = \"red\"").unwrap_err().contains("eror"));
        assert!(
            Theme::parse("error = \"reddish\"")
                .unwrap_err()
                .starts_with("error:")
        );
    }
}
