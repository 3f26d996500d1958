//! The text SQLite's word index is given for a document: each of its
//! words once. The index keeps no positions and no counts (`detail =
//! none`): what it stores of a document is the set of its words, so a
//! word said a thousand times in a tool's output need be tokenized and
//! hashed by FTS5 only once. On real sessions this is half the text or
//! less, and FTS5's work is most of an import's.
//!
//! The text is cut only where `unicode61` itself cuts: at every ASCII
//! character that is not a letter or a digit (it keeps no `tokenchars`).
//! Pieces keep their other characters as they are, so each of the
//! tokenizer's words lies whole in one piece, and the pieces, spaced,
//! give it the same words. A piece is told from another by its ASCII
//! letters folded (the tokenizer folds them too); two that differ only
//! past ASCII are both kept, which the index takes as one.

use std::borrow::Cow;

use crate::archive::query::indexable;

/// Below this many bytes a text is given as it is: too few repeats to
/// pay for the pass.
const WORTH_IT: usize = 256;

/// The document of `text`: `indexable`'s words, each once.
pub fn document(text: &str) -> Cow<'_, str> {
    if text.len() < WORTH_IT {
        return indexable(text);
    }
    // The search marks (`query::unmarked`) are ASCII bytes it cuts at.
    crate::archive::distinct::document(text, cut).into()
}

/// Where the index cuts words: at every ASCII byte but letters and digits.
fn cut(b: u8) -> bool {
    !b.is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each (term, document) pair an FTS5 table of these texts holds.
    fn words_of(texts: &[String]) -> Vec<(String, i64)> {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body, content = '', contentless_delete = 1,
                 tokenize = 'unicode61', prefix = '3', detail = none);
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
        )
        .unwrap();
        for (i, text) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO t (rowid, body) VALUES (?1, ?2)",
                rusqlite::params![i as i64, text],
            )
            .unwrap();
        }
        let mut stmt = conn
            .prepare("SELECT term, doc FROM v ORDER BY term, doc")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn the_index_holds_the_same_words_as_of_the_whole_text() {
        let repeated = "fn main() { let x = 1; } // main main MAIN Main\n".repeat(20);
        let cases = [
            repeated.as_str(),
            "Doesn't doesn't DOESN'T I'll user's won't pre-commit config.toml v1.18.33 \
             snake_case_name camelCaseName HTTPServer parseJSON ~/src/billing/mod.rs \
             https://example.com/a?b=c#d e-mail@host.example 0x1F 3.14159 1e-9 ",
            "Café CAFÉ café cafe naïve Ærøskøbing ÇA ça 東京都庁 東京 日本語のテキスト \
             Привет ПРИВЕТ привет Ωmega ωmega straße STRASSE ﬁle ＡＢＣ ａｂｃ",
            "tab\tseparated\u{0}nul\u{1b}[31mred\u{1b}[0m \u{200b}zero\u{200b}width \
             emoji🙂face a\u{301}ccent e\u{308} ‘quoted’ «guillemets» — dash – dash",
            // Folded, these are words already given: their parts are not.
            "httpserver parsejson cafe then HTTPServer parseJSON café",
            "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math 𝟙𝟚𝟛 private\u{e000}use \u{10ffff}end ½ ² ⅷ ٣ ४",
        ];
        let whole: Vec<String> = cases
            .iter()
            .map(|c| {
                let mut long = c.to_string();
                // Past `WORTH_IT`, and every piece said again in another case.
                while long.len() < 2 * WORTH_IT {
                    long.push(' ');
                    long.push_str(&c.to_uppercase());
                }
                long
            })
            .collect();
        let as_given: Vec<String> = whole.iter().map(|t| indexable(t).into_owned()).collect();
        let documents: Vec<String> = whole.iter().map(|t| document(t).into_owned()).collect();
        for (given, doc) in as_given.iter().zip(&documents) {
            assert!(doc.len() < given.len(), "{doc:?} is not shorter");
        }
        assert_eq!(words_of(&as_given), words_of(&documents));
    }

    #[test]
    fn a_word_said_many_times_is_given_once_in_small_case() {
        let text = "Error: timeout. ERROR again; error at src/main.rs:12 ".repeat(30);
        assert_eq!(document(&text), "error timeout again at src main rs 12");
    }

    #[test]
    fn the_search_marks_part_words_as_they_do_when_taken_out() {
        use crate::archive::query::{MARK_END, MARK_START, unmarked};
        let text = format!("{MARK_START}found{MARK_END}word and{MARK_START}more ").repeat(40);
        assert_eq!(document(&text), document(&unmarked(&text)));
        assert_eq!(document(&text), "found word and more");
    }

    #[test]
    fn a_short_text_is_given_as_it_is() {
        assert_eq!(document("Fix the bug"), "Fix the bug");
    }
}
