//! Themes name roles, not colours: the UI asks for `Role::Error`, a theme
//! says what that looks like. Themes are OpenCode's own JSON format
//! (`opencode`), mapped onto ocview's roles (`roles`); code colours come
//! from the same theme (`syntax`). An ocview TOML file can still restyle
//! single roles (`toml_format`). `catalog` finds the themes and the one the
//! user chose in OpenCode.

mod built_in;
pub mod catalog;
pub mod opencode;
mod roles;
pub mod syntax;
mod toml_format;

use ratatui::style::{Color, Modifier, Style};

pub use opencode::Mode;
pub use syntax::SyntaxTheme;

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
    Background => "background",
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

#[derive(Debug, Clone)]
pub struct Theme {
    /// The name it was chosen by: a catalog name, or a file's path.
    pub name: String,
    /// The variant its `{"dark", "light"}` values were read in.
    pub mode: Mode,
    styles: Vec<Style>,
    /// How code is coloured.
    pub syntax: SyntaxTheme,
    /// What was wrong in the theme file, each naming its key; the roles
    /// concerned fell back to the default theme.
    pub warnings: Vec<String>,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::opencode_default(Mode::Dark)
    }
}

impl Theme {
    pub fn style(&self, role: Role) -> Style {
        self.styles[role as usize]
    }

    /// OpenCode's own default look.
    pub fn opencode_default(mode: Mode) -> Theme {
        Theme::from_opencode(catalog::DEFAULT, catalog::default_text(), mode)
            .expect("the built-in default theme parses")
    }

    /// A theme in OpenCode's JSON format. Fails only when the text is not a
    /// theme document at all; a bad entry is a warning.
    pub fn from_opencode(name: &str, text: &str, mode: Mode) -> Result<Theme, String> {
        let (palette, warnings) = opencode::parse(text, mode)?;
        // Parsed again rather than cached: a few hundred keys, once per load.
        let (fallback, _) = opencode::parse(catalog::default_text(), mode)
            .expect("the built-in default theme parses");
        let lookup = roles::Lookup {
            theme: &palette,
            fallback: &fallback,
        };
        Ok(Theme {
            name: name.to_string(),
            mode,
            styles: roles::styles(&lookup),
            syntax: syntax::build(name, &lookup),
            warnings,
        })
    }

    /// `NO_COLOR`: no colour anywhere, and structure kept by attributes. A
    /// role that stood out only by its background (a selection, a search
    /// match, the status bar) is drawn reversed instead. Diff bands are
    /// not: whole lines reversed would drown the `+`/`-` that already say
    /// it.
    pub fn without_color(&self) -> Theme {
        let styles = Role::ALL
            .iter()
            .map(|&role| {
                let s = self.style(role);
                let banded = s.bg.is_some_and(|c| c != Color::Reset)
                    && !matches!(
                        role,
                        Role::Background | Role::DiffAddLine | Role::DiffDelLine
                    );
                let mut plain = Style::default().add_modifier(s.add_modifier);
                if banded {
                    plain = plain.add_modifier(Modifier::REVERSED);
                }
                plain
            })
            .collect();
        Theme {
            styles,
            ..self.clone()
        }
    }

    /// Whether the theme paints a background of its own.
    pub fn paints_background(&self) -> bool {
        self.style(Role::Background).bg.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_theme_has_both_variants_and_the_light_one_paints_its_background() {
        let dark = Theme::opencode_default(Mode::Dark);
        let light = Theme::opencode_default(Mode::Light);
        assert!(dark.warnings.is_empty() && light.warnings.is_empty());
        assert_ne!(dark.style(Role::Text), light.style(Role::Text));
        let bg = light
            .style(Role::Background)
            .bg
            .expect("a light background");
        let Color::Rgb(r, g, b) = bg else {
            panic!("{bg:?}")
        };
        assert!(u32::from(r) + u32::from(g) + u32::from(b) > 600, "{bg:?}");
    }

    #[test]
    fn a_broken_entry_falls_back_for_that_role_only() {
        let theme = Theme::from_opencode(
            "broken",
            r##"{"theme": {"error": "#zzzzzz", "success": "#010203", "diffAdded": "loop", "loop": "diffAdded"}}"##,
            Mode::Dark,
        )
        .unwrap();
        let default = Theme::opencode_default(Mode::Dark);
        assert_eq!(theme.style(Role::Error), default.style(Role::Error));
        assert_eq!(
            theme.style(Role::Success).fg,
            Some(Color::Rgb(1, 2, 3)),
            "the good key is used"
        );
        // diffAdded fell through to the theme's own success colour.
        assert_eq!(theme.style(Role::DiffAdd).fg, Some(Color::Rgb(1, 2, 3)));
        assert!(theme.warnings.iter().any(|w| w.starts_with("theme.error:")));
        assert!(
            theme
                .warnings
                .iter()
                .any(|w| w.starts_with("theme.diffAdded:"))
        );
        assert!(theme.warnings.iter().any(|w| w.starts_with("theme.loop:")));
    }

    #[test]
    fn without_color_keeps_structure_by_attributes() {
        let theme = Theme::opencode_default(Mode::Dark).without_color();
        for &role in Role::ALL {
            let s = theme.style(role);
            assert!(s.fg.is_none() && s.bg.is_none(), "{role:?}: {s:?}");
        }
        for role in [
            Role::Selection,
            Role::SelectionFocus,
            Role::Match,
            Role::MatchCurrent,
            Role::Badge,
            Role::StatusBar,
        ] {
            assert!(
                theme.style(role).add_modifier.contains(Modifier::REVERSED),
                "{role:?}"
            );
        }
        assert!(
            theme
                .style(Role::Title)
                .add_modifier
                .contains(Modifier::BOLD)
        );
        // Diff bands stay plain: the +/- marks say it.
        assert_eq!(theme.style(Role::DiffAddLine), Style::default());
        assert!(!theme.paints_background());
    }
}
