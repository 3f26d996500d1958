//! ocview's own theme format, for its roles that OpenCode has no key for
//! (or to restyle one role): a TOML file of `role = "[fg] [on bg]
//! [bold|dim|italic|underline|reversed]..."` lines over a base theme, and
//! `syntax = "…"` naming one of syntect's themes for code.

use std::collections::BTreeMap;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};

use crate::model::wire::sanitize;
use crate::render::theme::{Role, Theme, syntax};

impl Theme {
    /// `base` with the roles `text` sets restyled. An unknown role or a bad
    /// style is a warning naming it, and that role keeps the base's style.
    pub fn with_toml(mut self, text: &str) -> Result<Theme, String> {
        // toml's message quotes the file's line: inert before it is shown.
        let table: BTreeMap<String, String> = toml::from_str(text)
            .map_err(|e| sanitize::line(&e.to_string().trim().replace('\n', " ")).into_owned())?;
        for (key, spec) in &table {
            if key == "syntax" {
                match syntax::named(spec) {
                    Some(theme) => self.syntax = theme,
                    None => self.warnings.push(format!(
                        "syntax: no syntect theme {:?}",
                        sanitize::line(spec)
                    )),
                }
                continue;
            }
            let Some(&role) = Role::ALL.iter().find(|r| r.name() == key) else {
                self.warnings
                    .push(format!("{}: no such role", sanitize::line(key)));
                continue;
            };
            match parse_style(spec) {
                Ok(style) => self.styles[role as usize] = style,
                Err(e) => self.warnings.push(format!("{key}: {e}")),
            }
        }
        Ok(self)
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
            return Err(format!("unexpected {:?}", sanitize::line(word)));
        }
    }
    Ok(style)
}

fn color(word: &str) -> Result<Color, String> {
    Color::from_str(word).map_err(|_| format!("unknown colour {:?}", sanitize::line(word)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_theme_restyles_its_roles_and_names_bad_entries() {
        let base = Theme::default();
        let t = base
            .clone()
            .with_toml("error = \"#ff0000 on black bold\"\neror = \"red\"\nwarning = \"reddish\"\nsyntax = \"InspiredGitHub\"")
            .unwrap();
        assert_eq!(
            t.style(Role::Error),
            Style::default()
                .fg(Color::Rgb(255, 0, 0))
                .bg(Color::Black)
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(t.style(Role::Text), base.style(Role::Text));
        assert_eq!(t.style(Role::Warning), base.style(Role::Warning));
        assert_eq!(t.syntax.name.as_deref(), Some("GitHub"));
        assert!(
            t.warnings.iter().any(|w| w.starts_with("eror:")),
            "{:?}",
            t.warnings
        );
        assert!(
            t.warnings.iter().any(|w| w.starts_with("warning:")),
            "{:?}",
            t.warnings
        );
        assert!(base.clone().with_toml("error = ").is_err());
        let e = base.with_toml("error = \"\u{1b}]0;x\u{7}\"").unwrap_err();
        assert!(e.contains('␛') && !e.contains('\u{1b}'), "{e:?}");
    }
}
