//! A block's words made here, as PostgreSQL's parser and `simple` would
//! make them, where that is certain: PostgreSQL's parser reads about
//! 8 MB of text a second, and a block's document was most of what an
//! import asked of the server. The pieces of a block's document (`document`
//! in `blocks_search`) are cut at spaces and at the characters paths and
//! tags are made of; within a piece of ASCII, the parser ends a word at
//! every character but a letter or a digit, but for two: `+` and `~` can
//! begin one (`+5`, `~a`). And a run of letters and digits is one word,
//! in small letters, but where a digit, an `e` and a digit make it a
//! number (`7056e656` is `7056e656`, `1e5x` is `1e5` and `x`). What this
//! cannot be sure of goes to the parser as it is: pieces past ASCII,
//! pieces with `+` or `~`, such numbers, and words too long for a
//! `tsvector`. Before the first write, the server is asked whether it
//! makes the same words of a probe (a database whose `lower` is not
//! ASCII's, in a Turkish locale, does not), and if it does not, all of it
//! goes to the parser.

use tokio_postgres::Client;

/// The longest word a `tsvector` holds (PostgreSQL's `MAXSTRLEN`): the
/// parser leaves longer ones out, and so do its words made here.
const LONGEST: usize = 2047;

/// The words made here (each once) and the text left for the parser.
#[derive(Debug, Default, PartialEq)]
pub struct Split {
    /// The document, in small letters: the words are cut from it.
    text: String,
    /// Where each word is in `text`, in the server's order (its bytes'),
    /// each once: the server sorts them again, and finds them sorted.
    spans: Vec<(u32, u32)>,
    pub rest: String,
}

impl Split {
    /// The words made here, each once, sorted.
    pub fn words(&self) -> Vec<&str> {
        self.spans
            .iter()
            .map(|&(start, end)| &self.text[start as usize..end as usize])
            .collect()
    }
}

/// `document`'s words: those certain made here, the rest for the parser.
/// A word is where it lies in the document, not a string of its own: a
/// block's thousands of words cost no allocation each, and are sorted by
/// their first eight bytes, compared as one number, before the rest.
pub fn words_of(mut document: String) -> Split {
    // A word made here is in small letters; what goes to the parser is
    // folded by it the same way.
    document.make_ascii_lowercase();
    let mut rest = String::new();
    let mut keyed: Vec<(u64, u32, u32)> = Vec::new();
    let base = document.as_ptr() as usize;
    for piece in document.split(' ').filter(|p| !p.is_empty()) {
        if !piece.is_ascii() || piece.contains(['+', '~']) {
            to_parser(piece, &mut rest);
            continue;
        }
        for run in piece.split(|c: char| !c.is_ascii_alphanumeric()) {
            if run.is_empty() {
                continue;
            }
            if run.len() > LONGEST || a_number_with_exponent(run) {
                to_parser(run, &mut rest);
            } else {
                let start = run.as_ptr() as usize - base;
                keyed.push((leading(run), start as u32, (start + run.len()) as u32));
            }
        }
    }
    let word =
        |&(_, start, end): &(u64, u32, u32)| &document.as_bytes()[start as usize..end as usize];
    // Pieces are each once already (`Distinct`); runs cut from them may
    // meet again.
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| word(a).cmp(word(b))));
    keyed.dedup_by(|a, b| a.0 == b.0 && word(a) == word(b));
    Split {
        spans: keyed.iter().map(|&(_, start, end)| (start, end)).collect(),
        text: document,
        rest,
    }
}

/// A word's first eight bytes as one number, in the order of its bytes.
fn leading(word: &str) -> u64 {
    let mut first = [0u8; 8];
    let n = word.len().min(8);
    first[..n].copy_from_slice(&word.as_bytes()[..n]);
    u64::from_be_bytes(first)
}

/// `text` after `rest`, spaced.
fn to_parser(text: &str, rest: &mut String) {
    if !rest.is_empty() {
        rest.push(' ');
    }
    rest.push_str(text);
}

/// Whether a digit, an `e` and a digit stand together in `run`.
fn a_number_with_exponent(run: &str) -> bool {
    run.as_bytes()
        .windows(3)
        .any(|w| w[0].is_ascii_digit() && matches!(w[1], b'e' | b'E') && w[2].is_ascii_digit())
}

/// A text whose words the server must make as `words_of` does: every letter
/// in both cases (a Turkish `lower` makes `I` a dotless `ı`), digits and
/// letters together, and what goes to the parser beside.
const PROBE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz Import IMPORT \
     0n 0x1F a1b2c3 123abc 2024 0123 sha256 f(x)=y+1 [a,b] 'quoted' \"dq\" 7056e656ab 1e5x ~a \
     Ünïcödé ДОМ 東京";

/// Whether the server makes of `PROBE` the words `words_of` makes of it.
pub async fn server_agrees(client: &Client) -> bool {
    let s = words_of(PROBE.to_string());
    let row = client
        .query_one(
            "SELECT strip(to_tsvector('simple', $1::text))
                  = strip(array_to_tsvector($2::text[]) || to_tsvector('simple', $3::text))",
            &[&PROBE, &s.words(), &s.rest],
        )
        .await;
    match row {
        Ok(row) => row.get::<_, bool>(0),
        Err(e) => {
            tracing::info!("archive: block words all left to the server's parser: {e}");
            false
        }
    }
}

/// A block's `tsvector`: its words made here (`$words`, a `text[]`) and the
/// parser's of the rest (`$7`), without positions. Only the parser's have
/// any: they are stripped before the two are joined, not the whole after.
pub(in crate::archive) fn block_tsvector(words: usize) -> String {
    format!("array_to_tsvector(${words}::text[]) || strip(to_tsvector('simple', $7::text))")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_ascii_letters_and_digits_are_made_here_the_rest_is_parsed() {
        let s = words_of("Fix fix config,TOML x+1 ~home Ünï 7056e656 a1e5 ab12 (call) e5".into());
        assert_eq!(s.words(), ["ab12", "call", "config", "e5", "fix", "toml"]);
        assert_eq!(s.rest, "x+1 ~home Ünï 7056e656 a1e5");
    }

    /// Sorted by their first eight bytes first, the words still come in
    /// the order of all their bytes, each once, however long the bytes
    /// they share.
    #[test]
    fn words_come_once_in_the_order_of_their_bytes() {
        let words = [
            "abcdefghij",
            "abcdefgh",
            "abcdefghi",
            "abcdefgh",
            "abcdefgg",
            "abcdefghij",
            "b",
            "a",
            "abcdefgha",
            "zz",
            "a9",
            "a0",
            "abcdefghij0",
            "ab",
        ];
        let s = words_of(words.join(" "));
        let mut expected: Vec<&str> = words.to_vec();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(s.words(), expected);
        assert_eq!(s.rest, "");
    }

    #[test]
    fn a_word_too_long_for_a_tsvector_is_left_to_the_parser() {
        let long = "a".repeat(LONGEST + 1);
        let s = words_of(format!("short {long}"));
        assert_eq!(s.words(), ["short"]);
        assert_eq!(s.rest, long);
    }
}
