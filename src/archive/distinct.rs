//! Texts of words each once, for the engines' position-less indexes: a
//! document that keeps only which words it holds is as well made of each
//! word once, and the engine's tokenizer then reads a fraction of the text.
//! Each engine cuts the text only where its own tokenizer would
//! (`sqlite::document`, `postgres::blocks_search`).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};

/// Pieces of text, spaced, each once: pieces equal but for the case of
/// their ASCII letters are one (both engines fold it).
#[derive(Default)]
pub struct Distinct {
    out: Vec<u8>,
    /// A piece's hash → where its first copy is in `out`.
    seen: HashMap<u64, (u32, u32), BuildHasherDefault<AsIs>>,
}

impl Distinct {
    /// Add `piece` (whole characters) unless it is in already; whether
    /// it was added.
    pub fn push(&mut self, piece: &[u8]) -> bool {
        self.push_hashed(piece, folded_hash(piece).0)
    }

    /// `push` of a piece whose `folded_hash` is `hash`.
    fn push_hashed(&mut self, piece: &[u8], hash: u64) -> bool {
        match self.seen.entry(hash) {
            Entry::Occupied(o) => {
                let (s, n) = *o.get();
                // What is kept is folded already.
                if self.out[s as usize..(s + n) as usize].eq_ignore_ascii_case(piece) {
                    return false;
                }
                // Another piece of the same hash stays where it is: a
                // word twice costs nothing, one lost would be a miss.
                Self::append(&mut self.out, piece);
            }
            Entry::Vacant(v) => {
                v.insert(Self::append(&mut self.out, piece));
            }
        }
        true
    }

    /// `piece` after the others, spaced, its ASCII letters in small
    /// case; where it is.
    fn append(out: &mut Vec<u8>, piece: &[u8]) -> (u32, u32) {
        if !out.is_empty() {
            out.push(b' ');
        }
        let first = out.len();
        out.extend_from_slice(piece);
        out[first..].make_ascii_lowercase();
        (first as u32, piece.len() as u32)
    }

    /// The pieces so far, spaced; then empty again for another text, its
    /// table kept.
    pub fn take_text(&mut self) -> String {
        // A table a long text grew is let go: clearing it would cost
        // each short text after it as much.
        if self.seen.capacity() > 1 << 14 {
            self.seen = HashMap::default();
        } else {
            self.seen.clear();
        }
        // Whole pieces of valid UTF-8, each cut at an ASCII byte.
        String::from_utf8(std::mem::take(&mut self.out)).unwrap_or_default()
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The pieces, spaced.
    pub fn text(mut self) -> String {
        self.take_text()
    }

    /// Each piece of `text` between bytes that `cut` says part words
    /// (ASCII bytes only: a character past ASCII is never cut).
    pub fn push_pieces(&mut self, text: &str, cut: impl Fn(u8) -> bool) {
        for piece in pieces(text, cut) {
            self.push(piece);
        }
    }
}

/// A position-less index's document of `text`: its pieces (cut where
/// `cut` says, ASCII letters in small case) each once, spaced, then the
/// more words of its pieces (`words::push_more_words`) each once. Those
/// are looked for once per piece as it is written, not as it is folded:
/// `parsejson` has none, `parseJson` has `parse` and `json`. A run of
/// letters and digits never spans a cut (each engine's cut is at
/// characters that are neither), so the more words of its pieces are
/// those of the whole text.
pub fn document(text: &str, cut: impl Fn(u8) -> bool + Copy) -> String {
    thread_local! {
        // Its table grown once, not for each part.
        static PIECES: std::cell::RefCell<Distinct> = std::cell::RefCell::default();
    }
    PIECES.with_borrow_mut(|d| document_in(d, text, cut))
}

fn document_in(d: &mut Distinct, text: &str, cut: impl Fn(u8) -> bool + Copy) -> String {
    use crate::archive::words::push_more_words;
    let mut more = String::new();
    let mut looked: std::collections::HashSet<&[u8], BuildHasherDefault<Quick>> =
        std::collections::HashSet::default();
    for piece in pieces(text, cut) {
        let (hash, may_have_more_words) = folded_hash(piece);
        d.push_hashed(piece, hash);
        if may_have_more_words && looked.insert(piece) {
            // Whole characters, cut at ASCII bytes.
            push_more_words(std::str::from_utf8(piece).unwrap_or_default(), &mut more);
        }
    }
    d.push_pieces(&more, cut);
    d.take_text()
}

/// The pieces of `text` between bytes that `cut` says part words (ASCII
/// bytes only: a character past ASCII is never cut), each whole
/// characters. Every byte of every text indexed passes here: which bytes
/// a piece is made of is looked up sixty-four at a time into a mask, and
/// the pieces are read off its bits, not found a byte at a time.
pub fn pieces(text: &str, cut: impl Fn(u8) -> bool) -> impl Iterator<Item = &[u8]> {
    let keeps: [bool; 256] = std::array::from_fn(|b| b >= 0x80 || !cut(b as u8));
    let bytes = text.as_bytes();
    // The mask of the 64 bytes from `base` (bits past the end clear).
    let mask_at = move |base: usize| -> u64 {
        let end = bytes.len().min(base + 64);
        bytes[base..end]
            .iter()
            .enumerate()
            .fold(0u64, |m, (i, &b)| m | (u64::from(keeps[b as usize]) << i))
    };
    let mut base = 0;
    let mut mask = if bytes.is_empty() { 0 } else { mask_at(0) };
    let mut at = 0;
    // The next byte from `at` whose bit in the masks is `bit`, moving
    // `base` and `mask` along; `bytes.len()` if none is.
    let mut next = move |at: usize, bit: bool| -> usize {
        let mut at = at;
        loop {
            if at >= base + 64 {
                base += 64;
                if base >= bytes.len() {
                    return bytes.len();
                }
                mask = mask_at(base);
            }
            let m = if bit { mask } else { !mask } >> (at - base);
            if m != 0 {
                return (at + m.trailing_zeros() as usize).min(bytes.len());
            }
            at = base + 64;
        }
    };
    std::iter::from_fn(move || {
        let start = next(at, true);
        if start >= bytes.len() {
            return None;
        }
        at = next(start, false);
        Some(&bytes[start..at])
    })
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// Of eight bytes, the high bit of each that is an ASCII capital.
fn capitals(w: u64) -> u64 {
    let low = w & !HIGH;
    // A byte's high bit: set from 'A' on, and past 'Z'.
    let from_a = low + ONES * (0x80 - b'A' as u64);
    let past_z = low + ONES * (0x80 - b'Z' as u64 - 1);
    from_a & !past_z & !w & HIGH
}

/// A piece's hash as its ASCII letters in small case, made without
/// writing it folded first, and whether `words::push_more_words` may find
/// a word in it (a capital past its first letter, or a byte past ASCII:
/// most words have neither), from the same reads. Eight bytes at a time;
/// for this process only, never stored.
fn folded_hash(piece: &[u8]) -> (u64, bool) {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (piece.len() as u64).wrapping_mul(K);
    // Capitals and bytes past ASCII; a capital first is no sign.
    let mut signs = 0u64;
    let mut first = 0x80u64;
    let mut words = piece.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        let caps = capitals(w);
        signs |= (caps & !first) | (w & HIGH);
        first = 0;
        h = (h ^ (w | caps >> 2)).wrapping_mul(K).rotate_left(29);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let w = if piece.len() >= 8 {
            // The last eight bytes, those hashed already shifted out.
            u64::from_le_bytes(piece[piece.len() - 8..].try_into().unwrap_or_default())
                >> (8 * (8 - rest.len()))
        } else {
            rest.iter()
                .rev()
                .fold(0u64, |w, &b| (w << 8) | u64::from(b))
        };
        let caps = capitals(w);
        signs |= (caps & !first) | (w & HIGH);
        h = (h ^ (w | caps >> 2)).wrapping_mul(K);
    }
    (h ^ (h >> 31), signs != 0)
}

/// Pieces hashed eight bytes at a time (`encode::quick_hash`), not by
/// SipHash: a table of a text's own pieces needs no defence.
#[derive(Default)]
struct Quick(u64);

impl Hasher for Quick {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.rotate_left(5) ^ crate::archive::encode::quick_hash(bytes);
    }
}

/// The pieces' hashes are already hashes.
#[derive(Default)]
struct AsIs(u64);

impl Hasher for AsIs {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces as a byte at a time finds them: the mask's answer must be
    /// this one, across its 64-byte blocks and at the text's end.
    fn pieces_byte_by_byte(text: &str, cut: impl Fn(u8) -> bool) -> Vec<&[u8]> {
        text.as_bytes()
            .split(|&b| b.is_ascii() && cut(b))
            .filter(|p| !p.is_empty())
            .collect()
    }

    #[test]
    fn pieces_are_found_across_the_masks_blocks() {
        let cut = |b: u8| !b.is_ascii_alphanumeric();
        let mut texts = vec![String::new(), " ".into(), "a".into(), "é".into()];
        // Pieces and gaps of every length around the 64-byte blocks.
        for len in [1, 7, 8, 31, 63, 64, 65, 127, 128, 129, 200] {
            for gap in [1, 2, 63, 64, 65] {
                let word = "aB1ü".repeat(len).chars().take(len).collect::<String>();
                let space = " .".repeat(gap).chars().take(gap).collect::<String>();
                texts.push(format!("{word}{space}{word}{space}{word}"));
                texts.push(format!("{space}{word}{space}{word}"));
            }
        }
        for text in &texts {
            let found: Vec<&[u8]> = pieces(text, cut).collect();
            assert_eq!(found, pieces_byte_by_byte(text, cut), "{text:?}");
        }
    }

    /// Whether `words::push_more_words` may find a word in `piece`, a byte
    /// at a time: a capital past its first letter, or a byte past ASCII.
    fn may_have_more_words_byte_by_byte(piece: &[u8]) -> bool {
        piece.iter().skip(1).any(u8::is_ascii_uppercase) || !piece.is_ascii()
    }

    #[test]
    fn capitals_are_told_at_every_byte_and_place() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let w = u64::from(b) << (8 * at) | 0x6161_6161_6161_6161 & !(0xff << (8 * at));
                let expected = if b.is_ascii_uppercase() {
                    0x80 << (8 * at)
                } else {
                    0
                };
                assert_eq!(capitals(w), expected, "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn a_piece_hashes_as_its_folded_self_and_says_when_it_may_have_more_words() {
        let words = [
            "",
            "a",
            "A",
            "ab",
            "Ab",
            "aB",
            "abc",
            "parseJson",
            "HTTPServer",
            "httpserver",
            "Error",
            "ERROR",
            "café",
            "Café",
            "東京",
            "x東",
            "Supercalifragilistic",
            "SUPERCALIFRAGILISTIC",
            "supercalifragilistiC",
            "eightchr",
            "Eightchr",
            "eightchR",
            "ninechars",
            "nineChars",
            "ZZ@[`{",
            "0123456789",
        ];
        for word in words {
            let (hash, more) = folded_hash(word.as_bytes());
            let folded = word.to_ascii_lowercase();
            assert_eq!(hash, folded_hash(folded.as_bytes()).0, "{word}");
            assert_eq!(
                more,
                may_have_more_words_byte_by_byte(word.as_bytes()),
                "{word}"
            );
        }
        // Pieces that differ but for length or a byte hash apart.
        let hashes: std::collections::HashSet<u64> = words
            .iter()
            .map(|w| folded_hash(w.to_ascii_lowercase().as_bytes()).0)
            .collect();
        let distinct: std::collections::HashSet<String> =
            words.iter().map(|w| w.to_ascii_lowercase()).collect();
        assert_eq!(hashes.len(), distinct.len());
    }

    #[test]
    fn thousands_of_distinct_words_are_each_kept_once() {
        let mut d = Distinct::default();
        let text: String = (0..5_000).map(|n| format!("w{n} W{n} ")).collect();
        d.push_pieces(&text, |b| b == b' ');
        let text = d.text();
        let mut seen = std::collections::HashSet::new();
        for piece in text.split(' ') {
            assert!(seen.insert(piece.to_string()), "{piece} twice");
        }
        assert_eq!(seen.len(), 5_000);
    }

    #[test]
    fn a_table_used_again_starts_empty_and_long_pieces_are_kept_once() {
        let mut d = Distinct::default();
        let long = "Supercalifragilistic_expialidocious_and_then_some";
        d.push_pieces(&format!("a b {long} A {}", long.to_uppercase()), |b| {
            b == b' '
        });
        assert_eq!(d.take_text(), format!("a b {}", long.to_lowercase()));
        d.push_pieces("b c B", |b| b == b' ');
        assert_eq!(d.take_text(), "b c");
    }

    #[test]
    fn characters_past_ascii_are_never_cut() {
        let mut d = Distinct::default();
        d.push_pieces("东京 Ünïcode·dot", |b| !b.is_ascii_alphanumeric());
        assert_eq!(d.text(), "东京 Ünïcode·dot");
    }
}
