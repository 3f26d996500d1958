//! Code colours from a theme's `syntax*` keys: a small syntect theme whose
//! scope rules give each kind of token its OpenCode key, so code blocks,
//! written files and diffs follow the chosen theme.

use std::str::FromStr;
use std::sync::Arc;

use ratatui::style::Color;
use syntect::highlighting::{
    Color as SynColor, FontStyle, ScopeSelectors, StyleModifier, Theme, ThemeItem, ThemeSettings,
};

use crate::render::theme::roles::Lookup;

/// The syntect theme code is highlighted with.
pub type SyntaxTheme = Arc<Theme>;

/// Scope selectors (TextMate names, as bat's grammars use them) and the
/// keys they take their colour from, most specific first.
const RULES: &[(&str, &[&str], bool)] = &[
    (
        "comment, punctuation.definition.comment",
        &["syntaxComment", "textMuted"],
        true,
    ),
    (
        "string, punctuation.definition.string",
        &["syntaxString", "success"],
        false,
    ),
    (
        "constant.numeric, constant.language, constant.character",
        &["syntaxNumber", "warning"],
        false,
    ),
    (
        "constant.other, support.constant, variable.language",
        &["syntaxNumber", "warning"],
        false,
    ),
    ("keyword.operator", &["syntaxOperator", "secondary"], false),
    (
        "keyword, storage.modifier, storage.type.function, storage.type.class",
        &["syntaxKeyword", "accent"],
        false,
    ),
    (
        "entity.name.function, support.function, meta.function-call variable.function",
        &["syntaxFunction", "primary"],
        false,
    ),
    (
        "entity.name.type, entity.name.class, support.type, support.class, storage.type, entity.other.inherited-class",
        &["syntaxType", "info"],
        false,
    ),
    // Tables of TOML, sections of INI.
    (
        "entity.name.table, entity.name.section, entity.name.namespace",
        &["syntaxType", "info"],
        false,
    ),
    // Keys of TOML, YAML and JSON, and markup tags.
    (
        "entity.name.tag, support.type.property-name, variable.other.key, meta.mapping.key, keyword.other.definition, entity.other.attribute-name",
        &["syntaxVariable", "text"],
        false,
    ),
    (
        "variable, support.variable",
        &["syntaxVariable", "text"],
        false,
    ),
    (
        "punctuation, meta.brace",
        &["syntaxPunctuation", "text"],
        false,
    ),
    ("markup.heading", &["markdownHeading", "primary"], false),
    ("markup.inserted", &["diffAdded", "success"], false),
    ("markup.deleted", &["diffRemoved", "error"], false),
];

/// A ratatui colour as syntect carries it. syntect has no ANSI colours, so
/// an index rides in `r` with alpha 0, as bat does for its ANSI theme; the
/// terminal's own colour is alpha 1. `highlight::convert` reads both back.
pub fn encode(c: Option<Color>) -> SynColor {
    match c {
        Some(Color::Rgb(r, g, b)) => SynColor { r, g, b, a: 0xff },
        Some(Color::Indexed(i)) => SynColor {
            r: i,
            g: 0,
            b: 0,
            a: 0,
        },
        _ => SynColor {
            r: 0,
            g: 0,
            b: 0,
            a: 1,
        },
    }
}

pub fn build(name: &str, p: &Lookup) -> SyntaxTheme {
    let scopes = RULES
        .iter()
        .filter_map(|(selector, keys, italic)| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selector).ok()?,
                style: StyleModifier {
                    foreground: Some(encode(p.color(keys))),
                    background: None,
                    font_style: italic.then_some(FontStyle::ITALIC),
                },
            })
        })
        .collect();
    Arc::new(Theme {
        name: Some(name.to_string()),
        author: None,
        settings: ThemeSettings {
            foreground: Some(encode(p.color(&["markdownCodeBlock", "text"]))),
            ..Default::default()
        },
        scopes,
    })
}

/// One of syntect's own themes (the `syntax = "…"` key of an ocview TOML
/// theme).
pub fn named(name: &str) -> Option<SyntaxTheme> {
    syntect::highlighting::ThemeSet::load_defaults()
        .themes
        .remove(name)
        .map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::highlight::{Highlighter, Lookup};
    use crate::render::theme::Theme;

    #[test]
    fn every_rule_parses() {
        for (selector, _, _) in RULES {
            assert!(ScopeSelectors::from_str(selector).is_ok(), "{selector}");
        }
    }

    #[test]
    fn toml_tables_keys_and_strings_differ() {
        let theme = Theme::default();
        let h = Highlighter::blocking(&theme.syntax);
        let Lookup::Ready(lines) = h.lookup("toml", "[package]\nname = \"x\"\n") else {
            panic!("toml")
        };
        let fg = |line: usize, text: &str| {
            lines[line]
                .iter()
                .find(|(t, _)| t.contains(text))
                .unwrap_or_else(|| panic!("{text} in {lines:?}"))
                .1
                .fg
        };
        assert_ne!(fg(0, "package"), fg(0, "["), "{lines:?}");
        assert_ne!(fg(1, "name"), fg(1, "x"));
    }
}
