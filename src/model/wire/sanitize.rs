//! The one sanitizer for untrusted text (server data, recordings).
//!
//! Nothing from the data may reach the terminal as a control sequence. C0 and
//! C1 controls and DEL become visible Unicode control pictures (so `ESC [2J`
//! shows as `␛[2J` and does nothing), tabs become spaces, and bidi overrides
//! and isolates, which can make text read differently from what it is, are
//! dropped. Zero-width joiners stay: emoji sequences need them.

use std::borrow::Cow;

const TAB_WIDTH: usize = 4;

fn needs_change(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || is_separator(c)
}

/// U+2028 and U+2029 end a line in some readers (notifications, editors,
/// JavaScript) without being a newline anywhere else.
fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Characters that change how text reads without showing: bidi
/// embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069,
/// U+200E/U+200F, U+061C), and invisible zero-width spaces (U+200B, U+2060,
/// U+FEFF). Joiners (U+200C/U+200D) stay: scripts and emoji need them.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{061C}'
            | '\u{200B}'
            | '\u{2060}'
            | '\u{FEFF}'
    )
}

/// A visible stand-in for a control character.
fn picture(c: char) -> char {
    match c as u32 {
        0x00..=0x1F => char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'),
        0x7F => '\u{2421}',
        _ => '\u{FFFD}',
    }
}

/// Sanitize one line: no newline survives either (it becomes `␊`).
pub fn line(text: &str) -> Cow<'_, str> {
    clean(text, false)
}

/// Sanitize a block of text, keeping its line breaks (`\r\n` and `\n`).
pub fn block(text: &str) -> Cow<'_, str> {
    clean(text, true)
}

/// Make serialised JSON inert without changing its value: serde_json
/// escapes C0 controls but writes DEL, C1 controls and bidi controls raw;
/// they can only stand inside strings, where `\uXXXX` means the same.
pub fn json(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c != '\n' && needs_change(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Every string of a JSON value (keys too) made inert as `line` makes it:
/// what `--json` prints is read by scripts that print it again (`jq -r`
/// turns an escaped `\u001b` back into ESC).
pub fn json_value(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(clean) = line(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json_value),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                json_value(&mut item);
                map.insert(line(&key).into_owned(), item);
            }
        }
        _ => {}
    }
}

/// Remove the control strings a terminal would swallow whole: OSC (titles,
/// OSC 8 hyperlinks), DCS, SOS, PM and APC, in their 7-bit (`ESC ]`) and
/// C1 (`U+009D`) forms, each up to its terminator: BEL, `ESC \` or `U+009C`
/// (ST). Tools print them (`ls --hyperlink`, gcc, cargo); what they wrap
/// is ordinary text and stays. A string with no terminator loses only its
/// introducer, so the text after it still shows (made inert by `line`).
/// Colours (CSI) are left for the ANSI parser.
pub fn strip_control_strings(text: &str) -> Cow<'_, str> {
    fn introducer(rest: &str) -> Option<usize> {
        let mut chars = rest.chars();
        match chars.next()? {
            '\u{1b}' => matches!(chars.next()?, ']' | 'P' | 'X' | '^' | '_').then_some(2),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => Some(2),
            _ => None,
        }
    }
    /// The length of the string's body and of its terminator.
    fn terminator(body: &str) -> Option<(usize, usize)> {
        let mut it = body.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            match c {
                '\u{7}' => return Some((i, 1)),
                '\u{9c}' => return Some((i, 2)),
                '\u{1b}' if it.peek().map(|&(_, n)| n) == Some('\\') => return Some((i, 2)),
                _ => {}
            }
        }
        None
    }
    if !text.contains(['\u{1b}', '\u{9d}', '\u{90}', '\u{98}', '\u{9e}', '\u{9f}']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['\u{1b}', '\u{9d}', '\u{90}', '\u{98}', '\u{9e}', '\u{9f}']) {
        out.push_str(&rest[..at]);
        let here = &rest[at..];
        match introducer(here) {
            Some(len) => match terminator(&here[len..]) {
                Some((body, end)) => rest = &here[len + body + end..],
                None => rest = &here[len..],
            },
            None => {
                // An escape that starts no control string (CSI colours).
                let c = here.chars().next().map_or(1, char::len_utf8);
                out.push_str(&here[..c]);
                rest = &here[c..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Text for the clipboard, a pager or an editor: every escape sequence
/// is removed whole (control strings, CSI such as colours, and two-byte
/// `ESC x`), newlines and tabs stay, `\r\n` becomes `\n`, any other
/// control character becomes its visible picture and bidi controls go.
/// What remains holds no control character but newline and tab.
pub fn plain(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c != '\n' && c != '\t' && needs_change(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let text = strip_control_strings(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => {}
            // CSI: parameters and intermediates up to a final byte.
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                while let Some(&n) = chars.peek() {
                    chars.next();
                    if ('\u{40}'..='\u{7e}').contains(&n) {
                        break;
                    }
                }
            }
            '\u{9b}' => {
                while let Some(&n) = chars.peek() {
                    chars.next();
                    if ('\u{40}'..='\u{7e}').contains(&n) {
                        break;
                    }
                }
            }
            // `ESC x`: one more character (charset selection takes two).
            '\u{1b}' => {
                if let Some(n) = chars.next()
                    && matches!(n, '(' | ')' | '*' | '+' | '#' | '%')
                {
                    chars.next();
                }
            }
            c if is_bidi_control(c) => {}
            c if c.is_control() => out.push(picture(c)),
            c if is_separator(c) => out.push('\u{2424}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn clean(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !text.chars().any(needs_change) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut column = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' if keep_newlines => {
                out.push('\n');
                column = 0;
                continue;
            }
            '\r' if keep_newlines && chars.peek() == Some(&'\n') => continue,
            '\t' => {
                let n = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
                continue;
            }
            c if is_bidi_control(c) => continue,
            c if c.is_control() => out.push(picture(c)),
            // The picture of a newline: it shows where the break was.
            c if is_separator(c) => out.push('\u{2424}'),
            c => out.push(c),
        }
        column += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_paragraph_separators_show_as_marks_everywhere() {
        for text in ["a\u{2028}b", "a\u{2029}b"] {
            assert_eq!(line(text), "a\u{2424}b");
            assert_eq!(block(text), "a\u{2424}b");
            assert_eq!(plain(text), "a\u{2424}b");
            assert!(json(&format!("\"{text}\"")).is_ascii());
        }
    }

    #[test]
    fn every_string_of_a_json_value_is_made_inert() {
        let mut v = serde_json::json!({
            "title\u{1b}]52;c;eA==\u{7}": ["\u{9b}31m", "ok", 3, {"name": "\u{202e}gpj.exe\u{2028}"}],
        });
        json_value(&mut v);
        let text = v.to_string();
        let raw = serde_json::from_str::<serde_json::Value>(&text)
            .unwrap()
            .to_string();
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{2028}'] {
            assert!(!raw.contains(bad), "{bad:?} in {raw}");
            assert!(!format!("{v:?}").contains(bad), "{bad:?} in {v:?}");
        }
        assert!(text.contains("\"ok\"") && text.contains('3'));
    }

    #[test]
    fn control_strings_go_and_their_text_stays() {
        let st = "\u{1b}]8;;file:///src/main.rs\u{1b}\\main.rs\u{1b}]8;;\u{1b}\\ ok";
        assert_eq!(strip_control_strings(st), "main.rs ok");
        let bel = "\u{1b}]8;;https://x\u{7}link\u{1b}]8;;\u{7} after";
        assert_eq!(strip_control_strings(bel), "link after");
        let c1 = "\u{9d}0;title\u{9c}text \u{90}q\u{1b}\\dcs \u{1b}_apc\u{7}end";
        assert_eq!(strip_control_strings(c1), "text dcs end");
        // Colours are kept for the ANSI parser; an unterminated string
        // loses only its introducer.
        assert_eq!(
            strip_control_strings("\u{1b}[31mred\u{1b}[0m \u{1b}]0;never ends"),
            "\u{1b}[31mred\u{1b}[0m 0;never ends"
        );
        assert!(matches!(strip_control_strings("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn plain_keeps_newlines_and_tabs_and_drops_every_escape() {
        let s = "\u{1b}[1;31mred\u{1b}[0m\tx\r\ny\u{1b}]52;c;ZXZpbA==\u{7}z\u{1b}(Bq\u{9b}2Jw\u{7}\u{202e}";
        let p = plain(s);
        assert_eq!(p, "red\tx\nyzqw␇");
        assert!(!p.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        assert!(matches!(plain("a\tb\nc"), Cow::Borrowed(_)));
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(line("héllo 🙂"), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_become_visible_and_inert() {
        let s = line("a\u{1b}[2Jb\u{1b}]0;title\u{7}c\u{9b}d\u{7f}");
        assert!(!s.chars().any(|c| c.is_control()));
        assert_eq!(s, "a␛[2Jb␛]0;title␇c\u{FFFD}d␡");
    }

    #[test]
    fn tabs_expand_and_bidi_is_dropped() {
        assert_eq!(line("ab\tc"), "ab  c");
        assert_eq!(line("x\u{202E}y\u{2066}z\u{200B}\u{200F}!"), "xyz!");
        assert_eq!(line("👩\u{200D}👧"), "👩\u{200D}👧");
        assert_eq!(block("a\r\nb\nc"), "a\nb\nc");
        assert_eq!(line("a\nb"), "a␊b");
    }

    #[test]
    fn json_stays_the_same_value_without_raw_controls() {
        let value = serde_json::json!({"t": "a\u{9b}31m\u{7f}\u{202e}b\n\u{1b}"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let inert = json(&text);
        assert!(
            !inert.chars().any(|c| c != '\n' && needs_change(c)),
            "{inert}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&inert).unwrap(),
            value
        );
    }
}
