//! How the archive splits text into words: one rule for what is indexed
//! and what is searched, on both engines. Both engines' own splitting
//! gives the runs of letters and digits, case folded (SQLite's `unicode61`;
//! PostgreSQL's parser once `tsvector_sql` made paths' punctuation spaces):
//! `doesn't` is `doesn` then `t`, `config.toml` is `config` then `toml`,
//! `v1.18.33` is `v1 18 33`, a snake_case name its parts. What they do
//! not give, ocview adds after the text as more words (`with_more_words`):
//!
//! - the parts of a camelCase or PascalCase word (`parseJson` is also
//!   `parse json`, `HTTPServer` also `http server`), so a part finds it;
//! - each CJK character of a run on its own (a Chinese or Japanese
//!   sentence has no spaces, and a run would be one word): a query of a
//!   few characters is the phrase of them (`pieces`);
//! - a word with accents also without them (`café` is also `cafe`), which
//!   SQLite folds itself and PostgreSQL's `simple` does not.
//!
//! A query's words are split the same way (`pieces`).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// `text` and, after it, the words neither engine finds in it by itself.
pub fn with_more_words(text: &str) -> std::borrow::Cow<'_, str> {
    let mut more = String::new();
    push_more_words(text, &mut more);
    if more.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 1 + more.len());
    out.push_str(text);
    out.push('\n');
    out.push_str(&more);
    out.into()
}

/// The words of `text` neither engine finds in it by itself, spaced,
/// after `out`.
pub fn push_more_words(text: &str, out: &mut String) {
    for run in runs(text) {
        more_words(run, out);
    }
}

/// The runs of letters and digits of `text`. Read a byte at a time where
/// the text is ASCII (most of it): this pass goes over every text indexed.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = loop {
            let (word, len) = char_at(text, at)?;
            if word {
                break at;
            }
            at += len;
        };
        while let Some((true, len)) = char_at(text, at) {
            at += len;
        }
        Some(&text[start..at])
    })
}

/// Whether the character at byte `at` (a character's first) is a letter or
/// a digit, and its length; `None` past the end.
fn char_at(text: &str, at: usize) -> Option<(bool, usize)> {
    let b = *text.as_bytes().get(at)?;
    if b.is_ascii() {
        return Some((b.is_ascii_alphanumeric(), 1));
    }
    let c = text[at..].chars().next()?;
    Some((c.is_alphanumeric(), c.len_utf8()))
}

/// The words of one run the engines do not find in it, after `out`.
fn more_words(run: &str, out: &mut String) {
    if run.is_ascii() {
        // No capital past the first letter (most words): nothing to add.
        if !run.bytes().skip(1).any(|b| b.is_ascii_uppercase()) {
            return;
        }
        let parts = camel_parts(run);
        if parts.len() > 1 {
            push_words(out, parts);
        }
        return;
    }
    if run.chars().any(is_cjk) {
        push_words(out, cjk_pieces(run));
        return;
    }
    let plain: String = run.nfd().filter(|c| !is_combining_mark(*c)).collect();
    if plain != run {
        push_words(out, [plain.as_str()]);
    }
    let parts = camel_parts(run);
    if parts.len() > 1 {
        push_words(out, parts);
    }
}

fn push_words<'a>(out: &mut String, words: impl IntoIterator<Item = &'a str>) {
    for w in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
}

/// A run's camelCase parts: a new part at a capital after a small letter
/// or a digit (`parseJson`), and at the last capital of a run of them
/// before a small letter (`HTTPServer`). One part when there is none.
fn camel_parts(run: &str) -> Vec<&str> {
    // Most words have no capital past their first letter: one part.
    if !run.chars().skip(1).any(char::is_uppercase) {
        return vec![run];
    }
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_small = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_small));
        if boundary {
            parts.push(&run[start..at]);
            start = at;
        }
    }
    parts.push(&run[start..]);
    parts
}

/// Whether `c` is written without spaces between words: Chinese, Japanese
/// kana and Korean syllables.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // hiragana, katakana
        | 0x31F0..=0x31FF   // katakana extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0x20000..=0x2FA1F // CJK extensions B to F, compatibility supplement
    )
}

/// A run with CJK characters as its pieces: each CJK character alone, the
/// letters and digits between them as one piece.
fn cjk_pieces(run: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in run.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                out.push(&run[s..at]);
            }
            out.push(&run[at..at + c.len_utf8()]);
        } else if start.is_none() {
            start = Some(at);
        }
    }
    if let Some(s) = start {
        out.push(&run[s..]);
    }
    out
}

/// The pieces of a query's word or phrase, in order, as the index holds
/// them: its runs of letters and digits, a run with CJK characters split
/// as `with_more_words` split it.
pub fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs(text) {
        if run.chars().any(is_cjk) {
            out.extend(cjk_pieces(run).into_iter().map(str::to_string));
        } else {
            out.push(run.to_string());
        }
    }
    out
}

/// Whether a run of letters and digits of a text holds `piece` (a query's,
/// lowercased) as the index holds its words: the run itself, without its
/// accents, or one of its camelCase or CJK parts; with `prefix`, as the
/// start of one of them.
pub fn run_holds(run: &str, piece: &str, prefix: bool) -> bool {
    let is = |word: &str| {
        let word = word.to_lowercase();
        if prefix {
            word.starts_with(piece)
        } else {
            word == piece
        }
    };
    if is(run) {
        return true;
    }
    if run.is_ascii() {
        return camel_parts(run).into_iter().any(is);
    }
    let plain: String = run.nfd().filter(|c| !is_combining_mark(*c)).collect();
    is(&plain) || cjk_pieces(run).into_iter().any(is) || camel_parts(run).into_iter().any(is)
}

/// Whether `text`, as the index holds its words (`with_more_words`), has a
/// query's `pieces` as consecutive words; with `prefix`, the last one
/// starting a word. SQLite's index keeps no positions (they were most of
/// its size): a phrase is found there as all its pieces, then checked
/// here against the text, as FTS5 would have checked it.
pub fn holds_phrase(text: &str, pieces: &[String], prefix: bool) -> bool {
    let want: Vec<String> = pieces.iter().map(|p| fold(p)).collect();
    if want.is_empty() {
        return true;
    }
    // Most hits read are candidates the phrase is not in: no word of
    // theirs is copied to be compared.
    let words: Vec<&str> = runs(text).collect();
    let more = with_more_words(text);
    let appended: Vec<&str> = match &more {
        std::borrow::Cow::Borrowed(_) => Vec::new(),
        std::borrow::Cow::Owned(all) => runs(&all[text.len()..]).collect(),
    };
    let all: Vec<&str> = words.into_iter().chain(appended).collect();
    let n = want.len();
    all.windows(n).any(|w| {
        w.iter()
            .zip(&want)
            .enumerate()
            .all(|(j, (word, piece))| folded_is(word, piece, prefix && j + 1 == n))
    })
}

/// Whether `word`, folded as the index folds it, is `piece` (or starts
/// with it).
fn folded_is(word: &str, piece: &str, starts: bool) -> bool {
    if word.is_ascii() {
        let word = word.as_bytes();
        let piece = piece.as_bytes();
        return if starts {
            word.len() >= piece.len() && word[..piece.len()].eq_ignore_ascii_case(piece)
        } else {
            word.eq_ignore_ascii_case(piece)
        };
    }
    let word = fold(word);
    if starts {
        word.starts_with(piece)
    } else {
        word == piece
    }
}

/// A word as the index compares it: lowercase, without accents.
fn fold(word: &str) -> String {
    if word.is_ascii() {
        word.to_ascii_lowercase()
    } else {
        word.nfd()
            .filter(|c| !is_combining_mark(*c))
            .collect::<String>()
            .to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn more(text: &str) -> String {
        with_more_words(text)
            .strip_prefix(text)
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    #[test]
    fn the_words_the_engines_miss_come_after_the_text() {
        assert_eq!(
            more("call parseJson on HTTPServer"),
            "parse Json HTTP Server"
        );
        assert_eq!(more("getX2Value"), "get X2 Value");
        assert_eq!(more("snake_case plain words v1.18.33"), "");
        assert_eq!(more("数据库连接失败"), "数 据 库 连 接 失 败");
        assert_eq!(more("Rust语言"), "Rust 语 言");
        assert_eq!(more("un café crème"), "cafe creme");
        assert_eq!(more("データベース"), "デ ー タ ベ ー ス");
        assert!(matches!(
            with_more_words("plain text"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_query_is_split_as_the_index_is() {
        assert_eq!(pieces("doesn't"), ["doesn", "t"]);
        assert_eq!(pieces("v1.18.33"), ["v1", "18", "33"]);
        assert_eq!(pieces("连接失败"), ["连", "接", "失", "败"]);
        assert_eq!(pieces("parseJson"), ["parseJson"]);
    }

    #[test]
    fn a_phrase_is_its_pieces_in_a_row_as_the_index_holds_them() {
        let holds =
            |text: &str, phrase: &str, prefix: bool| holds_phrase(text, &pieces(phrase), prefix);
        assert!(holds("the unit test passed", "unit test", false));
        assert!(!holds("a test of the unit", "unit test", false));
        assert!(holds("Unit tests ran", "unit tes", true));
        assert!(!holds("Unit tests ran", "unit tes", false));
        assert!(holds("it doesn\u{2019}t work", "doesn't", false));
        assert!(!holds("t doesn", "doesn't", false));
        assert!(holds("see src/Config.toml", "config.toml", false));
        assert!(holds("call parseJson(x)", "parse json", false));
        assert!(holds("une Crème Brûlée", "creme brulee", false));
        assert!(holds("日本語の本", "日本", false));
        assert!(!holds("本日", "日本", false));
    }
}
