//! OpenCode's theme format (the V1 JSON document), read as OpenCode reads
//! it: `defs` names colours, `theme` gives each of OpenCode's keys a value
//! that is a hex colour, a def name, another theme key, an ANSI index
//! 0–255, `none`/`transparent`, or `{"dark": …, "light": …}`. Each key
//! resolves on its own, so one bad entry is a warning naming it, never a
//! theme that fails to load.

use std::collections::HashMap;

use ratatui::style::Color;
use serde_json::{Map, Value};

use crate::model::wire::sanitize;

/// Which variant of a `{"dark": …, "light": …}` value to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    #[default]
    Dark,
    Light,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Dark => "dark",
            Mode::Light => "light",
        }
    }
}

/// Every colour key OpenCode's themes may set.
pub const KEYS: &[&str] = &[
    "primary",
    "secondary",
    "accent",
    "error",
    "warning",
    "success",
    "info",
    "text",
    "textMuted",
    "selectedListItemText",
    "background",
    "backgroundPanel",
    "backgroundElement",
    "backgroundMenu",
    "border",
    "borderActive",
    "borderSubtle",
    "diffAdded",
    "diffRemoved",
    "diffContext",
    "diffHunkHeader",
    "diffHighlightAdded",
    "diffHighlightRemoved",
    "diffAddedBg",
    "diffRemovedBg",
    "diffContextBg",
    "diffLineNumber",
    "diffAddedLineNumberBg",
    "diffRemovedLineNumberBg",
    "markdownText",
    "markdownHeading",
    "markdownLink",
    "markdownLinkText",
    "markdownCode",
    "markdownBlockQuote",
    "markdownEmph",
    "markdownStrong",
    "markdownHorizontalRule",
    "markdownListItem",
    "markdownListEnumeration",
    "markdownImage",
    "markdownImageText",
    "markdownCodeBlock",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
];

/// Keys OpenCode accepts that are not colours.
const NON_COLOR_KEYS: &[&str] = &["thinkingOpacity"];

/// A theme's keys resolved for one mode. `None` as a value is transparent:
/// the terminal's own colour.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    colors: HashMap<&'static str, Option<Color>>,
}

impl Palette {
    /// The key's colour, if the theme set it and it resolved.
    pub fn get(&self, key: &str) -> Option<Option<Color>> {
        self.colors.get(key).copied()
    }

    pub fn has_background(&self) -> bool {
        matches!(self.get("background"), Some(Some(_)))
    }
}

/// A document that is not a JSON object at all cannot be a theme; anything
/// wrong inside one is a warning and the key is left out (the caller falls
/// back for it).
pub fn parse(text: &str, mode: Mode) -> Result<(Palette, Vec<String>), String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(doc) = doc else {
        return Err("not a JSON object".into());
    };
    let mut warnings = Vec::new();
    for key in doc.keys() {
        if !matches!(key.as_str(), "$schema" | "defs" | "theme") {
            warnings.push(format!("{}: unknown key", sanitize::line(key)));
        }
    }
    let empty = Map::new();
    let defs = match doc.get("defs") {
        Some(Value::Object(d)) => d,
        None => &empty,
        Some(_) => {
            warnings.push("defs: not an object".into());
            &empty
        }
    };
    let theme = match doc.get("theme") {
        Some(Value::Object(t)) => t,
        _ => return Err("no \"theme\" object".into()),
    };
    let resolver = Resolver { defs, theme, mode };
    let mut palette = Palette::default();
    for (key, value) in theme {
        let Some(&known) = KEYS.iter().find(|k| **k == key) else {
            if !NON_COLOR_KEYS.contains(&key.as_str()) {
                warnings.push(format!("theme.{}: unknown key", sanitize::line(key)));
            }
            continue;
        };
        match resolver.resolve(key, value) {
            Ok(color) => {
                palette.colors.insert(known, color);
            }
            Err(e) => warnings.push(format!("theme.{key}: {e}")),
        }
    }
    if warnings.len() > MAX_WARNINGS {
        let more = warnings.len() - MAX_WARNINGS;
        warnings.truncate(MAX_WARNINGS);
        warnings.push(format!("… and {more} more"));
    }
    Ok((palette, warnings))
}

/// The most references one value follows before it is given up. OpenCode's
/// own themes go two or three deep; the limit keeps a hostile file (a
/// project's `.opencode/themes` comes with the repository) to a bounded
/// amount of work per key, so a whole theme resolves in time linear in it.
pub const MAX_REFERENCES: usize = 64;

/// Warnings kept per theme: each is logged, and a file of a hundred
/// thousand broken keys must not become a hundred thousand log lines.
const MAX_WARNINGS: usize = 100;

struct Resolver<'a> {
    defs: &'a Map<String, Value>,
    theme: &'a Map<String, Value>,
    mode: Mode,
}

impl<'a> Resolver<'a> {
    /// Follow `value` (the theme's entry for `key`) to a colour, one step at
    /// a time: no recursion, so no chain can overflow the stack. A value met
    /// twice is a loop; more than `MAX_REFERENCES` names is too deep.
    fn resolve(&self, key: &'a str, mut value: &'a Value) -> Result<Option<Color>, String> {
        // The names followed, for the messages, and the values they led to
        // (by address: the same entry, however it was reached).
        let mut names: Vec<&'a str> = vec![key];
        let mut seen: Vec<*const Value> = vec![value];
        loop {
            match value {
                Value::String(s) if s == "none" || s == "transparent" => return Ok(None),
                Value::String(s) if s.starts_with('#') => return hex(s).map(Some),
                Value::String(name) => {
                    // A def wins over a theme key of the same name, as in OpenCode.
                    let target = self
                        .defs
                        .get(name)
                        .or_else(|| self.theme.get(name))
                        .ok_or_else(|| format!("unknown colour {:?}", short(name)))?;
                    names.push(name);
                    if seen.contains(&(target as *const Value)) {
                        return Err(format!("reference loop {}", chain(&names)));
                    }
                    if names.len() > MAX_REFERENCES {
                        return Err(format!(
                            "more than {MAX_REFERENCES} references deep ({})",
                            chain(&names)
                        ));
                    }
                    seen.push(target);
                    value = target;
                }
                Value::Number(n) => {
                    return match n.as_u64() {
                        Some(i) if i <= 255 => Ok(Some(Color::Indexed(i as u8))),
                        _ => Err(format!("ANSI colour {n} is not 0–255")),
                    };
                }
                // Nested at most as deep as serde_json reads (128).
                Value::Object(variants) => {
                    value = variants
                        .get(self.mode.name())
                        .ok_or_else(|| format!("no {:?} variant", self.mode.name()))?;
                }
                other => return Err(format!("not a colour: {}", kind(other))),
            }
        }
    }
}

/// A name as a message shows it: inert, and not a whole line of it.
fn short(name: &str) -> String {
    const MAX_CHARS: usize = 40;
    let clean = sanitize::line(name);
    if clean.chars().count() <= MAX_CHARS {
        return clean.into_owned();
    }
    let mut s: String = clean.chars().take(MAX_CHARS - 1).collect();
    s.push('…');
    s
}

/// `a -> b -> c`, the middle left out of a long chain.
fn chain(names: &[&str]) -> String {
    const ENDS: usize = 3;
    let shown: Vec<String> = if names.len() <= 2 * ENDS + 1 {
        names.iter().map(|n| short(n)).collect()
    } else {
        let head = names[..ENDS].iter().map(|n| short(n));
        let tail = names[names.len() - ENDS..].iter().map(|n| short(n));
        head.chain(std::iter::once("…".to_string()))
            .chain(tail)
            .collect()
    };
    shown.join(" -> ")
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Array(_) => "an array",
        _ => "a value",
    }
}

/// `#rgb`, `#rrggbb` or `#rrggbbaa` (the alpha is dropped: a terminal cell
/// has none).
fn hex(s: &str) -> Result<Color, String> {
    let digits = &s[1..];
    let bad = || format!("bad colour {:?}", sanitize::line(s));
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let byte = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| bad());
    match digits.len() {
        3 => {
            let nib = |i: usize| {
                u8::from_str_radix(&digits[i..i + 1], 16)
                    .map(|v| v * 17)
                    .map_err(|_| bad())
            };
            Ok(Color::Rgb(nib(0)?, nib(1)?, nib(2)?))
        }
        6 | 8 => Ok(Color::Rgb(byte(0)?, byte(2)?, byte(4)?)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(theme: &str, mode: Mode) -> (Palette, Vec<String>) {
        parse(theme, mode).unwrap()
    }

    #[test]
    fn every_value_form_resolves() {
        let doc = r##"{
          "$schema": "https://opencode.ai/theme.json",
          "defs": { "red": "#ff0000", "pair": { "dark": "red", "light": "#fff" } },
          "theme": {
            "error": "red",
            "primary": "pair",
            "secondary": "error",
            "accent": 33,
            "background": "none",
            "backgroundPanel": "transparent",
            "text": "#12345678",
            "thinkingOpacity": 0.6
          }
        }"##;
        let (dark, warnings) = one(doc, Mode::Dark);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(dark.get("error"), Some(Some(Color::Rgb(255, 0, 0))));
        assert_eq!(dark.get("primary"), Some(Some(Color::Rgb(255, 0, 0))));
        assert_eq!(dark.get("secondary"), Some(Some(Color::Rgb(255, 0, 0))));
        assert_eq!(dark.get("accent"), Some(Some(Color::Indexed(33))));
        assert_eq!(dark.get("background"), Some(None));
        assert_eq!(dark.get("backgroundPanel"), Some(None));
        assert_eq!(dark.get("text"), Some(Some(Color::Rgb(0x12, 0x34, 0x56))));
        assert_eq!(dark.get("info"), None);
        let (light, _) = one(doc, Mode::Light);
        assert_eq!(light.get("primary"), Some(Some(Color::Rgb(255, 255, 255))));
    }

    #[test]
    fn bad_entries_are_warnings_naming_the_key() {
        let doc = r##"{
          "defs": { "a": "b", "b": "a" },
          "theme": {
            "error": "a",
            "warning": "#ggg000",
            "success": "nosuchcolour",
            "info": 300,
            "text": { "light": "#fff" },
            "primry": "#ff0000",
            "primary": "#00ff00"
          },
          "extra": 1
        }"##;
        let (p, warnings) = one(doc, Mode::Dark);
        let has = |prefix: &str, what: &str| {
            warnings
                .iter()
                .any(|w| w.starts_with(prefix) && w.contains(what))
        };
        assert!(
            has("theme.error:", "reference loop error -> a -> b -> a"),
            "{warnings:?}"
        );
        assert!(has("theme.warning:", "bad colour"), "{warnings:?}");
        assert!(has("theme.success:", "unknown colour"), "{warnings:?}");
        assert!(has("theme.info:", "0–255"), "{warnings:?}");
        assert!(has("theme.text:", "no \"dark\" variant"), "{warnings:?}");
        assert!(has("theme.primry:", "unknown key"), "{warnings:?}");
        assert!(has("extra:", "unknown key"), "{warnings:?}");
        assert_eq!(warnings.len(), 7, "{warnings:?}");
        // The good key still loads; the bad ones are left for a fallback.
        assert_eq!(p.get("primary"), Some(Some(Color::Rgb(0, 255, 0))));
        assert_eq!(p.get("error"), None);
        assert!(parse("[1]", Mode::Dark).is_err());
        assert!(parse("{ \"theme\": ", Mode::Dark).is_err());
    }

    /// A `defs` chain of `n` references ending in a colour: `c0 -> c1 ->
    /// … -> c{n-1} -> #ff0000`, with `primary` pointing at its start.
    fn chain_theme(n: usize, cycle: bool) -> String {
        let mut defs: Vec<String> = (0..n).map(|i| format!("\"c{i}\":\"c{}\"", i + 1)).collect();
        let end = if cycle { "c0" } else { "#ff0000" };
        defs.push(format!("\"c{n}\":\"{end}\""));
        format!(
            "{{\"defs\":{{{}}},\"theme\":{{\"primary\":\"c0\",\"error\":\"#00ff00\"}}}}",
            defs.join(",")
        )
    }

    #[test]
    fn a_long_chain_or_a_long_loop_is_a_warning_not_a_crash() {
        // Resolved by recursion, 100,000 references overflow the stack (an
        // abort: no panic hook, no terminal restored) after a quadratic walk.
        for cycle in [false, true] {
            let (p, warnings) = one(&chain_theme(100_000, cycle), Mode::Dark);
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            let w = &warnings[0];
            assert!(
                w.starts_with(
                    "theme.primary: more than 64 references deep (primary -> c0 -> c1 -> … ->"
                ),
                "{w}"
            );
            assert!(w.len() < 200, "{w}");
            assert_eq!(p.get("primary"), None);
            assert_eq!(p.get("error"), Some(Some(Color::Rgb(0, 255, 0))));
        }
        // Within the limit, a chain resolves and a loop is named.
        let (p, warnings) = one(&chain_theme(MAX_REFERENCES - 2, false), Mode::Dark);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(p.get("primary"), Some(Some(Color::Rgb(255, 0, 0))));
        let (_, warnings) = one(&chain_theme(10, true), Mode::Dark);
        assert_eq!(
            warnings,
            ["theme.primary: reference loop primary -> c0 -> c1 -> … -> c9 -> c10 -> c0"]
        );
    }

    #[test]
    fn a_def_may_share_its_name_with_the_key_that_uses_it() {
        let doc = r##"{"defs": {"error": "#ff0000"}, "theme": {"error": "error"}}"##;
        let (p, warnings) = one(doc, Mode::Dark);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(p.get("error"), Some(Some(Color::Rgb(255, 0, 0))));
    }

    #[test]
    fn warnings_are_capped_and_names_in_them_shortened() {
        let keys: Vec<String> = (0..1000).map(|i| format!("\"bogus{i}\": 1")).collect();
        let doc = format!("{{\"theme\": {{{}}}}}", keys.join(","));
        let (_, warnings) = one(&doc, Mode::Dark);
        assert_eq!(warnings.len(), MAX_WARNINGS + 1);
        assert_eq!(warnings.last().unwrap(), "… and 900 more");
        let long = "x".repeat(10_000);
        let doc = format!("{{\"theme\": {{\"error\": \"{long}\"}}}}");
        let (_, warnings) = one(&doc, Mode::Dark);
        assert!(warnings[0].len() < 100, "{warnings:?}");
    }
}
