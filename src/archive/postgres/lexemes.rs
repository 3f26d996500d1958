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
    pub words: Vec<String>,
    pub rest: String,
}

/// `document`'s words: those certain made here, the rest for the parser.
pub fn split(document: &str) -> Split {
    let mut out = Split::default();
    for piece in document.split(' ').filter(|p| !p.is_empty()) {
        if !piece.is_ascii() || piece.contains(['+', '~']) {
            to_parser(piece, &mut out.rest);
            continue;
        }
        for run in piece.split(|c: char| !c.is_ascii_alphanumeric()) {
            if run.is_empty() {
                continue;
            }
            if run.len() > LONGEST || a_number_with_exponent(run) {
                to_parser(run, &mut out.rest);
            } else {
                out.words.push(run.to_ascii_lowercase());
            }
        }
    }
    // Pieces are each once already (`Distinct`); runs cut from them may
    // meet again.
    out.words.sort_unstable();
    out.words.dedup();
    out
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

/// A text whose words the server must make as `split` does: every letter
/// in both cases (a Turkish `lower` makes `I` a dotless `ı`), digits and
/// letters together, and what goes to the parser beside.
const PROBE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz Import IMPORT \
     0n 0x1F a1b2c3 123abc 2024 0123 sha256 f(x)=y+1 [a,b] 'quoted' \"dq\" 7056e656ab 1e5x ~a \
     Ünïcödé ДОМ 東京";

/// Whether the server makes of `PROBE` the words `split` makes of it.
pub async fn server_agrees(client: &Client) -> bool {
    let s = split(PROBE);
    let row = client
        .query_one(
            "SELECT strip(to_tsvector('simple', $1::text))
                  = strip(array_to_tsvector($2::text[]) || to_tsvector('simple', $3::text))",
            &[&PROBE, &s.words, &s.rest],
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
        let s = split("Fix fix config,TOML x+1 ~home Ünï 7056e656 a1e5 ab12 (call) e5");
        assert_eq!(
            s.words,
            ["ab12", "call", "config", "e5", "fix", "toml"].map(String::from)
        );
        assert_eq!(s.rest, "x+1 ~home Ünï 7056e656 a1e5");
    }

    #[test]
    fn a_word_too_long_for_a_tsvector_is_left_to_the_parser() {
        let long = "a".repeat(LONGEST + 1);
        let s = split(&format!("short {long}"));
        assert_eq!(s.words, ["short"]);
        assert_eq!(s.rest, long);
    }
}
