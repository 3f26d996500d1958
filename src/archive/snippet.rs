//! Snippets made from a hit's text: the index keeps no copy of the text
//! (SQLite's FTS5 index is contentless), so the text is taken again from
//! the part's raw JSON — the same text `collect` indexed — and the words
//! searched for are found in it as FTS5's `unicode61` tokenizer splits it
//! (runs of letters and digits, case folded).

use serde_json::Value;

use crate::archive::collect_rows::strings;

use crate::archive::query::{MARK_END, MARK_START, Term, unmarked};

/// Tokens shown around the first match (as FTS5's `snippet(…, 16)`).
const WINDOW: usize = 16;

/// The text a part was indexed by, from its raw JSON (`collect::part_row`
/// made it from the same fields).
pub fn text_of_part(kind: &str, raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => text_of_part_value(kind, &v),
        Err(_) => String::new(),
    }
}

/// `text_of_part` of a part already parsed.
pub fn text_of_part_value(kind: &str, v: &Value) -> String {
    let s = |ptr: &str| v.pointer(ptr).and_then(Value::as_str).unwrap_or("");
    let text = match kind {
        "text" | "reasoning" => s("/text").to_string(),
        "tool" => {
            let mut text = format!("{}\n", s("/tool"));
            for field in ["/state/title", "/state/output", "/state/error"] {
                if let Some(t) = v.pointer(field).and_then(Value::as_str) {
                    text.push_str(t);
                    text.push('\n');
                }
            }
            if let Some(input) = v.pointer("/state/input") {
                strings(input, &mut text);
            }
            text
        }
        "file" => {
            let mut text = s("/filename").to_string();
            if !s("/url").starts_with("data:") {
                text.push('\n');
                text.push_str(s("/url"));
            }
            text
        }
        "patch" => v
            .get("files")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        "subtask" => format!("{}\n{}", s("/description"), s("/prompt")),
        "agent" => s("/name").to_string(),
        _ => {
            let mut text = String::new();
            strings(v, &mut text);
            text
        }
    };
    unmarked(&text).into_owned()
}

/// The tokens of `text`: (start, end) byte offsets of each run of letters
/// and digits.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// `text` around the first of `terms` in it, each matching token between
/// `MARK_START` and `MARK_END`, "…" where it is cut. A prefix term's last
/// piece matches any token it starts.
pub fn snippet(text: &str, terms: &[Term]) -> String {
    let pieces: Vec<(String, bool)> = terms
        .iter()
        .flat_map(|t| {
            let n = t.pieces.len();
            t.pieces
                .iter()
                .enumerate()
                .map(move |(j, p)| (p.to_lowercase(), t.prefix && j + 1 == n))
        })
        .collect();
    let toks = tokens(text);
    let matches = |t: &(usize, usize)| {
        let run = &text[t.0..t.1];
        pieces
            .iter()
            .any(|(p, starts)| crate::archive::words::run_holds(run, p, *starts))
    };
    let mut out = String::new();
    if toks.is_empty() {
        return out;
    }
    // The first match in the middle of the window, the window kept whole
    // near the end, as FTS5 places it; a phrase's words where they stand
    // together, not the first of them alone.
    let first = phrase_at(text, &toks, terms)
        .or_else(|| toks.iter().position(matches))
        .unwrap_or(0);
    let from = first
        .saturating_sub((WINDOW - 1) / 2)
        .min(toks.len().saturating_sub(WINDOW));
    let to = (from + WINDOW).min(toks.len());
    let mut at = if from == 0 {
        0
    } else {
        out.push('…');
        toks[from].0
    };
    for t in &toks[from..to] {
        out.push_str(&text[at..t.0]);
        if matches(t) {
            out.push(MARK_START);
            out.push_str(&text[t.0..t.1]);
            out.push(MARK_END);
        } else {
            out.push_str(&text[t.0..t.1]);
        }
        at = t.1;
    }
    if to < toks.len() {
        out.push('…');
    } else {
        out.push_str(&text[at..]);
    }
    out
}

/// The first token where a phrase of `terms` stands, its pieces one
/// after another.
fn phrase_at(text: &str, toks: &[(usize, usize)], terms: &[Term]) -> Option<usize> {
    terms
        .iter()
        .filter(|t| t.is_phrase())
        .filter_map(|t| {
            let n = t.pieces.len();
            let lower: Vec<String> = t.pieces.iter().map(|p| p.to_lowercase()).collect();
            let piece = |j: usize, tok: &(usize, usize)| {
                let last = t.prefix && j + 1 == n;
                crate::archive::words::run_holds(&text[tok.0..tok.1], &lower[j], last)
            };
            toks.windows(n)
                .position(|w| w.iter().enumerate().all(|(j, tok)| piece(j, tok)))
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::query::Query;

    #[test]
    fn a_phrase_is_shown_where_its_words_stand_together() {
        let text = format!(
            "use super::*; {} then use std::io to read it",
            "filler words here ".repeat(10)
        );
        let phrase = Query::new("\"use std\"").terms();
        let shown = plain(&snippet(&text, &phrase));
        assert!(shown.contains("«use» «std»::io"), "{shown}");
        // The words alone: the first of them.
        let words = Query::new("use std").terms();
        assert!(plain(&snippet(&text, &words)).starts_with("«use» super"));
    }

    fn plain(s: &str) -> String {
        s.replace(MARK_START, "«").replace(MARK_END, "»")
    }

    #[test]
    fn marks_words_and_prefixes_in_a_window() {
        let text = "one two three four five six Billing seven eight nine ten \
                    eleven twelve thirteen fourteen fifteen sixteen seventeen";
        let words = Query::new("billing").terms();
        assert_eq!(
            plain(&snippet(text, &words)),
            "one two three four five six «Billing» seven eight nine ten eleven twelve \
             thirteen fourteen fifteen…"
        );
        let typing = Query {
            prefix: true,
            ..Query::new("bil")
        };
        assert!(plain(&snippet(text, &typing.terms())).contains("«Billing»"));
        assert!(!plain(&snippet(text, &Query::new("bil").terms())).contains('«'));
        let path = Query::new("billing.rs").terms();
        assert_eq!(
            plain(&snippet("see src/billing.rs", &path)),
            "see src/«billing».«rs»"
        );
    }

    #[test]
    fn a_tool_part_says_its_output_and_inputs() {
        let raw = r#"{"type":"tool","tool":"bash","state":{"status":"completed","title":"ls",
            "output":"README.md\n","input":{"command":"ls -la"}}}"#;
        let text = text_of_part("tool", raw);
        assert!(text.starts_with("bash\nls\nREADME.md\n"), "{text:?}");
        assert!(text.contains("ls -la"));
        assert_eq!(text_of_part("text", "not json"), "");
    }
}
