//! Wrapping styled text to a width, by display width and grapheme clusters,
//! so wide characters (CJK, emoji) and combining marks never split or
//! overflow. Breaks at spaces when it can, inside a word when it must.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Display width of a string, as the terminal will draw it.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Wrap one logical line made of styled pieces into lines of at most
/// `width` columns. `indent` is prefixed to continuation lines.
pub fn wrap_spans(pieces: &[(String, Style)], width: usize, indent: &str) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent_w = self::width(indent).min(width.saturating_sub(1));
    let mut out = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut col = 0usize;
    // The current word, not yet placed: graphemes with their style.
    let mut word: Vec<(&str, Style, usize)> = Vec::new();
    let mut word_w = 0usize;

    let flush_line = |line: &mut Vec<Span<'static>>, out: &mut Vec<Line<'static>>| {
        out.push(Line::from(std::mem::take(line)));
    };
    let push = |line: &mut Vec<Span<'static>>, g: &str, style: Style| match line.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(g),
        _ => line.push(Span::styled(g.to_string(), style)),
    };

    let place_word = |word: &mut Vec<(&str, Style, usize)>,
                      word_w: &mut usize,
                      line: &mut Vec<Span<'static>>,
                      col: &mut usize,
                      out: &mut Vec<Line<'static>>| {
        if word.is_empty() {
            return;
        }
        if *col + *word_w > width && *col > indent_w {
            // Move the word to a new line, dropping the spaces before it.
            trim_trailing_spaces(line);
            flush_line(line, out);
            *col = 0;
            if indent_w > 0 {
                push(line, indent, Style::default());
                *col = indent_w;
            }
        }
        for &(g, style, w) in word.iter() {
            if *col + w > width && *col > indent_w {
                flush_line(line, out);
                *col = 0;
                if indent_w > 0 {
                    push(line, indent, Style::default());
                    *col = indent_w;
                }
            }
            if *col + w > width {
                // A grapheme wider than the whole line: show a stand-in.
                push(line, "…", style);
                *col += 1;
                continue;
            }
            push(line, g, style);
            *col += w;
        }
        word.clear();
        *word_w = 0;
    };

    for (text, style) in pieces {
        for g in text.graphemes(true) {
            let w = self::width(g);
            if g == " " {
                place_word(&mut word, &mut word_w, &mut line, &mut col, &mut out);
                if col < width {
                    push(&mut line, " ", *style);
                    col += 1;
                }
                continue;
            }
            word.push((g, *style, w));
            word_w += w;
        }
    }
    place_word(&mut word, &mut word_w, &mut line, &mut col, &mut out);
    trim_trailing_spaces(&mut line);
    out.push(Line::from(line));
    out
}

/// Wrap plain text (which may hold newlines) in one style.
pub fn wrap_text(text: &str, style: Style, width: usize, indent: &str) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for logical in text.split('\n') {
        out.extend(wrap_spans(&[(logical.to_string(), style)], width, indent));
    }
    out
}

fn trim_trailing_spaces(line: &mut Vec<Span<'static>>) {
    while let Some(last) = line.last_mut() {
        let trimmed = last.content.trim_end_matches(' ').len();
        if trimmed == 0 {
            line.pop();
        } else {
            last.content.to_mut().truncate(trimmed);
            break;
        }
    }
}

/// Cut a string to at most `max` columns, ending with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for g in s.graphemes(true) {
        let gw = width(g);
        if w + gw + 1 > max {
            break;
        }
        out.push_str(g);
        w += gw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// Cut a string to at most `max` columns from its start, beginning with
/// `…` when cut: for paths, whose end names them.
pub fn truncate_start(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut kept = Vec::new();
    let mut w = 0;
    for g in s.graphemes(true).rev() {
        let gw = width(g);
        if w + gw + 1 > max {
            break;
        }
        kept.push(g);
        w += gw;
    }
    let mut out = String::from(if max > 0 { "…" } else { "" });
    out.extend(kept.into_iter().rev());
    out
}

/// Cut an address to at most `max` columns in its middle, keeping a
/// trailing `:port` (and what follows it, as a `)`) whole: two servers on
/// one host differ by their port alone. Too narrow even for the port, it
/// is cut at its start like a path.
pub fn truncate_address(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let port_at = s.rfind(':').filter(|&i| {
        let rest = s[i + 1..].trim_end_matches(')');
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    });
    let Some(i) = port_at else {
        return truncate_middle(s, max);
    };
    let (host, port) = s.split_at(i);
    if width(port) + 2 > max {
        return truncate_start(s, max);
    }
    format!("{}{port}", truncate_middle(host, max - width(port)))
}

/// Cut to at most `max` columns by taking out the middle: `long…name`.
pub fn truncate_middle(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max < 3 {
        return truncate(s, max);
    }
    let head = truncate(s, (max - 1).div_ceil(2) + 1);
    let head = head.trim_end_matches('…');
    let tail = truncate_start(s, (max - 1) / 2 + 1);
    let tail = tail.trim_start_matches('…');
    format!("{head}…{tail}")
}

/// Styled pieces cut to at most `max` columns, ending with `…` (in the
/// style of the piece it cuts) when cut: the spans and their width.
pub fn truncate_pieces(pieces: &[(String, Style)], max: usize) -> (Vec<Span<'static>>, usize) {
    let total: usize = pieces.iter().map(|(t, _)| width(t)).sum();
    let keep = |t: &str, s: Style| (!t.is_empty()).then(|| Span::styled(t.to_string(), s));
    if total <= max {
        return (
            pieces.iter().filter_map(|(t, s)| keep(t, *s)).collect(),
            total,
        );
    }
    let mut out = Vec::new();
    let mut used = 0;
    for (text, style) in pieces {
        let mut kept = String::new();
        for g in text.graphemes(true) {
            let gw = width(g);
            if used + gw + 1 > max {
                out.extend(keep(&kept, *style));
                if max > 0 {
                    out.push(Span::styled("…", *style));
                    used += 1;
                }
                return (out, used);
            }
            kept.push_str(g);
            used += gw;
        }
        out.extend(keep(&kept, *style));
    }
    (out, used)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_address_keeps_its_port_whole_and_loses_its_middle() {
        let name = "build-server.internal.example.com:4096";
        assert_eq!(truncate_address(name, 80), name);
        let cut = truncate_address(name, 20);
        assert_eq!(width(&cut), 20);
        assert!(
            cut.starts_with("build-") && cut.ends_with("com:4096"),
            "{cut}"
        );
        assert!(cut.contains('…'));
        // A named server: "name (host:port)".
        let cut = truncate_address("ci (ci-runner-7.example.org:41000)", 24);
        assert!(cut.ends_with(":41000)") && width(&cut) == 24, "{cut}");
        // Without a port the middle goes all the same.
        assert_eq!(truncate_address("abcdefghij", 5), "ab…ij");
        assert_eq!(width(&truncate_address("h:4096", 3)), 3);
    }

    use super::*;

    #[test]
    fn pieces_are_cut_to_the_columns_with_an_ellipsis_in_the_cut_style() {
        let a = Style::default().fg(ratatui::style::Color::Red);
        let b = Style::default().fg(ratatui::style::Color::Blue);
        let pieces = [("ab".to_string(), a), ("漢字x".to_string(), b)];
        let (spans, w) = truncate_pieces(&pieces, 10);
        assert_eq!(w, 7, "everything fits");
        assert_eq!(spans.len(), 2);
        let (spans, w) = truncate_pieces(&pieces, 5);
        let text: Vec<(&str, Style)> = spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style))
            .collect();
        // `字` would end at column 6: cut before it, `…` in its piece's style.
        assert_eq!(text, [("ab", a), ("漢", b), ("…", b)]);
        assert_eq!(w, 5);
        assert_eq!(truncate_pieces(&pieces, 0), (Vec::new(), 0));
    }

    fn plain(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_spaces_and_breaks_long_words() {
        let lines = wrap_text("the quick brown fox", Style::default(), 10, "");
        assert_eq!(plain(&lines), ["the quick", "brown fox"]);
        let lines = wrap_text("abcdefghijkl", Style::default(), 5, "");
        assert_eq!(plain(&lines), ["abcde", "fghij", "kl"]);
    }

    #[test]
    fn wide_and_combining_characters_never_overflow() {
        for w in 1..12 {
            for text in [
                "日本語のテキストです",
                "e\u{301}e\u{301}e\u{301} 👩‍👩‍👧 ok",
                "a👍b👍c👍d",
            ] {
                for line in wrap_text(text, Style::default(), w, "") {
                    let lw: usize = line.spans.iter().map(|s| width(&s.content)).sum();
                    assert!(lw <= w.max(1), "{text:?} at {w}: {line:?}");
                }
            }
        }
        // A combining mark stays with its letter.
        let lines = wrap_text("e\u{301}e\u{301}", Style::default(), 1, "");
        assert_eq!(plain(&lines), ["e\u{301}", "e\u{301}"]);
    }

    #[test]
    fn continuation_lines_are_indented_and_styles_kept() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let lines = wrap_spans(
            &[("aa bb ".into(), Style::default()), ("cc dd".into(), bold)],
            6,
            "  ",
        );
        assert_eq!(plain(&lines), ["aa bb", "  cc", "  dd"]);
        assert_eq!(lines[1].spans.last().unwrap().style, bold);
    }

    #[test]
    fn truncates_by_width() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("日本語", 4), "日…");
        assert_eq!(truncate_start("/home/me/proj", 8), "…me/proj");
        assert_eq!(truncate_start("/p/日本語", 5), "…本語");
        assert_eq!(truncate_start("/p/日本語", 4), "…語");
        assert_eq!(truncate_start("/p/e\u{301}", 2), "…e\u{301}");
        assert_eq!(truncate_start("/p", 2), "/p");
    }
}
